package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardLive signs in to the dashboard in a real browser,
// opens a failed notification, resends it, and sees the new attempt and
// status appear without a reload once the dispatcher has made it (the
// page listens to /dashboard/events); the notifications list announces a
// new notification; the activity page shows its two plots.
func TestBrowserDashboardLive(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t)
	id := d.failedNotification(t)
	link := `#failed a[href="/dashboard/notifications/` + id + `/"]`
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/signin"),
		chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), d.emailA),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(link)),
		chromedp.Click(chromedp.CSS(link)),
		chromedp.WaitVisible(chromedp.CSS(`#attempt-1`)),
		chromedp.Click(chromedp.CSS(`#resend`)),
		chromedp.WaitVisible(chromedp.CSS(`#resent`)),
		// The resent page's stream is open: what happens now arrives
		// as an event.
		webtest.Until(`document.documentElement.dataset.live === "open"`, 20*time.Second),
		webtest.Into(new(bool), chromedp.Evaluate[bool](`window.__sameDocument = true`)),
	); err != nil {
		t.Fatalf("sign in, open, resend: %v", err)
	}
	if ok, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("attempt-2") === null`)); !ok {
		t.Fatal("attempt 2 is on the page before the dispatcher made it")
	}
	d.runDue(t)
	var second, status string
	var same bool
	if err := chromedp.Do(ctx,
		// Looked up afresh at each try: an event may replace the row.
		webtest.Until(`(document.getElementById("attempt-2") || {textContent: ""}).textContent.includes("database is down") &&
			document.getElementById("n-status").textContent.trim() === "failed"`, 20*time.Second),
		webtest.Into(&second, chromedp.Evaluate[string](`document.getElementById("attempt-2").textContent`)),
		webtest.Into(&status, chromedp.Evaluate[string](`document.getElementById("n-status").textContent.trim()`)),
		webtest.Into(&same, chromedp.Evaluate[bool](`window.__sameDocument === true`)),
		webtest.Shot("dashboard-live.png"),
	); err != nil {
		t.Fatalf("the resent attempt, live: %v", err)
	}
	if !same {
		t.Fatal("the page was reloaded")
	}
	if !strings.Contains(second, "500") || !strings.Contains(second, "database is down") || status != "failed" {
		t.Fatalf("attempt 2 row %q, status %q", second, status)
	}

	// The list announces a notification stored after it was rendered.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/notifications/"),
		chromedp.WaitVisible(chromedp.CSS(link)),
		webtest.Until(`document.documentElement.dataset.live === "open"`, 20*time.Second),
	); err != nil {
		t.Fatalf("notifications list: %v", err)
	}
	fresh := d.testWebhook(t, d.in.KeyA)
	d.seedActivity(t, fresh)
	var plots int
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#live-note`)),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/activity/"),
		chromedp.WaitVisible(chromedp.CSS(`#deliveries-plot rect.out-failed`)),
		chromedp.WaitVisible(chromedp.CSS(`#latency-plot circle.lat-p50`)),
		webtest.Into(&plots, chromedp.Evaluate[int](`document.querySelectorAll("svg.plot").length`)),
		webtest.Shot("dashboard-activity.png"),
	); err != nil {
		t.Fatalf("activity page: %v", err)
	}
	if plots != 2 {
		t.Fatalf("%d plots", plots)
	}
}

// seedActivity records made-up attempts of notification id over the last
// two days (a fixed pattern: a busy afternoon, a failing night, one
// blocked and one interrupted attempt), so the activity page's picture
// shows what its plots look like with traffic.
func (d *dash) seedActivity(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	n, err := d.in.Server.Notifier().Queue.Get(ctx, d.in.ProjectA, id)
	if err != nil {
		t.Fatal(err)
	}
	now := d.clock.Now().Truncate(time.Hour)
	number := 100
	add := func(at time.Time, outcome deliveryattempt.Outcome, ms int64) {
		number++
		if err := d.in.Server.DB().Client.DeliveryAttempt.Create().SetNotificationID(n.ID).SetNumber(number).
			SetStartedAt(at).SetRequestMethod("POST").SetRequestURL(d.hook).SetOutcome(outcome).SetDurationMs(ms).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for h := 1; h < 47; h++ {
		at := now.Add(-time.Duration(h) * time.Hour)
		busy := 2 + (at.Hour()*7)%5
		if at.Hour() >= 12 && at.Hour() < 18 {
			busy += 6
		}
		for i := range busy {
			add(at.Add(time.Duration(i)*time.Minute), deliveryattempt.OutcomeAcknowledged, int64(60+(i*37+h*11)%140))
		}
		if at.Hour() >= 1 && at.Hour() < 4 {
			add(at.Add(30*time.Minute), deliveryattempt.OutcomeFailed, 30_000)
			add(at.Add(40*time.Minute), deliveryattempt.OutcomeFailed, 1_200)
		}
	}
	add(now.Add(-20*time.Hour), deliveryattempt.OutcomeBlocked, 0)
	add(now.Add(-9*time.Hour), deliveryattempt.OutcomeInterrupted, 5_000)
}
