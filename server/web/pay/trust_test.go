package pay_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/pay"
	"github.com/payhook/payhook/server/web/webtest"
)

// newEnvOn is newEnv on dialect d.
func newEnvOn(t *testing.T, d store.Dialect) *env {
	t.Helper()
	in := servertest.Start(t, d, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(notifyURL, servertest.A)
		c.API.PagePollInterval = 200 * time.Millisecond
	})
	return &env{in: in}
}

// brand sets project A's branding.
func (e *env) brand(t *testing.T, b project.Branding) {
	t.Helper()
	if err := project.SetBranding(context.Background(), e.in.Server.DB().Client, e.in.ProjectA, b, clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// fetchLang fetches u with an Accept-Language header and cookies.
func fetchLang(t *testing.T, u, acceptLanguage string, cookies ...*http.Cookie) webtest.Page {
	t.Helper()
	return requestLang(t, http.MethodGet, u, nil, acceptLanguage, cookies...)
}

// requestLang makes a request (a form post when form is not nil) with an
// Accept-Language and cookies, following no redirect.
func requestLang(t *testing.T, method, u string, form url.Values, acceptLanguage string, cookies ...*http.Cookie) webtest.Page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	resp, err := webtest.NoRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return webtest.Page{Code: resp.StatusCode, Header: resp.Header, Body: b.String(), URL: u}
}

// TestDetectedFromMempool: a payment broadcast but not yet in a block
// shows as detected, on the page and in status.json, on both databases;
// no webhook is stored for it (the spec reports payments from their
// block); once mined the page goes on as before, to paid.
func TestDetectedFromMempool(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnvOn(t, d)
			ctx := context.Background()
			r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25", "currency", "USD")
			pageURL := r["payment_url"].(string)
			a := e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "ltc")
			if st := status(t, pageURL+"status.json?coin=ltc"); st["status"] != "waiting" {
				t.Fatalf("before paying: %v", st)
			}
			e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": a["address_in"], "value_coin": a["value_coin"]})
			st := status(t, pageURL+"status.json?coin=ltc")
			if st["status"] != "detected" || st["text"] != "Payment detected, waiting for confirmation." || st["final"] != false {
				t.Fatalf("in the mempool: %v", st)
			}
			webtest.Fetch(t, http.MethodGet, pageURL+"?coin=ltc", nil).Want(t, 200, `status-detected`, "Payment detected, waiting for confirmation.")
			fetchLang(t, pageURL+"status.json?coin=ltc", "de").Want(t, 200, "Zahlung erkannt, warte auf Bestätigung.")
			if n, err := e.in.Server.DB().Client.Notification.Query().Count(ctx); err != nil || n != 0 {
				t.Fatalf("a mempool sighting stored %d notifications (%v)", n, err)
			}
			if n, err := e.in.Server.DB().Client.Payment.Query().Count(ctx); err != nil || n != 0 {
				t.Fatalf("a mempool sighting stored %d payments (%v)", n, err)
			}
			e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 1})
			if st := status(t, pageURL+"status.json?coin=ltc"); st["status"] != "confirming" {
				t.Fatalf("in a block: %v", st)
			}
			e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 2})
			if st := status(t, pageURL+"status.json?coin=ltc"); st["status"] != "paid" {
				t.Fatalf("confirmed: %v", st)
			}
		})
	}
}

