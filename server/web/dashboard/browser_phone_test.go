package dashboard_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserPhoneWidth opens every dashboard page on an emulated 360px
// phone and checks that none scrolls sideways (tables scroll inside their
// own box).
func TestBrowserPhoneWidth(t *testing.T) {
	t.Parallel()
	ctx := webtest.PhoneBrowser(t)
	dd := newDash(t)
	id := dd.failedNotification(t)
	webtest.FitsWidth(t, ctx, dd.in.BaseURL+"/dashboard/signin", "#signin-form")
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
		webtest.FitsWidth(t, ctx, dd.in.BaseURL+p.path, p.ready)
	}
}
