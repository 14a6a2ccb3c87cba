package dashboard_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/web/webtest"
)

// devDash is newDash with the devnet on: payments are stored when a pay or
// mine call returns. With a dialect, the server's database is of that
// dialect (newDash's is SQLite).
func devDash(t *testing.T, dialect ...store.Dialect) *dash {
	t.Helper()
	return newDash(t, func(c *server.Config) {
		c.Dev = true
		if len(dialect) > 0 {
			c.Store.DB = storetest.DSN(t, dialect[0])
		}
	})
}

// api calls the merchant API with project A's key and returns the JSON.
func (d *dash) api(t *testing.T, path string, kv ...string) map[string]any {
	t.Helper()
	return webtest.API(t, d.in, path, kv...)
}

// devnet makes a devnet request (pay, mine) and returns its JSON.
func (d *dash) devnet(t *testing.T, path string, body any) map[string]any {
	t.Helper()
	return webtest.Devnet(t, d.in, path, body)
}

// payBTC pays value to addr on the devnet and mines a block: btc is
// confirmed at depth 1. It returns txid_in.
func (d *dash) payBTC(t *testing.T, addr, value string) string {
	t.Helper()
	txid, _ := d.devnet(t, "/devnet/btc/pay/", map[string]any{"address_in": addr, "value_coin": value})["txid_in"].(string)
	d.devnet(t, "/devnet/btc/mine/", map[string]any{"blocks": 1})
	return txid
}

// xss is an item_description that must render as text.
const xss = `<script>alert(1)</script>`

// xssShown is how html/template writes it.
const xssShown = `&lt;script&gt;alert(1)&lt;/script&gt;`

// paidCheckout creates a checkout of project A (its webhooks to the
// endpoint that answers 500) and pays it in full on the devnet; it returns
// the payment_id, the address and txid_in.
func (d *dash) paidCheckout(t *testing.T, description string) (id, addr, txid string) {
	t.Helper()
	r := d.api(t, "/checkout/request/", "notify_url", d.hook, "value", "25", "currency", "USD",
		"item_description", description, "redirect_url", "https://shop.example/done?order=7&x=1")
	id = r["payment_id"].(string)
	a := d.api(t, "/checkout/address/", "payment_id", id, "coin", "btc")
	addr = a["address_in"].(string)
	txid = d.payBTC(t, addr, a["value_coin"].(string))
	return id, addr, txid
}

// TestDashboardCheckouts: project A's user lists its checkouts, newest
// first, with their invoice_status, payments and received amount; filters
// them by status and date (a bad value is a 400 naming it); opens a paid
// one and finds its payment, its webhooks and its hosted page; an
// item_description of <script> is text on both pages.
func TestDashboardCheckouts(t *testing.T) {
	t.Parallel()
	for _, dialect := range storetest.Dialects() {
		t.Run(string(dialect), func(t *testing.T) {
			t.Parallel()
			testDashboardCheckouts(t, devDash(t, dialect))
		})
	}
}

