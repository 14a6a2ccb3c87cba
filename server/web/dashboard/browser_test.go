package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboard signs in to the dashboard in a real browser, finds
// the failed notification at the top of the list, opens it, resends it
// with the button (a form: no script needed), and sees the new attempt
// listed once the dispatcher has made it.
func TestBrowserDashboard(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t)
	id := d.failedNotification(t)
	var rule string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), d.emailA),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		webtest.Shot("dashboard-signin.png"),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#failed a[href="/dashboard/notifications/`+id+`/"]`)),
		webtest.Shot("dashboard-notifications.png"),
		webtest.ClickFresh(`#failed a[href="/dashboard/notifications/`+id+`/"]`),
		chromedp.WaitVisible(chromedp.CSS(`#attempt-1`)),
		webtest.Into(&rule, chromedp.Text(chromedp.CSS(`#resend-rule`))),
		webtest.ClickFresh(`#resend`),
		chromedp.WaitVisible(chromedp.CSS(`#resent`)),
	); err != nil {
		t.Fatalf("sign in, open, resend: %v", err)
	}
	if !strings.Contains(rule, "exactly one extra attempt") {
		t.Fatalf("resend rule shown: %q", rule)
	}
	d.runDue(t)
	var second string
	if err := chromedp.Do(ctx,
		chromedp.Reload(),
		// Polling starts in the reloaded page's own context: evaluating
		// while the old one is torn down fails with "Cannot find context
		// with specified id" (seen under load in CI).
		chromedp.WaitVisible(chromedp.CSS(`#attempt-1`)),
		// The live stream may swap the row in again after the page loads:
		// the row is looked up afresh at each try, never held across the
		// swap (a held node can be gone by the time it is read).
		webtest.Until(`(document.getElementById("attempt-2") || {textContent: ""}).textContent.includes("database is down")`, 10*time.Second),
		webtest.Into(&second, chromedp.Evaluate[string](`document.getElementById("attempt-2").textContent`)),
		webtest.Shot("dashboard-notification.png"),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/"),
		chromedp.Click(chromedp.CSS(`#rotate`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)),
		webtest.Shot("dashboard-secret.png"),
	); err != nil {
		t.Fatalf("the resent attempt: %v", err)
	}
	if !strings.Contains(second, "500") || !strings.Contains(second, "database is down") {
		t.Fatalf("attempt 2 row: %q", second)
	}
}

// signIn opens the dashboard at base and signs in as email (with the
// tests' password), waiting until the signed-in page shows.
func signIn(base, email string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), email),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#signout`)),
	)
}
