package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	entapikey "github.com/payhook/payhook/ent/db/apikey"
	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	phkey "github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// Valid mainnet addresses for the wallet forms.
const (
	btcWallet  = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	ethWallet  = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	ethWallet2 = "0x52908400098527886E0F7030069857D2E4169EE7"
)

// TestDashboardWallets: a project's user sets a ticker's payout wallet
// with the CLI's syntax and checks (one address, or shares), sees it
// listed, removes it; an invalid address, shares not adding up to 1, a coin
// not offered and a missing coin are 400 pages naming the problem, with
// what was typed kept; another project sees and removes nothing of it; a
// form without the CSRF token changes nothing.
func TestDashboardWallets(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	ctx := context.Background()
	db := d.in.Server.DB().Client
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	a.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `id="no-wallets"`, `<option value="btc">`, `<option value="trc20/usdt">`)

	set := func(u *user, tok, ticker, addrs string) webtest.Page {
		return u.do(http.MethodPost, "/dashboard/settings/wallets", url.Values{"csrf": {tok}, "ticker": {ticker}, "addresses": {addrs}})
	}
	for _, c := range []struct{ ticker, addrs, want string }{
		{"btc", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv is not a valid btc address"},
		{"btc", ethWallet, "is not a valid btc address"},
		{"eth", ethWallet + "@0.5", "shares add up to 0.5, want 1"},
		{"eth", ethWallet + "@0.7," + ethWallet2 + "@0.7", "shares add up to 1.4, want 1"},
		{"eth", ethWallet + "@0.123456789", "at most 8 decimals"},
		{"xyz", btcWallet, "xyz is not a coin this server offers"},
		{"", btcWallet, "choose a coin"},
		{"btc", " ", "enter at least one address"},
	} {
		p := set(a, token, c.ticker, c.addrs)
		p.Want(t, http.StatusBadRequest, `id="wallet-error"`, "The wallet was not saved")
		if !strings.Contains(html.UnescapeString(p.Body), c.want) {
			t.Errorf("%s=%s: the page does not say %q\n%s", c.ticker, c.addrs, c.want, p.Body)
		}
		if strings.TrimSpace(c.addrs) != "" && !strings.Contains(p.Body, `value="`+html.EscapeString(c.addrs)+`"`) {
			t.Errorf("%s=%s: what was typed is not kept", c.ticker, c.addrs)
		}
	}
	if p, _ := project.Get(ctx, db, d.in.ProjectA); len(p.Wallets) != 0 {
		t.Fatalf("a refused form stored wallets %v", p.Wallets)
	}

	p := set(a, token, "btc", btcWallet)
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=wallet-saved#wallets" {
		t.Fatalf("set btc: %d %v\n%s", p.Code, p.Header, p.Body)
	}
	set(a, token, "eth", ethWallet+","+ethWallet2+"@0.3").Want(t, http.StatusSeeOther)
	page := a.do(http.MethodGet, "/dashboard/settings/?done=wallet-saved", nil)
	page.Want(t, 200, "The payout wallet is saved", `id="wallet-btc"`, btcWallet, `id="wallet-eth"`, ethWallet2, "<td>0.7</td>", "<td>0.3</td>")
	page.WantNot(t, `id="no-wallets"`)
	pa, _ := project.Get(ctx, db, d.in.ProjectA)
	if ds := pa.Wallets["eth"]; len(ds) != 2 || ds[0].Address != ethWallet || ds[0].Share.String() != "0.7" || len(pa.Wallets["btc"]) != 1 {
		t.Fatalf("stored wallets %v", pa.Wallets)
	}

	// Project B sees none of it and cannot remove it.
	b := d.user(t)
	_, tokenB := b.signIn(d.emailB, password)
	b.do(http.MethodGet, "/dashboard/settings/", nil).WantNot(t, btcWallet, ethWallet)
	b.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {tokenB}, "ticker": {"eth"}}).Want(t, http.StatusBadRequest, "no payout wallet")

	// Without the token: refused, nothing changes.
	for _, form := range []url.Values{{"ticker": {"btc"}, "addresses": {ethWallet}}, {"csrf": {tokenB}, "ticker": {"btc"}}} {
		a.do(http.MethodPost, "/dashboard/settings/wallets", form).Want(t, http.StatusForbidden)
		a.do(http.MethodPost, "/dashboard/settings/wallets/remove", form).Want(t, http.StatusForbidden)
	}
	a.do(http.MethodGet, "/dashboard/settings/wallets", nil).Want(t, http.StatusMethodNotAllowed)
	if p, _ := project.Get(ctx, db, d.in.ProjectA); len(p.Wallets) != 2 || p.Wallets["btc"][0].Address != btcWallet {
		t.Fatalf("a refused request changed the wallets: %v", p.Wallets)
	}

	p = a.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {token}, "ticker": {"btc"}})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=wallet-removed#wallets" {
		t.Fatalf("remove btc: %d %v", p.Code, p.Header)
	}
	a.do(http.MethodGet, "/dashboard/settings/?done=wallet-removed", nil).Want(t, 200, "The payout wallet is removed", ethWallet)
	a.do(http.MethodPost, "/dashboard/settings/wallets/remove", url.Values{"csrf": {token}, "ticker": {"btc"}}).Want(t, http.StatusBadRequest, "no payout wallet")
	if p, _ := project.Get(ctx, db, d.in.ProjectA); len(p.Wallets) != 1 || len(p.Wallets["eth"]) != 2 {
		t.Fatalf("after the removal: %v", p.Wallets)
	}
}

