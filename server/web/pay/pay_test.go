package pay_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/webtest"
)

// notifyURL is the webhook URL of the test checkouts: an operator's
// exception, never called (delivery is manual and never run).
const notifyURL = "http://127.0.0.1:9/hook"

// env is a --dev server whose devnet the tests pay on.
type env struct {
	in *servertest.Instance
}

func newEnv(t *testing.T) *env {
	t.Helper()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(notifyURL, servertest.A)
		c.API.PagePollInterval = 200 * time.Millisecond
	})
	return &env{in: in}
}

// request calls the merchant API with project A's key and returns the JSON.
func (e *env) request(t *testing.T, path string, kv ...string) map[string]any {
	t.Helper()
	return webtest.API(t, e.in, path, kv...)
}

// post makes a devnet request (pay, mine).
func (e *env) post(t *testing.T, path string, body any) {
	t.Helper()
	webtest.Devnet(t, e.in, path, body)
}

// status fetches a status.json.
func status(t *testing.T, u string) map[string]any {
	t.Helper()
	p := webtest.Fetch(t, http.MethodGet, u, nil)
	var s map[string]any
	if err := json.Unmarshal([]byte(p.Body), &s); err != nil || p.Code != 200 {
		t.Fatalf("%s: %d %s", u, p.Code, p.Body)
	}
	return s
}

// TestCheckoutPageWithoutJavaScript walks a checkout through the plain
// HTML: the page names the amount and the coins, the form hands out the
// address the API hands out, the address and exact amount are in the
// HTML, and once paid on the devnet the page and status.json say paid and
// link to redirect_url with the success token.
func TestCheckoutPageWithoutJavaScript(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25", "currency", "USD",
		"item_description", "A <b>book</b> & a pen", "redirect_url", "https://shop.example/done?order=7")
	id, token, pageURL := r["payment_id"].(string), r["success_token"].(string), r["payment_url"].(string)
	if pageURL != e.in.BaseURL+"/payment/"+id+"/" {
		t.Fatalf("payment_url %s", pageURL)
	}
	p := webtest.Fetch(t, http.MethodGet, pageURL, nil)
	p.Want(t, 200, "25.00 USD", "A &lt;b&gt;book&lt;/b&gt; &amp; a pen", `name="coin" value="btc"`, "Choose a coin", "<noscript>")
	if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || p.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers: %v", p.Header)
	}
	// Without the trailing slash: redirected to it.
	if p := webtest.Fetch(t, http.MethodGet, strings.TrimSuffix(pageURL, "/"), nil); p.Code != http.StatusMovedPermanently || p.Header.Get("Location") != "/payment/"+id+"/" {
		t.Errorf("no slash: %d %v", p.Code, p.Header)
	}

	p = webtest.Fetch(t, http.MethodPost, pageURL, url.Values{"coin": {"btc"}})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/payment/"+id+"/?coin=btc" {
		t.Fatalf("choose: %d %v %s", p.Code, p.Header, p.Body)
	}
	a := e.request(t, "/checkout/address/", "payment_id", id, "coin", "btc")
	addr, amount := a["address_in"].(string), a["value_coin"].(string)
	p = webtest.Fetch(t, http.MethodGet, pageURL+"?coin=btc", nil)
	p.Want(t, 200, `<code id="address">`+addr+`</code>`, `<span id="amount">`+amount+`</span>`, `src="data:image/png;base64,`, "Waiting for your payment")

	st := status(t, pageURL+"status.json?coin=btc")
	if st["status"] != "waiting" || st["final"] != false {
		t.Fatalf("status before paying: %v", st)
	}
	// The devnet reports a payment from its first block on; btc is
	// confirmed at depth 1.
	e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addr, "value_coin": amount})
	e.post(t, "/devnet/btc/mine/", map[string]any{"blocks": 1})
	st = status(t, pageURL+"status.json?coin=btc")
	want := "https://shop.example/done?order=7&success_token=" + token
	if st["status"] != "paid" || st["final"] != true || st["redirect"] != want {
		t.Fatalf("status after mining: %v", st)
	}
	p = webtest.Fetch(t, http.MethodGet, pageURL+"?coin=btc", nil)
	p.Want(t, 200, "Paid", `href="`+strings.ReplaceAll(want, "&", "&amp;")+`"`)
}

// TestPageEscapes: an item_description of <script> renders as text, and a
// page never carries an inline script.
func TestPageEscapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "5",
		"item_description", `<script>alert(1)</script>"><img src=x onerror=alert(2)>`)
	p := webtest.Fetch(t, http.MethodGet, r["payment_url"].(string), nil)
	p.Want(t, 200, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&gt;&lt;img src=x onerror=alert(2)&gt;")
	p.WantNot(t, "<script>alert", "<img src=x")
	if n := strings.Count(p.Body, "<script"); n != 1 || !strings.Contains(p.Body, `<script src="/payment/assets/page.js" defer></script>`) {
		t.Errorf("scripts: %d\n%s", n, p.Body)
	}
}

// TestRedirectURLOnlyHTTP: a stored redirect_url the page would follow is
// http(s) only; the API refuses others, so nothing else is ever linked.
func TestRedirectURLOnlyHTTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, bad := range []string{"javascript:alert(1)", "data:text/html,x", "//shop.example/x", "https://user:pw@shop.example/"} {
		q := url.Values{"notify_url": {notifyURL}, "value": {"5"}, "redirect_url": {bad}}
		if r := e.in.Get(t, "/checkout/request/", q, e.in.KeyA); r.Code != 400 {
			t.Errorf("redirect_url %q: %d %s", bad, r.Code, r.Body)
		}
	}
}