// TestLanguages: the pages follow Accept-Language (German, Spanish,
// Portuguese, else English); ?lang= chooses and is remembered in a cookie
// that later pages follow over Accept-Language; status.json speaks the
// page's language and remembers no choice; the language switch is plain links that keep the
// page's query.
func TestLanguages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25", "currency", "USD")
	pageURL := r["payment_url"].(string)
	e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "btc")
	for _, c := range []struct{ accept, lang, title, status string }{
		{"", "en", "<title>Payment</title>", "Waiting for your payment."},
		{"de-DE,de;q=0.9,en;q=0.5", "de", "<title>Zahlung</title>", "Wir warten auf Ihre Zahlung."},
		{"es-MX", "es", "<title>Pago</title>", "Esperando su pago."},
		{"pt-BR", "pt", "<title>Pagamento</title>", "Aguardando o seu pagamento."},
		{"fr-FR", "en", "<title>Payment</title>", "Waiting for your payment."},
	} {
		p := fetchLang(t, pageURL+"?coin=btc", c.accept)
		p.Want(t, 200, `<html lang="`+c.lang+`">`, c.title, c.status)
		if got := p.Header.Get("Content-Language"); got != c.lang {
			t.Errorf("%q: Content-Language %q", c.accept, got)
		}
		if p.Header.Get("Set-Cookie") != "" {
			t.Errorf("%q: a cookie without a choice: %s", c.accept, p.Header.Get("Set-Cookie"))
		}
	}
	// The switch: links to the same page, its query kept.
	p := fetchLang(t, pageURL+"?coin=btc", "de")
	p.Want(t, 200, `href="/payment/`+r["payment_id"].(string)+`/?coin=btc&amp;lang=es"`, `>Español</a>`, `aria-current="true">Deutsch</a>`)
	p = fetchLang(t, pageURL+"?coin=btc&lang=es", "de")
	p.Want(t, 200, `<html lang="es">`, "Esperando su pago.", "Envíe exactamente")
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == pay.LangCookie {
			cookie = c
		}
	}
	if cookie == nil || cookie.Value != "es" || cookie.MaxAge <= 0 || !cookie.HttpOnly || cookie.Path != "/" {
		t.Fatalf("language cookie: %+v", cookie)
	}
	fetchLang(t, pageURL+"?coin=btc", "de", cookie).Want(t, 200, `<html lang="es">`, "Esperando su pago.")
	fetchLang(t, pageURL+"status.json?coin=btc", "de", cookie).Want(t, 200, "Esperando su pago.")
	st := fetchLang(t, pageURL+"status.json?coin=btc&lang=pt", "de", cookie)
	st.Want(t, 200, "Aguardando o seu pagamento.")
	// ...but remembers nothing: a poll of the page the payer just left,
	// with that page's language, must not undo the choice they made on the
	// next page (TestBrowserGerman caught one in flight).
	if sc := st.Header.Get("Set-Cookie"); sc != "" {
		t.Errorf("status.json with ?lang= set a cookie: %s", sc)
	}
	// An unknown choice changes nothing.
	fetchLang(t, pageURL+"?coin=btc&lang=xx", "de").Want(t, 200, `<html lang="de">`)
	// The subscription page, with its periods.
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "option", "1m:10.00", "option", "12m:100.00")
	fetchLang(t, s["subscription_url"].(string), "de").Want(t, 200, "Noch nicht bezahlt.", "1 Monat – 10.00 USD", "12 Monate – 100.00 USD", "Wählen Sie einen Tarif")
}