var newKey = regexp.MustCompile(`<code id="new-key">(ph_[a-z0-9]+)</code>`)

// TestDashboardAPIKeys: the settings page lists the project's keys (name,
// prefix, created, status; never a key, a hash or an operator key),
// creates one and shows it once (no-store, not in a URL), and revokes it:
// the API answers 401 to it at once. Another project's key, an operator
// key and an unknown id are 404; a bad name is a 400; forms without the
// CSRF token change nothing.
func TestDashboardAPIKeys(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	ctx := context.Background()
	db := d.in.Server.DB().Client
	op, err := db.APIKey.Create().SetName("operator's").SetPrefix("ph_opera").SetHash(phkey.Hash("ph_operator-key")).
		SetOperator(true).SetProjectID(d.in.ProjectA).SetCreatedAt(d.clock.Now()).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/settings/", nil)
	list.Want(t, 200, "test A", "test A2", d.in.KeyA[:8]+"…", `class="badge st-acknowledged">active`)
	list.WantNot(t, d.in.KeyA, d.in.KeyA2, "operator's", "ph_opera", phkey.Hash(d.in.KeyA), "test B", `id="new-key"`)

	// The form offers the four scopes, all checked.
	list.Want(t, 200, `id="scope-read" checked`, `id="scope-create" checked`, `id="scope-payouts" checked`, `id="scope-management" checked`)
	for _, c := range []struct {
		name   string
		scopes []string
		want   string
	}{
		{"  ", []string{"read"}, "The key needs a name"},
		{strings.Repeat("n", 101), []string{"read"}, "longer than 100 characters"},
		{"tab\there", []string{"read"}, "without control characters"},
		{"no scope", nil, "Choose at least one scope"},
		{"bad scope", []string{"read", "admin"}, `unknown scope &#34;admin&#34;: the scopes are read, create, payouts, management`},
	} {
		p := a.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"csrf": {token}, "name": {c.name}, "scope": c.scopes})
		p.Want(t, http.StatusBadRequest, `id="key-error"`, c.want)
		if c.name == "  " {
			// What was chosen stays chosen.
			p.Want(t, http.StatusBadRequest, `id="scope-read" checked`)
			p.WantNot(t, `id="scope-create" checked`)
		}
	}

	// A key that reads and creates, but pays nothing out.
	p := a.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"csrf": {token}, "name": {"shop <backend>"}, "scope": {"create", "read"}})
	p.Want(t, 200, "shown only this once", "shop &lt;backend&gt;", `<p id="new-key-scopes">Scopes: read, create</p>`)
	m := newKey.FindStringSubmatch(p.Body)
	if m == nil || p.Header.Get("Cache-Control") != "no-store" || p.Header.Get("Location") != "" {
		t.Fatalf("created key page: %v\n%s", p.Header, p.Body)
	}
	key := m[1]
	if r := d.in.Get(t, "/notification/list/", nil, key); r.Code != 200 {
		t.Fatalf("the new key on the API: %d %s", r.Code, r.Body)
	}
	row, err := db.APIKey.Query().Where(entapikey.Hash(phkey.Hash(key))).Only(ctx)
	if err != nil || row.ProjectID != d.in.ProjectA || row.Operator || row.Name != "shop <backend>" || strings.Join(row.Scopes, ",") != "read,create" {
		t.Fatalf("stored key %+v %v", row, err)
	}
	// Its scopes bind it on the API: a test webhook is management.
	if r := d.in.PostJSON(t, "/notification/test/", `{"url":"https://shop.example/hook"}`, key); r.Code != http.StatusForbidden ||
		!strings.Contains(string(r.Body), `this API key lacks the \"management\" scope`) {
		t.Fatalf("a read and create key sends a test webhook: %d %s", r.Code, r.Body)
	}
	again := a.do(http.MethodGet, "/dashboard/settings/", nil)
	again.Want(t, 200, `id="key-`, "shop &lt;backend&gt;", key[:8]+"…", `<td class="scopes">read, create</td>`, `<td class="scopes">read, create, payouts, management</td>`)
	again.WantNot(t, key)
	// Its use on the API above is shown, to the minute.
	used := regexp.MustCompile(`(?s)id="key-` + fmt.Sprint(row.ID) + `".*?</tr>`).FindString(again.Body)
	if !strings.Contains(used, d.clock.Now().Truncate(time.Minute).Format("2006-01-02 15:04 UTC")) {
		t.Fatalf("the new key's row does not show its last use:\n%s", used)
	}

	revoke := func(u *user, tok string, id any) webtest.Page {
		return u.do(http.MethodPost, fmt.Sprintf("/dashboard/settings/keys/%v/revoke", id), url.Values{"csrf": {tok}})
	}
	b := d.user(t)
	_, tokenB := b.signIn(d.emailB, password)
	b.do(http.MethodGet, "/dashboard/settings/", nil).WantNot(t, "shop &lt;backend&gt;", "test A")
	revoke(b, tokenB, row.ID).Want(t, http.StatusNotFound)
	revoke(a, token, op.ID).Want(t, http.StatusNotFound)
	revoke(a, token, int64(1)<<40).Want(t, http.StatusNotFound)
	revoke(a, token, "abc").Want(t, http.StatusNotFound)
	a.do(http.MethodPost, "/dashboard/settings/keys/"+fmt.Sprint(row.ID)+"/revoke", url.Values{}).Want(t, http.StatusForbidden)
	a.do(http.MethodPost, "/dashboard/settings/keys/"+fmt.Sprint(row.ID)+"/revoke", url.Values{"csrf": {tokenB}}).Want(t, http.StatusForbidden)
	a.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"name": {"sneaky"}}).Want(t, http.StatusForbidden)
	if n, _ := db.APIKey.Query().Where(entapikey.RevokedAtNotNil()).Count(ctx); n != 0 {
		t.Fatalf("%d keys revoked by refused requests", n)
	}
	if n, _ := db.APIKey.Query().Where(entapikey.Name("sneaky")).Count(ctx); n != 0 {
		t.Fatal("a key created without the token")
	}

	d.clock.Advance(time.Minute)
	p = revoke(a, token, row.ID)
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=key-revoked#keys" {
		t.Fatalf("revoke: %d %v", p.Code, p.Header)
	}
	if r := d.in.Get(t, "/notification/list/", nil, key); r.Code != http.StatusUnauthorized {
		t.Fatalf("the revoked key on the API: %d %s", r.Code, r.Body)
	}
	if r := d.in.Get(t, "/notification/list/", nil, d.in.KeyA); r.Code != 200 {
		t.Fatalf("the project's other key: %d", r.Code)
	}
	after := a.do(http.MethodGet, "/dashboard/settings/?done=key-revoked", nil)
	after.Want(t, 200, "The API key is revoked", "revoked "+d.clock.Now().Format("2006-01-02 15:04:05 UTC"))
	after.WantNot(t, `id="revoke-`+fmt.Sprint(row.ID)+`"`)
	revoke(a, token, row.ID).Want(t, http.StatusSeeOther) // revoking again changes nothing
}

