package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardCheckouts signs in to the dashboard in a real
// browser at a phone's width, opens the checkouts listing, follows the
// paid checkout's link and finds its invoice_status, payment and webhooks,
// with an item_description of markup shown as text that runs nothing; then
// opens a paid subscription.
func TestBrowserDashboardCheckouts(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := devDash(t)
	evil := `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	d.api(t, "/checkout/request/", "notify_url", d.hook, "value", "9.50", "item_description", "A fountain pen")
	paid, _, txid := d.paidCheckout(t, "Order #7: The Go Programming Language (paperback)")
	x, _, _ := d.paidCheckout(t, evil)
	d.api(t, "/deposit/request/", "notify_url", d.hook, "item_description", "Account top-up")

	var status, payments, shown string
	var clean bool
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), d.emailA),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#all`)),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/checkouts/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#invoices a[href="/dashboard/checkouts/`+paid+`/"]`)),
		webtest.Shot("dashboard-checkouts.png"),
		webtest.Into(&clean, chromedp.Evaluate[bool](`window.__xss === undefined && document.querySelectorAll("#invoices td.desc *").length === 0`)),
		chromedp.Click(chromedp.CSS(`#invoices a[href="/dashboard/checkouts/`+paid+`/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#invoice-status`)),
		webtest.Into(&status, chromedp.Text(chromedp.CSS(`#invoice-status`))),
		webtest.Into(&payments, chromedp.Text(chromedp.CSS(`#payments`))),
		webtest.Shot("dashboard-checkout.png"),
	); err != nil {
		t.Fatalf("sign in, list, open: %v", err)
	}
	if !clean {
		t.Fatal("the listing's item_description ran or became markup")
	}
	if status != "paid" || !strings.Contains(payments, txid) || !strings.Contains(payments, "completed") {
		t.Fatalf("checkout page: status %q, payments %q", status, payments)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/checkouts/"+x+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#description`)),
		webtest.Into(&shown, chromedp.Text(chromedp.CSS(`#description`))),
		webtest.Into(&clean, chromedp.Evaluate[bool](`window.__xss === undefined && document.querySelectorAll("#description *").length === 0`)),
	); err != nil {
		t.Fatal(err)
	}
	if shown != evil || !clean {
		t.Fatalf("description shown as %q, nothing ran: %v", shown, clean)
	}

	s := d.api(t, "/subscription/create/", "notify_url", d.hook, "currency", "USD", "customer", "alice@example.com",
		"option", "1m:50.00", "option", "12m:500.00")
	tok := s["token"].(string)
	r := d.api(t, "/subscription/address/", "token", tok, "coin", "btc", "option", "1m")
	d.payBTC(t, r["address_in"].(string), r["value_coin"].(string))
	d.api(t, "/subscription/address/", "token", tok, "coin", "btc", "option", "12m")
	var subStatus string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/subscriptions/"),
		chromedp.WaitVisible(chromedp.CSS(`#subscriptions a[href="/dashboard/subscriptions/`+tok+`/"]`)),
		chromedp.Click(chromedp.CSS(`#subscriptions a[href="/dashboard/subscriptions/`+tok+`/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sub-status`)),
		webtest.Into(&subStatus, chromedp.Text(chromedp.CSS(`#sub-status`))),
		webtest.Shot("dashboard-subscription.png"),
	); err != nil {
		t.Fatalf("subscription: %v", err)
	}
	if subStatus != "active" {
		t.Fatalf("subscription status %q", subStatus)
	}
}
