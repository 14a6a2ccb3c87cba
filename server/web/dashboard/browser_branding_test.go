package dashboard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardBranding: in a real browser, the merchant sets the
// hosted pages' colour and support contact and uploads a logo file on the
// settings page (the one multipart form); the preview shows the logo, and
// a checkout's hosted page then shows the logo, the colour and the
// contact.
func TestBrowserDashboardBranding(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := devDash(t)
	file := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(file, testPNG(t), 0o600); err != nil {
		t.Fatal(err)
	}
	var width int64
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/#branding"),
		chromedp.WaitVisible(chromedp.CSS(`#branding-form`)),
		chromedp.SendKeys(chromedp.CSS(`#brand-color`), "#228844"),
		chromedp.SendKeys(chromedp.CSS(`#support-contact`), "help@shop.example"),
		chromedp.Click(chromedp.CSS(`#save-branding`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		chromedp.SetUploadFiles(chromedp.CSS(`#logo-file`), []string{file}),
		chromedp.Click(chromedp.CSS(`#upload-logo`)),
		chromedp.WaitVisible(chromedp.CSS(`#logo-preview`)),
		webtest.Until(`document.getElementById("logo-preview").complete && document.getElementById("logo-preview").naturalWidth > 0`, 10*time.Second),
		webtest.Into(&width, chromedp.Evaluate[int64](`document.getElementById("logo-preview").naturalWidth`)),
		webtest.Shot("dashboard-branding.png"),
	); err != nil {
		t.Fatalf("settings: %v", err)
	}
	if width != 60 {
		t.Fatalf("preview %dpx wide, want 60", width)
	}
	r := d.api(t, "/checkout/request/", "notify_url", d.hook, "value", "12.00", "currency", "USD")
	var support, button string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(r["payment_url"].(string)),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		webtest.Until(`document.getElementById("shop-logo").complete && document.getElementById("shop-logo").naturalWidth === 60`, 10*time.Second),
		webtest.Into(&support, chromedp.Text(chromedp.CSS(`#support`))),
		webtest.Into(&button, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("choose")).backgroundColor`)),
	); err != nil {
		t.Fatalf("hosted page: %v", err)
	}
	if !strings.Contains(support, "help@shop.example") || button != "rgb(34, 136, 68)" {
		t.Fatalf("hosted page: support %q, button %s", support, button)
	}
}