// hookReceiver is a merchant endpoint that verifies webhooks with the
// receiver package and acknowledges them.
type hookReceiver struct {
	url string
	mu  sync.Mutex
	got []received
}

// received is one request the receiver got.
type received struct {
	method, contentType, event string
	body                       []byte
	verifyErr                  error
}

func newReceiver(t *testing.T, secret func() string, now func() time.Time) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := receiver.NewWebhookVerifier([]string{secret()}, receiver.WithClock(now))
		body, err := v.Verify(r)
		if err == nil {
			body, err = io.ReadAll(r.Body)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, received{method: r.Method, contentType: r.Header.Get("Content-Type"), event: r.Header.Get(receiver.WebhookEventHeader), body: body, verifyErr: err})
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/payhook"
	return rc
}

func (rc *hookReceiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// newDashReceiving is newDash with a receiver of project A's webhooks that
// acknowledges, allowed as a private endpoint.
func newDashReceiving(t *testing.T) (*dash, *hookReceiver) {
	t.Helper()
	var d *dash
	rc := newReceiver(t, func() string {
		p, err := project.Get(context.Background(), d.in.Server.DB().Client, d.in.ProjectA)
		if err != nil {
			return ""
		}
		return p.IpnSecret
	}, func() time.Time { return d.clock.Now() })
	d = newDash(t, func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(rc.url, servertest.A)...)
	})
	return d, rc
}