func testDashboardCheckouts(t *testing.T, d *dash) {
	paid, addr, txid := d.paidCheckout(t, xss)
	waiting := d.api(t, "/checkout/request/", "notify_url", d.hook, "value", "9.5", "item_description", "A pen")["payment_id"].(string)
	logs := d.api(t, "/checkout/logs/", "payment_id", paid)
	if logs["invoice_status"] != "paid" {
		t.Fatalf("logs: %v", logs)
	}

	a := d.user(t)
	a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/checkouts/", nil)
	list.Want(t, 200, `href="/dashboard/checkouts/`+paid+`/"`, `href="/dashboard/checkouts/`+waiting+`/"`,
		xssShown, "25.00 USD", "9.50 USD", `<span class="badge st-paid">paid</span>`, `<span class="badge st-waiting">waiting</span>`,
		"25.00 USD<br>", " BTC</span>", `aria-current="page">Checkouts`)
	list.WantNot(t, xss)
	if strings.Index(list.Body, waiting) > strings.Index(list.Body, paid) {
		t.Error("not newest first")
	}

	today := d.clock.Now().Format("2006-01-02")
	for _, tc := range []struct {
		query      string
		has, hasnt string
	}{
		{"?status=paid", paid, waiting},
		{"?status=waiting", waiting, paid},
		{"?status=expired", "No checkouts match.", paid},
		{"?from=" + today + "&to=" + today, paid, "No checkouts match."},
		{"?to=2026-11-01", "No checkouts match.", paid},
	} {
		p := a.do(http.MethodGet, "/dashboard/checkouts/"+tc.query, nil)
		p.Want(t, 200, tc.has)
		p.WantNot(t, tc.hasnt)
	}
	for _, tc := range []struct{ query, names string }{
		{"?status=shipped", "status: &#34;shipped&#34; is not an invoice_status"},
		{"?from=yesterday", "from is not a date"},
		{"?to=2026-13-01", "to is not a date"},
		{"?cursor=abc", "cursor: "},
	} {
		a.do(http.MethodGet, "/dashboard/checkouts/"+tc.query, nil).Want(t, 400, `id="filter-error"`, tc.names)
	}

	detail := a.do(http.MethodGet, "/dashboard/checkouts/"+paid+"/", nil)
	detail.Want(t, 200, `<span id="invoice-status" class="badge st-paid">paid</span>`, "25.00 USD", xssShown,
		addr, txid, `<span class="badge st-completed">completed</span>`, "held on the payment address",
		`<a id="payment-url" href="`+d.in.BaseURL+"/payment/"+paid+`/">`,
		`<code id="redirect-url">https://shop.example/done?order=7&amp;x=1</code>`,
		`<code id="notify-url">`+d.hook+`</code>`, "checkout.payment.confirmed", "Expires")
	detail.WantNot(t, xss, `href="https://shop.example`)
	// Every webhook of the checkout is linked to its page.
	ns, _ := logs["notifications"].([]any)
	if len(ns) == 0 {
		t.Fatalf("no webhooks in the logs: %v", logs)
	}
	for _, n := range ns {
		uuid := n.(map[string]any)["uuid"].(string)
		detail.Want(t, 200, `href="/dashboard/notifications/`+uuid+`/"`)
	}
	a.do(http.MethodGet, "/dashboard/checkouts/"+waiting+"/", nil).Want(t, 200,
		`<span id="invoice-status" class="badge st-waiting">waiting</span>`, "9.50 USD", "No coin chosen yet.", "No payment yet.", "No webhook sent")

	// The invoice_status follows the clock as the API's does: past its
	// expiry the unpaid checkout is expired, the paid one stays paid.
	d.clock.Advance(2 * time.Hour)
	a.do(http.MethodGet, "/dashboard/checkouts/"+waiting+"/", nil).Want(t, 200, `<span id="invoice-status" class="badge st-expired">expired</span>`)
	a.do(http.MethodGet, "/dashboard/checkouts/?status=expired", nil).Want(t, 200, waiting)
	a.do(http.MethodGet, "/dashboard/checkouts/?status=paid", nil).Want(t, 200, paid)
	if st := d.api(t, "/checkout/logs/", "payment_id", waiting)["invoice_status"]; st != "expired" {
		t.Fatalf("the API says %v", st)
	}

	// Unknown, malformed and misplaced ids are all 404.
	for _, path := range []string{
		"/dashboard/checkouts/chk_nothere/", "/dashboard/checkouts/CHK_X/", "/dashboard/checkouts/chk_a%3Cb/",
		"/dashboard/checkouts/" + paid + "/more", "/dashboard/deposits/" + paid + "/", "/dashboard/checkouts/" + strings.Repeat("a", 80) + "/",
	} {
		a.do(http.MethodGet, path, nil).Want(t, 404)
	}
	if p := a.do(http.MethodGet, "/dashboard/checkouts/"+paid, nil); p.Code != http.StatusMovedPermanently || p.Header.Get("Location") != "/dashboard/checkouts/"+paid+"/" {
		t.Errorf("without the slash: %d %v", p.Code, p.Header)
	}
	if p := a.do(http.MethodGet, "/dashboard/checkouts?status=paid", nil); p.Code != http.StatusMovedPermanently || p.Header.Get("Location") != "/dashboard/checkouts/?status=paid" {
		t.Errorf("listing without the slash: %d %v", p.Code, p.Header)
	}
	a.do(http.MethodPost, "/dashboard/checkouts/", url.Values{"csrf": {csrf(t, list)}}).Want(t, http.StatusMethodNotAllowed)
}