// TestUnknownAndFallthrough: an unknown id is the 404 page; the API's own
// paths under /deposit/ and /subscription/ still reach the API; assets
// are served with the same headers.
func TestUnknownAndFallthrough(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, path := range []string{"/payment/chk_nothere/", "/deposit/dep_nothere/", "/subscription/sub_nothere/", "/payment/chk_x/nope"} {
		p := webtest.Fetch(t, http.MethodGet, e.in.BaseURL+path, nil)
		p.Want(t, 404, "Not found")
		if p.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("%s: no CSP", path)
		}
	}
	if p := webtest.Fetch(t, http.MethodGet, e.in.BaseURL+"/payment/chk_nothere/status.json", nil); p.Code != 404 {
		t.Errorf("status of unknown: %d", p.Code)
	}
	// An API path: answered by the gateway (401 without a key), not a page.
	if p := webtest.Fetch(t, http.MethodGet, e.in.BaseURL+"/deposit/request/", nil); p.Code == 404 || strings.Contains(p.Body, "<html") {
		t.Errorf("/deposit/request/: %d %s", p.Code, p.Body)
	}
	for _, a := range []string{"style.css", "page.js"} {
		p := webtest.Fetch(t, http.MethodGet, e.in.BaseURL+"/payment/assets/"+a, nil)
		if p.Code != 200 || p.Header.Get("X-Content-Type-Options") != "nosniff" || len(p.Body) < 100 {
			t.Errorf("%s: %d %v", a, p.Code, p.Header)
		}
	}
}

// TestDepositPage: a deposit's page hands out an address for any amount
// and reports what was received.
func TestDepositPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(t, "/deposit/request/", "notify_url", notifyURL, "item_description", "Top up")
	id, pageURL := r["payment_id"].(string), r["payment_url"].(string)
	if pageURL != e.in.BaseURL+"/deposit/"+id+"/" {
		t.Fatalf("payment_url %s", pageURL)
	}
	webtest.Fetch(t, http.MethodGet, pageURL, nil).Want(t, 200, "Deposit", "Top up", `value="btc"`)
	if p := webtest.Fetch(t, http.MethodPost, pageURL, url.Values{"coin": {"btc"}}); p.Code != http.StatusSeeOther {
		t.Fatalf("choose: %d %s", p.Code, p.Body)
	}
	a := e.request(t, "/deposit/address/", "payment_id", id, "coin", "btc")
	p := webtest.Fetch(t, http.MethodGet, pageURL+"?coin=btc", nil)
	p.Want(t, 200, a["address_in"].(string), "Send any amount of BTC")
	e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a["address_in"], "value_coin": "0.01"})
	e.post(t, "/devnet/btc/mine/", map[string]any{"blocks": 1})
	if st := status(t, pageURL+"status.json?coin=btc"); st["status"] != "paid" || st["final"] != false {
		t.Fatalf("status: %v", st)
	}
}

// TestChooseRefused: a coin the checkout cannot take is shown as a
// message on the page, with the coins to choose from again.
func TestChooseRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "5")
	p := webtest.Fetch(t, http.MethodPost, r["payment_url"].(string), url.Values{"coin": {"nocoin"}})
	p.Want(t, 400, `id="error"`, "This coin cannot be used here", `name="coin"`)
	p.WantNot(t, "payhook supports", "GET /info/")
}

// TestSubscriptionPlanAmounts: the subscription page shows, for each coin,
// what every plan option costs in it (all of them without the script, each
// with its period), and the renewal the payer then opens is quoted at
// exactly that amount.
func TestSubscriptionPlanAmounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "customer", "alice@example.com",
		"option", "1m:25.00", "option", "12m:250.00")
	subURL := s["subscription_url"].(string)
	p := webtest.Fetch(t, http.MethodGet, subURL, nil)
	amounts := regexp.MustCompile(`<span class="coin-amount" data-option="(\w+)">([0-9.]+) BTC <span class="coin-per">/ ([^<]+)</span>`).
		FindAllStringSubmatch(p.Body, -1)
	if p.Code != 200 || len(amounts) != 2 || amounts[0][1] != "1m" || amounts[0][3] != "1 month" || amounts[1][1] != "12m" || amounts[1][3] != "12 months" {
		t.Fatalf("btc's plan amounts %q on:\n%s", amounts, p.Body)
	}
	// A second coin has its own amounts.
	if n := strings.Count(p.Body, `data-option="12m"`); n < 2 {
		t.Fatalf("12m amounts on %d coins", n)
	}
	for _, a := range amounts {
		q := e.request(t, "/subscription/address/", "token", s["token"].(string), "option", a[1], "coin", "btc")
		if q["value_coin"] != a[2] {
			t.Errorf("option %s: the page says %s BTC, the renewal's quote %v", a[1], a[2], q["value_coin"])
		}
	}

	// One option: its amount alone, without a period.
	one := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "option", "1m:25.00")
	p = webtest.Fetch(t, http.MethodGet, one["subscription_url"].(string), nil)
	p.Want(t, 200, `<span class="coin-amount" data-option="1m">`+amounts[0][2]+` BTC</span>`)
}