// TestDashboardWebhookTest: the settings page sends a test.webhook to the
// URL given (prefilled with the latest notification's), opens its page,
// and once the dispatcher has run shows the acknowledged attempt there and
// in the settings page's latest tests; the receiver got a JSON POST whose
// x-service-signature verifies with the project's secret. URLs the webhook
// rules refuse are 400 pages giving the reason; a form without the CSRF
// token sends nothing.
func TestDashboardWebhookTest(t *testing.T) {
	t.Parallel()
	d, rc := newDashReceiving(t)
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	a.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `id="test-url" value=""`)

	for _, c := range []struct{ url, want string }{
		{"", "enter the URL of your webhook endpoint"},
		{"ftp://shop.example/hook", "No test was sent"},
		{"http://127.0.0.1:9/hook", "public HTTP(S) address"},
		{"https://user:pw@shop.example/hook", "No test was sent"},
	} {
		p := a.do(http.MethodPost, "/dashboard/settings/test-webhook", url.Values{"csrf": {token}, "url": {c.url}})
		p.Want(t, http.StatusBadRequest, `id="test-error"`)
		if !strings.Contains(html.UnescapeString(p.Body), c.want) {
			t.Errorf("%q: the page does not say %q\n%s", c.url, c.want, p.Body)
		}
	}
	a.do(http.MethodPost, "/dashboard/settings/test-webhook", url.Values{"url": {rc.url}}).Want(t, http.StatusForbidden)
	a.do(http.MethodGet, "/dashboard/settings/test-webhook", nil).Want(t, http.StatusMethodNotAllowed)
	if rows, _, _ := d.in.Server.Notifier().Queue.List(context.Background(), d.in.ProjectA, notifier.ListFilter{}); len(rows) != 0 {
		t.Fatalf("refused tests stored %d notifications", len(rows))
	}

	p := a.do(http.MethodPost, "/dashboard/settings/test-webhook", url.Values{"csrf": {token}, "url": {rc.url}})
	loc := p.Header.Get("Location")
	id, ok := strings.CutPrefix(loc, "/dashboard/notifications/")
	id = strings.TrimSuffix(id, "/")
	if p.Code != http.StatusSeeOther || !ok || id == "" {
		t.Fatalf("send a test: %d %q", p.Code, loc)
	}
	a.do(http.MethodGet, loc, nil).Want(t, 200, "test.webhook", rc.url)
	d.runDue(t)
	a.do(http.MethodGet, loc, nil).Want(t, 200, `id="attempt-1"`, "acknowledged", `{&#34;status&#34;:&#34;ok&#34;}`)

	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests", len(got))
	}
	g := got[0]
	var body map[string]any
	_ = json.Unmarshal(g.body, &body)
	if g.verifyErr != nil || g.method != http.MethodPost || !strings.HasPrefix(g.contentType, "application/json") ||
		body["event_type"] != "test.webhook" || body["uuid"] != id || g.event != "test.webhook" {
		t.Fatalf("received %s %s %s %v (signature: %v)", g.method, g.contentType, g.event, body, g.verifyErr)
	}

	settings := a.do(http.MethodGet, "/dashboard/settings/", nil)
	settings.Want(t, 200, `id="test-url" value="`+rc.url+`"`, `<a href="/dashboard/notifications/`+id+`/">`, `class="badge st-acknowledged">acknowledged`)
	b := d.user(t)
	b.signIn(d.emailB, password)
	b.do(http.MethodGet, "/dashboard/settings/", nil).WantNot(t, id, rc.url)
	b.do(http.MethodGet, loc, nil).Want(t, http.StatusNotFound)
}