// TestDashboardDeposits: a deposit has no amount, collects payments, and
// is paid from its first confirmed one.
func TestDashboardDeposits(t *testing.T) {
	t.Parallel()
	d := devDash(t)
	id := d.api(t, "/deposit/request/", "notify_url", d.hook, "item_description", "Top up "+xss)["payment_id"].(string)
	addr := d.api(t, "/deposit/address/", "payment_id", id, "coin", "btc")["address_in"].(string)
	tx1 := d.payBTC(t, addr, "0.01")
	tx2 := d.payBTC(t, addr, "0.02")
	a := d.user(t)
	a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/deposits/", nil)
	list.Want(t, 200, `href="/dashboard/deposits/`+id+`/"`, "any amount (USD)", "Top up "+xssShown, `<td class="num">2</td>`, "0.03 BTC", `aria-current="page">Deposits`)
	list.WantNot(t, xss)
	a.do(http.MethodGet, "/dashboard/deposits/?status=paid", nil).Want(t, 200, id)
	a.do(http.MethodGet, "/dashboard/deposits/?status=nope", nil).Want(t, 400, "status:")
	a.do(http.MethodGet, "/dashboard/checkouts/", nil).Want(t, 200, "No checkouts match.")
	detail := a.do(http.MethodGet, "/dashboard/deposits/"+id+"/", nil)
	detail.Want(t, 200, `<span id="invoice-status" class="badge st-paid">paid</span>`, "any amount (USD)", tx1, tx2,
		`href="`+d.in.BaseURL+"/deposit/"+id+`/"`, "deposit.payment.confirmed")
	detail.WantNot(t, xss, `id="expires"`)
	a.do(http.MethodGet, "/dashboard/checkouts/"+id+"/", nil).Want(t, 404)
}

