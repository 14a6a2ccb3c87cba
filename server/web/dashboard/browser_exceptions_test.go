package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardExceptions: in a real browser at a phone's width, a
// user sets the project's payment exceptions (an underpaid tolerance, late
// payments held for a refund, overpayment refunds sent at once) and they
// are the project's; an out-of-range tolerance is refused on the page,
// naming it, and changes nothing.
func TestBrowserDashboardExceptions(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t)
	settings := d.in.BaseURL + "/dashboard/settings/"
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(settings),
		chromedp.WaitVisible(chromedp.CSS(`#underpaid-tolerance`)),
		chromedp.SetValue(chromedp.CSS(`#underpaid-tolerance`), "1.5"),
		chromedp.Click(chromedp.CSS(`#late-refund`)),
		chromedp.Click(chromedp.CSS(`#auto-refund`)),
		chromedp.Click(chromedp.CSS(`#save-exceptions`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		webtest.Shot("dashboard-exceptions.png"),
	); err != nil {
		t.Fatalf("save the exceptions: %v", err)
	}
	p, err := d.in.Server.DB().Client.Project.Get(context.Background(), d.in.ProjectA)
	if err != nil || p.UnderpaidTolerance.String() != "1.5" || p.LatePayments != entproject.LatePaymentsRefund || !p.AutoRefundOverpaid {
		t.Fatalf("the project after saving: tolerance %s, late %s, auto %v (%v)", p.UnderpaidTolerance, p.LatePayments, p.AutoRefundOverpaid, err)
	}
	var refused string
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#underpaid-tolerance`), "101"),
		chromedp.Click(chromedp.CSS(`#save-exceptions`)),
		chromedp.WaitVisible(chromedp.CSS(`#exceptions-error`)),
		webtest.Until(`(document.querySelector("#exceptions-error")?.innerText ?? "") !== ""`, 30*time.Second),
		webtest.Into(&refused, chromedp.Text(chromedp.CSS(`#exceptions-error`))),
	); err != nil {
		t.Fatalf("a bad tolerance: %v", err)
	}
	if !strings.Contains(refused, "underpaid_tolerance") {
		t.Errorf("the refusal says %q", refused)
	}
	if p, _ := d.in.Server.DB().Client.Project.Get(context.Background(), d.in.ProjectA); p.UnderpaidTolerance.String() != "1.5" {
		t.Errorf("a refused tolerance changed it to %s", p.UnderpaidTolerance)
	}
}
