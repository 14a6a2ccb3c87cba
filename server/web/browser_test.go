package web_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/chains/nodetest"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write the hosted pages' screenshots to docs/screenshots/")

// screenshotDir is docs/screenshots/ from this package's directory.
const screenshotDir = "../../docs/screenshots"

// browser starts headless Chromium at a phone's width; it is closed
// before the test ends. Without Chromium the test is skipped (failed in
// CI).
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := nodetest.Need(t, "chromium", "apt-get install -y chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(390, 844),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// shot saves a full-page PNG as docs/screenshots/name when
// -update-screenshots is set.
func shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if !*updateScreenshots {
			return nil
		}
		png, err := chromedp.FullScreenshot(100)(ctx, t)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(screenshotDir, name), png, 0o644)
	})
}

// into runs a and stores its value in dst.
func into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		v, err := a(ctx, t)
		*dst = v
		return err
	})
}

// until polls a JavaScript condition until it is true, for at most d.
func until(cond string, d time.Duration) chromedp.Action[chromedp.Void] {
	var ok bool
	return into(&ok, chromedp.Poll[bool](cond, chromedp.WithPollingTimeout(d)))
}

// TestBrowserCheckout opens a checkout page in a real browser at a phone's
// width, chooses a coin, pays the shown amount to the shown address on
// the devnet, and watches the page report paid and send the customer to
// redirect_url with the success token. It also checks, in the browser,
// that an item_description of <script> is text and runs nothing, and
// renders the deposit and subscription pages.
func TestBrowserCheckout(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	e := newEnv(t)
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Shop</title><h1 id="thanks">Thank you for your order</h1>`)
	}))
	t.Cleanup(shop.Close)

	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25.00", "currency", "USD",
		"item_description", "Order #7: The Go Programming Language (paperback)", "redirect_url", shop.URL+"/done?order=7")
	pageURL, token := r["payment_url"].(string), r["success_token"].(string)

	var addr, amount, statusText string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		shot("checkout-choose.png"),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="btc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		// The script shows the copy buttons and starts the countdown.
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="address"]`)),
		until(`document.getElementById("countdown").textContent.endsWith("left")`, 10*time.Second),
		into(&addr, chromedp.Text(chromedp.CSS(`#address`))),
		into(&amount, chromedp.Text(chromedp.CSS(`#amount`))),
		into(&statusText, chromedp.Text(chromedp.CSS(`#status`))),
		shot("checkout-address.png"),
	); err != nil {
		t.Fatalf("choose a coin: %v", err)
	}
	a := e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "btc")
	if addr != a["address_in"] || amount != a["value_coin"] || !strings.Contains(statusText, "Waiting") {
		t.Fatalf("page shows %q %q %q; the API %v", addr, amount, statusText, a)
	}

	e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addr, "value_coin": amount})
	e.post(t, "/devnet/btc/mine/", map[string]any{"blocks": 1})
	var final string
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#status.status-paid`)),
		shot("checkout-paid.png"),
	); err != nil {
		t.Fatalf("paid: %v", err)
	}
	// The redirect replaces the page a poll runs in: poll again on the
	// new page until the shop's page is there.
	deadline := time.Now().Add(15 * time.Second)
	for {
		arrived, err := chromedp.Run(ctx, chromedp.Poll[bool](`location.pathname === "/done" && document.getElementById("thanks") !== null`,
			chromedp.WithPollingTimeout(5*time.Second)))
		if err == nil && arrived {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not redirected to the shop: %v", err)
		}
	}
	if err := chromedp.Do(ctx, into(&final, chromedp.Location())); err != nil {
		t.Fatal(err)
	}
	if want := shop.URL + "/done?order=7&success_token=" + token; final != want {
		t.Fatalf("redirected to %s, want %s", final, want)
	}

	// An item_description of markup is text, and runs nothing.
	evil := `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	x := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "5", "item_description", evil)
	var shown string
	var clean bool
	if err := chromedp.Do(ctx,
		chromedp.Navigate(x["payment_url"].(string)),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		into(&shown, chromedp.Text(chromedp.CSS(`#description`))),
		into(&clean, chromedp.Evaluate[bool](`window.__xss === undefined && document.querySelectorAll("#description *").length === 0`)),
	); err != nil {
		t.Fatal(err)
	}
	if shown != evil || !clean {
		t.Fatalf("description shown as %q, nothing ran: %v", shown, clean)
	}

	// The deposit page, with an address chosen.
	d := e.request(t, "/deposit/request/", "notify_url", notifyURL, "item_description", "Account top-up")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d["payment_url"].(string)),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="ltc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		shot("deposit-address.png"),
	); err != nil {
		t.Fatalf("deposit page: %v", err)
	}

	// The subscription page: plans, then a renewal's address.
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "customer", "alice@example.com",
		"option", "1m:10.00", "option", "12m:100.00")
	subURL := s["subscription_url"].(string)
	var sub string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(subURL),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		shot("subscription-plans.png"),
		chromedp.Click(chromedp.CSS(`input[name="option"][value="12m"]`)),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="btc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		into(&sub, chromedp.Text(chromedp.CSS(`main`))),
		shot("subscription-renewal.png"),
	); err != nil {
		t.Fatalf("subscription page: %v", err)
	}
	if !strings.Contains(sub, "Renewal: 12 months") || !strings.Contains(sub, "100.00 USD") {
		t.Fatalf("subscription renewal page: %s", sub)
	}
}

// TestBrowserDashboard signs in to the dashboard in a real browser, finds
// the failed notification at the top of the list, opens it, resends it
// with the button (a form: no script needed), and sees the new attempt
// listed once the dispatcher has made it.
func TestBrowserDashboard(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	d := newDash(t)
	id := d.failedNotification(t)
	var rule string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), d.emailA),
		chromedp.SendKeys(chromedp.CSS(`#password`), password),
		shot("dashboard-signin.png"),
		chromedp.Click(chromedp.CSS(`#signin`)),
		chromedp.WaitVisible(chromedp.CSS(`#failed a[href="/dashboard/notifications/`+id+`/"]`)),
		shot("dashboard-notifications.png"),
		chromedp.Click(chromedp.CSS(`#failed a[href="/dashboard/notifications/`+id+`/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#attempt-1`)),
		into(&rule, chromedp.Text(chromedp.CSS(`#resend-rule`))),
		chromedp.Click(chromedp.CSS(`#resend`)),
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
		chromedp.WaitVisible(chromedp.CSS(`#attempt-2`)),
		into(&second, chromedp.Text(chromedp.CSS(`#attempt-2`))),
		shot("dashboard-notification.png"),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/"),
		chromedp.Click(chromedp.CSS(`#rotate`)),
		chromedp.WaitVisible(chromedp.CSS(`#new-secret`)),
		shot("dashboard-secret.png"),
	); err != nil {
		t.Fatalf("the resent attempt: %v", err)
	}
	if !strings.Contains(second, "500") || !strings.Contains(second, "database is down") {
		t.Fatalf("attempt 2 row: %q", second)
	}
}