// TestDashboardPaymentExceptions: a project's user sets the underpaid
// tolerance and the late payment policy on the settings page; an
// out-of-range or over-precise tolerance is a 400 page naming
// underpaid_tolerance, with what was typed kept, and changes nothing;
// another project's rules stay as they were.
func TestDashboardPaymentExceptions(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	ctx := context.Background()
	db := d.in.Server.DB().Client
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	a.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `id="underpaid-tolerance"`, `value="0"`, `id="late-refund"`)

	set := func(tol string, refund bool) webtest.Page {
		form := url.Values{"csrf": {token}, "underpaid_tolerance": {tol}}
		if refund {
			form.Set("late_refund", "1")
		}
		return a.do(http.MethodPost, "/dashboard/settings/exceptions", form)
	}
	for _, c := range []struct{ tol, want string }{
		{"100.5", "not a percent from 0 to 100"},
		{"-1", "not a percent from 0 to 100"},
		{"0.125", "more than 2 decimal places"},
		{"lots", "not a decimal percent"},
	} {
		p := set(c.tol, true)
		p.Want(t, http.StatusBadRequest, `id="exceptions-error"`, "underpaid_tolerance", `value="`+html.EscapeString(c.tol)+`"`)
		if !strings.Contains(html.UnescapeString(p.Body), c.want) {
			t.Errorf("tolerance %s: the page does not say %q", c.tol, c.want)
		}
	}
	if p, _ := project.Get(ctx, db, d.in.ProjectA); !p.UnderpaidTolerance.IsZero() || p.LatePayments != entproject.LatePaymentsCredit {
		t.Fatalf("a refused form changed the rules: %s %s", p.UnderpaidTolerance, p.LatePayments)
	}

	p := set("1.5", true)
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=exceptions#exceptions" {
		t.Fatalf("set: %d %v\n%s", p.Code, p.Header, p.Body)
	}
	a.do(http.MethodGet, "/dashboard/settings/?done=exceptions", nil).Want(t, 200, "payment exception rules are saved", `value="1.5"`, `id="late-refund" checked`)
	pa, _ := project.Get(ctx, db, d.in.ProjectA)
	if pa.UnderpaidTolerance.String() != "1.5" || pa.LatePayments != entproject.LatePaymentsRefund {
		t.Fatalf("stored %s %s", pa.UnderpaidTolerance, pa.LatePayments)
	}
	if pb, _ := project.Get(ctx, db, d.in.ProjectB); !pb.UnderpaidTolerance.IsZero() || pb.LatePayments != entproject.LatePaymentsCredit {
		t.Fatalf("project B changed: %s %s", pb.UnderpaidTolerance, pb.LatePayments)
	}
	// Unchecked: back to credit.
	set("0", false).Want(t, http.StatusSeeOther)
	if pa, _ := project.Get(ctx, db, d.in.ProjectA); !pa.UnderpaidTolerance.IsZero() || pa.LatePayments != entproject.LatePaymentsCredit {
		t.Fatalf("stored %s %s", pa.UnderpaidTolerance, pa.LatePayments)
	}
	// Without the token: refused.
	a.do(http.MethodPost, "/dashboard/settings/exceptions", url.Values{"underpaid_tolerance": {"5"}}).Want(t, http.StatusForbidden)
}

// TestPrivateEndpointIsOneProjects: an endpoint the operator allows to
// project A (--allow-private-endpoint A=URL) is refused to project B's
// users wherever the settings page takes a URL (the test webhook, the
// payout webhook), with the host rule as the reason; A's users may use it.
func TestPrivateEndpointIsOneProjects(t *testing.T) {
	t.Parallel()
	const onlyA = "http://127.0.0.1:9/only-a"
	d := newDash(t, func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(onlyA, servertest.A)...)
	})
	b := d.user(t)
	_, tokenB := b.signIn(d.emailB, password)
	b.do(http.MethodPost, "/dashboard/settings/test-webhook", url.Values{"csrf": {tokenB}, "url": {onlyA}}).
		Want(t, http.StatusBadRequest, `id="test-error"`, "127.0.0.1 is a loopback address")
	b.do(http.MethodPost, "/dashboard/settings/payout-webhook", url.Values{"csrf": {tokenB}, "url": {onlyA}}).
		Want(t, http.StatusBadRequest, `id="payout-error"`, "127.0.0.1 is a loopback address")
	if p, err := project.Get(context.Background(), d.in.Server.DB().Client, d.in.ProjectB); err != nil || p.PayoutNotifyURL != "" {
		t.Fatalf("project B's payout webhook: %q %v", p.PayoutNotifyURL, err)
	}
	a := d.user(t)
	_, tokenA := a.signIn(d.emailA, password)
	if p := a.do(http.MethodPost, "/dashboard/settings/payout-webhook", url.Values{"csrf": {tokenA}, "url": {onlyA}}); p.Code != http.StatusSeeOther {
		t.Fatalf("project A's payout webhook: %d %s", p.Code, p.Body)
	}
	if p := a.do(http.MethodPost, "/dashboard/settings/test-webhook", url.Values{"csrf": {tokenA}, "url": {onlyA}}); p.Code != http.StatusSeeOther {
		t.Fatalf("project A's test webhook: %d %s", p.Code, p.Body)
	}
}

