package dashboard_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardExport: a user of project A signs in, opens Export
// from the navigation, keeps the offered range (this month up to today),
// chooses CSV and clicks Download; the browser saves the file under the
// name the server gives (ledger-FROM-TO.csv), and its rows are the
// project's two payments, in order. The page fits a phone's width.
func TestBrowserDashboardExport(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t, func(c *server.Config) { c.Dev = true })
	d.payWallet(t, "0.5", "0.25")

	dir := t.TempDir()
	type download struct{ name, path string }
	began := make(chan string, 1)
	done := make(chan download, 1)
	names := map[string]string{}
	if err := chromedp.ListenBrowser(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *browser.EventDownloadWillBegin:
			names[ev.GUID] = ev.SuggestedFilename
			select {
			case began <- ev.GUID:
			default:
			}
		case *browser.EventDownloadProgress:
			if ev.State == browser.DownloadProgressStateCompleted {
				select {
				case done <- download{name: names[ev.GUID], path: filepath.Join(dir, ev.GUID)}:
				default:
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	events := true
	if _, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/export/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#download`)),
		chromedp.SetValue(chromedp.CSS(`#format`), "csv"),
		webtest.Shot("dashboard-export.png"),
		chromedp.Click(chromedp.CSS(`#download`)),
	); err != nil {
		t.Fatalf("export page: %v", err)
	}
	wait, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got download
	select {
	case got = <-done:
	case <-wait.Done():
		select {
		case guid := <-began:
			t.Fatalf("download %s began and did not complete", guid)
		default:
			t.Fatal("clicking Download downloaded nothing")
		}
	}
	if got.name != "ledger-2026-11-01-2026-11-25.csv" {
		t.Errorf("downloaded file named %q, want ledger-2026-11-01-2026-11-25.csv", got.name)
	}
	b, err := os.ReadFile(got.path)
	if err != nil {
		t.Fatal(err)
	}
	var amounts []string
	for _, r := range csvRows(t, b) {
		if r[2] != "payment" || r[3] != "ltc" {
			t.Errorf("row %v: want an ltc payment", r)
		}
		amounts = append(amounts, r[4])
	}
	if !slices.Equal(amounts, []string{"0.5", "0.25"}) {
		t.Errorf("downloaded amounts %v, want the two payments in order\n%s", amounts, b)
	}
	// The page fits a phone's width, as every dashboard page does.
	if err := chromedp.Do(ctx, webtest.AtPhoneWidth()); err != nil {
		t.Fatal(err)
	}
	webtest.FitsWidth(t, ctx, d.in.BaseURL+"/dashboard/export/", "#download")
}
