package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// phoneWidth is the narrowest common phone viewport, in CSS pixels.
const phoneWidth = 360

// atPhoneWidth emulates a 360px-wide mobile device (viewport meta tag
// honoured, touch, device scale 2).
func atPhoneWidth() chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(phoneWidth, 740, chromedp.EmulateScale(2), chromedp.EmulateMobile)
}

// fitsWidth fails when the page at url scrolls sideways at phone width:
// only a table's own .scroll box may be wider than the screen.
func fitsWidth(t *testing.T, ctx context.Context, url, ready string) {
	t.Helper()
	var width int64
	var wide []string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(ready)),
		into(&width, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`)),
		// The elements that stick out, for the failure message.
		into(&wide, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("body *"))
			.filter(e => !e.closest(".scroll") && e.getBoundingClientRect().right > window.innerWidth + 0.5)
			.map(e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : ""))`)),
	); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if width > phoneWidth {
		t.Errorf("%s is %dpx wide at a %dpx viewport; too wide: %s", url, width, phoneWidth, strings.Join(wide, ", "))
	}
}

// TestBrowserPhoneWidth opens every hosted page and dashboard page on an
// emulated 360px phone and checks that none scrolls sideways (tables
// scroll inside their own box).
func TestBrowserPhoneWidth(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	if err := chromedp.Do(ctx, atPhoneWidth()); err != nil {
		t.Fatal(err)
	}
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
		fitsWidth(t, ctx, p.url, p.ready)
	}
	if a["address_in"] == "" {
		t.Fatal("no address")
	}

	dd := newDash(t)
	id := dd.failedNotification(t)
	fitsWidth(t, ctx, dd.in.BaseURL+"/dashboard/signin", "#signin-form")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#email`), dd.emailA),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#failed`)),
	); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	for _, p := range []struct{ path, ready string }{
		{"/dashboard/notifications/", "#failed"},
		{"/dashboard/notifications/" + id + "/", "#attempt-1"},
		{"/dashboard/checkouts/", "main h1"},
		{"/dashboard/deposits/", "main h1"},
		{"/dashboard/subscriptions/", "main h1"},
		{"/dashboard/settings/", "#rotate"},
		{"/dashboard/activity/", "main h1"},
	} {
		fitsWidth(t, ctx, dd.in.BaseURL+p.path, p.ready)
	}
}