// TestDashboardCallbackKey: the settings page shows the public key that
// /pubkey/ gives the project's API key, and rotates it: the page and
// /pubkey/ then show the new key, with the old one published until the
// grace ends. The default project is told it still shares the server's key.
func TestDashboardCallbackKey(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	ctx := context.Background()
	pubkey := func(key string) (string, string) {
		r := d.in.Get(t, "/pubkey/", nil, key)
		if r.Code != 200 {
			t.Fatalf("/pubkey/: %d %s", r.Code, r.Body)
		}
		pub, _ := r.JSON["pubkey"].(string)
		prev, _ := r.JSON["previous_pubkey"].(string)
		return pub, prev
	}
	shown := func(p webtest.Page) string {
		m := regexp.MustCompile(`(?s)<pre id="callback-pubkey">(.*?)</pre>`).FindStringSubmatch(p.Body)
		if m == nil {
			t.Fatalf("no callback key on the page:\n%s", p.Body)
		}
		return html.UnescapeString(m[1])
	}
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	before, _ := pubkey(d.in.KeyA)
	sp := a.do(http.MethodGet, "/dashboard/settings/", nil)
	sp.Want(t, 200, "Callback signing key", "Rotate the callback signing key")
	sp.WantNot(t, `id="callback-key-shared"`, `id="callback-key-grace"`)
	if got := shown(sp); got != before {
		t.Fatalf("the page shows\n%s\n/pubkey/ answers\n%s", got, before)
	}

	// A refused CSRF token changes nothing.
	a.do(http.MethodPost, "/dashboard/settings/rotate-callback-key", url.Values{"csrf": {"forged"}}).Want(t, http.StatusForbidden)
	if now, _ := pubkey(d.in.KeyA); now != before {
		t.Fatal("a forged post rotated the key")
	}

	p := a.do(http.MethodPost, "/dashboard/settings/rotate-callback-key", url.Values{"csrf": {token}})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/?done=callback-key#callback-key" {
		t.Fatalf("rotate: %d %v", p.Code, p.Header)
	}
	after, prev := pubkey(d.in.KeyA)
	if after == before || prev != before {
		t.Fatalf("after the rotation /pubkey/ answers new=%v previous=old %v", after != before, prev == before)
	}
	sp = a.do(http.MethodGet, "/dashboard/settings/?done=callback-key", nil)
	until := d.clock.Now().Add(project.DefaultCallbackKeyGrace)
	sp.Want(t, 200, "The callback signing key is rotated", "also publishes the previous key", until.Format("2006-01-02 15:04:05 UTC"))
	if got := shown(sp); got != after {
		t.Fatal("the page does not show the new key")
	}
	// B's key is untouched.
	if b, _ := pubkey(d.in.KeyB); b == before || b == after {
		t.Fatal("B shares A's key")
	}

	// A user of the default project is told it signs with the server's key.
	def, err := project.Default(ctx, d.in.Server.DB().Client, d.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dashboard.CreateUser(ctx, d.in.Server.DB().Client, def.ID, "carol@default.example", password, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	c := d.user(t)
	c.signIn("carol@default.example", password)
	server, _ := pubkey("")
	sp = c.do(http.MethodGet, "/dashboard/settings/", nil)
	sp.Want(t, 200, `id="callback-key-shared"`)
	if got := shown(sp); got != server {
		t.Fatal("the default project's page does not show the server's key")
	}
}