func pngLogo(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 80, 40))
	for x := range 80 {
		for y := range 40 {
			if (x/10+y/10)%2 == 0 {
				img.Set(x, y, color.RGBA{R: 0xaa, G: 0x33, A: 0xff})
			}
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBranding: the project's name, logo, colour and support contact are
// on every hosted page (checkout, deposit, subscription); the logo is
// served from payhook below the page with its own restrictive policy and
// nosniff; the colour comes as a same-origin stylesheet (the pages' CSP
// allows no inline style); the coins come in the project's order with
// their icons and, for a fixed amount, their amounts.
func TestBranding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.in.Server.DB().Client.Project.UpdateOneID(e.in.ProjectA).SetName("Bücherwurm & Co").
		SetTickers([]string{"ltc", "btc", "trc20/usdt"}).Save(ctx); err != nil {
		t.Fatal(err)
	}
	logo := pngLogo(t)
	brandColor, contact := "#aa3300", "help@books.example"
	e.brand(t, project.Branding{Color: &brandColor, Contact: &contact, Logo: &logo})

	c := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25", "currency", "USD")
	d := e.request(t, "/deposit/request/", "notify_url", notifyURL)
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "option", "1m:10.00")
	for _, u := range []string{c["payment_url"].(string), d["payment_url"].(string), s["subscription_url"].(string)} {
		p := webtest.Fetch(t, http.MethodGet, u, nil)
		path := strings.TrimPrefix(u, e.in.BaseURL)
		p.Want(t, 200, `<span class="shop-name" id="shop-name">Bücherwurm &amp; Co</span>`,
			`<img id="shop-logo" src="`+path+`logo?v=`, `<link rel="stylesheet" href="`+path+`brand.css?v=aa3300">`,
			`<a id="support-link" href="mailto:help@books.example" rel="noopener">help@books.example</a>`)
		// The project's order, with icons.
		ltc, btc, usdt := strings.Index(p.Body, `value="ltc"`), strings.Index(p.Body, `value="btc"`), strings.Index(p.Body, `value="trc20_usdt"`)
		if ltc < 0 || btc < ltc || usdt < btc || strings.Contains(p.Body, `value="eth"`) {
			t.Errorf("%s: coins not in the project's order (ltc %d, btc %d, trc20_usdt %d)", u, ltc, btc, usdt)
		}
		p.Want(t, 200, `<img src="/payment/assets/coin-ltc.svg" alt="">`, `<img src="/payment/assets/coin-usdt.svg" alt="">`)

		logoResp := webtest.Fetch(t, http.MethodGet, u+"logo", nil)
		if logoResp.Code != 200 || logoResp.Body != string(logo) || logoResp.Header.Get("Content-Type") != "image/png" ||
			logoResp.Header.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(logoResp.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%slogo: %d %v", u, logoResp.Code, logoResp.Header)
		}
		css := webtest.Fetch(t, http.MethodGet, u+"brand.css", nil)
		if css.Code != 200 || !strings.Contains(css.Body, "--brand:#aa3300") || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
			t.Errorf("%sbrand.css: %d %v %s", u, css.Code, css.Header, css.Body)
		}
	}
	// Amounts: what 25 USD is in each coin now (the quote choosing it holds).
	p := webtest.Fetch(t, http.MethodGet, c["payment_url"].(string), nil)
	a := e.request(t, "/checkout/address/", "payment_id", c["payment_id"].(string), "coin", "ltc")
	p.Want(t, 200, `<span class="coin-amount" id="amount-ltc">`+a["value_coin"].(string)+` LTC</span>`, `id="amount-trc20_usdt">25 USDT</span>`)
	// A deposit has no amount to show.
	webtest.Fetch(t, http.MethodGet, d["payment_url"].(string), nil).WantNot(t, `class="coin-amount"`)

	// An SVG logo: served as SVG, under a policy that runs nothing.
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="#a30"/></svg>`)
	e.brand(t, project.Branding{Logo: &svg})
	got := webtest.Fetch(t, http.MethodGet, c["payment_url"].(string)+"logo", nil)
	if got.Body != string(svg) || got.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(got.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("SVG logo: %v %s", got.Header, got.Body)
	}
	// Without branding: no header, no logo, no stylesheet, no contact; the
	// default project's name is not shown.
	none, empty := []byte{}, ""
	e.brand(t, project.Branding{Logo: &none, Color: &empty, Contact: &empty})
	p = webtest.Fetch(t, http.MethodGet, c["payment_url"].(string), nil)
	p.WantNot(t, `id="shop-logo"`, `brand.css`, `id="support"`)
	if got := webtest.Fetch(t, http.MethodGet, c["payment_url"].(string)+"logo", nil); got.Code != 404 {
		t.Errorf("logo of a project without one: %d", got.Code)
	}
	// Unknown ids: 404, like the page.
	for _, u := range []string{"/payment/chk_nothere/logo", "/subscription/sub_nothere/brand.css"} {
		if got := webtest.Fetch(t, http.MethodGet, e.in.BaseURL+u, nil); got.Code != 404 {
			t.Errorf("%s: %d", u, got.Code)
		}
	}
}

// postLang posts form to u with an Accept-Language.
func postLang(t *testing.T, u string, form url.Values, acceptLanguage string) webtest.Page {
	t.Helper()
	return requestLang(t, http.MethodPost, u, form, acceptLanguage)
}

// TestRefusalsInLanguage: what a payer is refused, and the not-found and
// error pages, are said in the page's language, never in the service's
// English written for developers.
func TestRefusalsInLanguage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Not found, in each language, with its status.
	for _, c := range []struct{ lang, want string }{
		{"de", "Hier gibt es keine Zahlung."},
		{"es", "Aquí no hay ningún pago."},
		{"pt", "Não há nenhum pagamento aqui."},
		{"en", "There is no payment here."},
	} {
		p := fetchLang(t, e.in.BaseURL+"/payment/chk_doesnotexist/", c.lang)
		p.Want(t, 404, `<html lang="`+c.lang+`">`, c.want)
	}
	// A coin the page does not offer, and one below the network's minimum.
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "1", "currency", "USD")
	p := postLang(t, r["payment_url"].(string), url.Values{"coin": {"nocoin"}}, "es")
	p.Want(t, 400, `<html lang="es">`, "Esta moneda no se puede usar aquí.", `name="coin"`)
	p.WantNot(t, "payhook supports")
	p = postLang(t, r["payment_url"].(string), url.Values{"coin": {"btc"}}, "pt")
	p.Want(t, 400, "menos do que o menor pagamento que a rede aceita (0.0001 BTC)")
	p.WantNot(t, "below the minimum")
	// A plan the subscription does not have.
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "option", "1m:25.00")
	p = postLang(t, s["subscription_url"].(string), url.Values{"option": {"7d"}, "coin": {"btc"}}, "de")
	p.Want(t, 400, "Wählen Sie einen der aufgeführten Tarife.")
	p.WantNot(t, "not an option")
	// A form too large to parse.
	p = postLang(t, s["subscription_url"].(string), url.Values{"option": {strings.Repeat("x", 5000)}}, "pt")
	p.Want(t, 400, `<html lang="pt">`, "Esta escolha não é possível.")
	p.WantNot(t, "bad form")
}