// TestDashboardSubscriptions: a subscription paid on the devnet is active
// until its period ends, with its plans, the renewal and its payment, its
// webhooks and a link to the customer's page.
func TestDashboardSubscriptions(t *testing.T) {
	t.Parallel()
	d := devDash(t)
	s := d.api(t, "/subscription/create/", "notify_url", d.hook, "currency", "USD", "customer", "cust "+xss,
		"option", "1m:50", "option", "12m:500")
	tok := s["token"].(string)
	pending := d.api(t, "/subscription/create/", "notify_url", d.hook, "option", "1w:3")["token"].(string)
	r := d.api(t, "/subscription/address/", "token", tok, "coin", "btc", "option", "1m")
	renewal := r["payment_id"].(string)
	txid := d.payBTC(t, r["address_in"].(string), r["value_coin"].(string))
	open := d.api(t, "/subscription/address/", "token", tok, "coin", "btc", "option", "12m")["payment_id"].(string)
	fetched, _ := d.api(t, "/subscription/fetch/", "token", tok)["subscription"].(map[string]any)
	if fetched["status"] != "active" {
		t.Fatalf("fetch: %v", fetched)
	}

	a := d.user(t)
	a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/subscriptions/", nil)
	list.Want(t, 200, `href="/dashboard/subscriptions/`+tok+`/"`, `href="/dashboard/subscriptions/`+pending+`/"`,
		`<span class="badge st-active">active</span>`, `<span class="badge st-pending">pending</span>`,
		"1 month: 50.00 USD", "12 months: 500.00 USD", "cust "+xssShown)
	list.WantNot(t, xss)
	a.do(http.MethodGet, "/dashboard/subscriptions/?status=active", nil).Want(t, 200, tok)
	a.do(http.MethodGet, "/dashboard/subscriptions/?status=pending", nil).WantNot(t, tok)
	a.do(http.MethodGet, "/dashboard/subscriptions/?status=paid", nil).Want(t, 400, "status:")
	a.do(http.MethodGet, "/dashboard/subscriptions/?from=11/24/2026", nil).Want(t, 400, "from is not a date")

	detail := a.do(http.MethodGet, "/dashboard/subscriptions/"+tok+"/", nil)
	detail.Want(t, 200, `<span id="sub-status" class="badge st-active">active</span>`, `id="renewal-`+renewal+`"`, txid,
		`<a id="subscription-url" href="`+d.in.BaseURL+"/subscription/"+tok+`/">`, "cust "+xssShown,
		`id="open-renewals"`, open, "subscription.payment.confirmed", `href="/dashboard/notifications/`)
	detail.WantNot(t, xss)
	// The paid period ends when the API says it does.
	exp, err := strconv.ParseInt(fmt.Sprint(fetched["expires_at"]), 10, 64)
	if err != nil || exp == 0 {
		t.Fatalf("expires_at %v", fetched["expires_at"])
	}
	detail.Want(t, 200, `<dd id="expires">`+time.Unix(exp, 0).UTC().Format("2006-01-02 15:04:05 UTC")+`</dd>`)
	a.do(http.MethodGet, "/dashboard/subscriptions/"+pending+"/", nil).Want(t, 200, "never paid", "No renewal has been paid into yet.")

	// Past the paid period: expired.
	d.clock.Advance(40 * 24 * time.Hour)
	a.signIn(d.emailA, password) // the session ended meanwhile
	a.do(http.MethodGet, "/dashboard/subscriptions/"+tok+"/", nil).Want(t, 200, `<span id="sub-status" class="badge st-expired">expired</span>`)
	for _, path := range []string{"/dashboard/subscriptions/sub_nothere/", "/dashboard/subscriptions/" + renewal + "/", "/dashboard/subscriptions/sub_A/"} {
		a.do(http.MethodGet, path, nil).Want(t, 404)
	}
}

// TestDashboardInvoicesOtherProject: project B's user gets project A's
// checkout, deposit and subscription as 404s, exactly like unknown ones,
// and its listings do not name them.
func TestDashboardInvoicesOtherProject(t *testing.T) {
	t.Parallel()
	d := devDash(t)
	chk, _, _ := d.paidCheckout(t, "A's order")
	dep := d.api(t, "/deposit/request/", "notify_url", d.hook)["payment_id"].(string)
	sub := d.api(t, "/subscription/create/", "notify_url", d.hook, "option", "1m:10")["token"].(string)
	b := d.user(t)
	b.signIn(d.emailB, password)
	unknown := b.do(http.MethodGet, "/dashboard/checkouts/chk_nothere/", nil)
	unknown.Want(t, 404)
	for _, path := range []string{"/dashboard/checkouts/" + chk + "/", "/dashboard/deposits/" + dep + "/", "/dashboard/subscriptions/" + sub + "/"} {
		p := b.do(http.MethodGet, path, nil)
		p.Want(t, 404)
		if p.Body != unknown.Body {
			t.Errorf("%s: another project's 404 differs from an unknown id's", path)
		}
	}
	b.do(http.MethodGet, "/dashboard/checkouts/", nil).Want(t, 200, "No checkouts match.")
	b.do(http.MethodGet, "/dashboard/deposits/", nil).Want(t, 200, "No deposits match.")
	b.do(http.MethodGet, "/dashboard/subscriptions/", nil).Want(t, 200, "No subscriptions match.")
	// Signed out: sent to sign in, nothing shown.
	anon := d.user(t)
	if p := anon.do(http.MethodGet, "/dashboard/checkouts/"+chk+"/", nil); p.Code != http.StatusSeeOther || strings.Contains(p.Body, chk) {
		t.Errorf("signed out: %d", p.Code)
	}
}
