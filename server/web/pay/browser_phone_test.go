package pay_test

import (
	"testing"

	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserPhoneWidth opens every hosted page on an emulated 360px phone
// and checks that none scrolls sideways (tables scroll inside their own
// box). The dashboard's pages have theirs in package dashboard.
func TestBrowserPhoneWidth(t *testing.T) {
	t.Parallel()
	ctx := webtest.PhoneBrowser(t)
	e := newEnv(t)
	c := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25.00", "currency", "USD",
		"item_description", "Order #7: The Go Programming Language (paperback), with a rather long description")
	a := e.request(t, "/checkout/address/", "payment_id", c["payment_id"].(string), "coin", "eth")
	d := e.request(t, "/deposit/request/", "notify_url", notifyURL, "item_description", "Account top-up")
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "customer", "alice@example.com",
		"option", "1m:10.00", "option", "12m:100.00")
	pay := c["payment_url"].(string)
	for _, p := range []struct{ url, ready string }{
		{pay, "#choose-form"},
		{pay + "?coin=eth", "#address"},
		{d["payment_url"].(string), "#choose-form"},
		{s["subscription_url"].(string), "#choose-form"},
	} {
		webtest.FitsWidth(t, ctx, p.url, p.ready)
	}
	if a["address_in"] == "" {
		t.Fatal("no address")
	}
}
