package pay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/webtest"
)

// acceptLanguage makes the browser send Accept-Language: v with every
// request, as a browser set to that language does.
func acceptLanguage(v string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": v}})
		return err
	})
}

// TestBrowserDetectedThenPaid: on a checkout's page in a real browser, a
// payment sent but not yet in a block shows "Payment detected" within a
// poll (no block, no webhook); once confirmed the page says paid and the
// payment instructions (address, amount, QR code) and the countdown are
// gone, live and after a reload.
func TestBrowserDetectedThenPaid(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25.00", "currency", "USD", "item_description", "Order #8")
	a := e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "btc")
	pageURL := r["payment_url"].(string) + "?coin=btc"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		webtest.Until(`document.getElementById("countdown").textContent.endsWith("left")`, 10*time.Second),
	); err != nil {
		t.Fatalf("open: %v", err)
	}
	e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a["address_in"], "value_coin": a["value_coin"]})
	var detected string
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#status.status-detected`)),
		webtest.Into(&detected, chromedp.Text(chromedp.CSS(`#status`))),
		webtest.Shot("checkout-detected.png"),
	); err != nil {
		t.Fatalf("detected: %v", err)
	}
	if detected != "Payment detected, waiting for confirmation." {
		t.Fatalf("status in the mempool: %q", detected)
	}
	e.post(t, "/devnet/btc/mine/", map[string]any{"blocks": 1})
	gone := `document.getElementById("pay").hidden && document.getElementById("expiry").hidden &&
		document.getElementById("address").offsetParent === null && document.getElementById("countdown").offsetParent === null`
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#status.status-paid`)),
		webtest.Until(gone, 5*time.Second),
		// Reloaded, the page is rendered paid: no instructions at all.
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`#status.status-paid`)),
		webtest.Until(gone, 5*time.Second),
		webtest.Shot("checkout-paid-done.png"),
	); err != nil {
		t.Fatalf("paid: %v", err)
	}
}

// TestBrowserBranding: the merchant's name, logo (served by payhook and
// decoded by the browser), colour (the buttons') and support contact on
// the checkout page.
func TestBrowserBranding(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	e := newEnv(t)
	if _, err := e.in.Server.DB().Client.Project.UpdateOneID(e.in.ProjectA).SetName("Bücherwurm").Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	logo := pngLogo(t)
	brandColor, contact := "#aa3300", "https://books.example/help"
	e.brand(t, project.Branding{Color: &brandColor, Contact: &contact, Logo: &logo})
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25.00", "currency", "USD")
	var name, support, href, button string
	var logoWidth int64
	if err := chromedp.Do(ctx,
		chromedp.Navigate(r["payment_url"].(string)),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		webtest.Until(`document.getElementById("shop-logo").complete && document.getElementById("shop-logo").naturalWidth > 0`, 10*time.Second),
		webtest.Into(&logoWidth, chromedp.Evaluate[int64](`document.getElementById("shop-logo").naturalWidth`)),
		webtest.Into(&name, chromedp.Text(chromedp.CSS(`#shop-name`))),
		webtest.Into(&support, chromedp.Text(chromedp.CSS(`#support`))),
		webtest.Into(&href, chromedp.Evaluate[string](`document.getElementById("support-link").href`)),
		webtest.Into(&button, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("choose")).backgroundColor`)),
		webtest.Shot("checkout-branded.png"),
	); err != nil {
		t.Fatal(err)
	}
	if name != "Bücherwurm" || logoWidth != 80 || !strings.Contains(support, contact) || href != contact || button != "rgb(170, 51, 0)" {
		t.Fatalf("name %q, logo %dpx wide, support %q (%s), button %s", name, logoWidth, support, href, button)
	}
}

// TestBrowserGerman: a browser set to German gets the checkout page in
// German (choosing a coin, the instructions, the countdown, the status);
// the language switch, a plain link, turns it Spanish, and the choice
// holds on the next page without ?lang=.
func TestBrowserGerman(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	e := newEnv(t)
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "25.00", "currency", "EUR", "item_description", "Bestellung #9")
	var h1, legend, send, status, countdown, lang string
	if err := chromedp.Do(ctx,
		acceptLanguage("de-DE,de;q=0.9,en;q=0.5"),
		chromedp.Navigate(r["payment_url"].(string)),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		webtest.Into(&h1, chromedp.Text(chromedp.CSS(`h1`))),
		webtest.Into(&legend, chromedp.Text(chromedp.CSS(`legend`))),
		webtest.Shot("checkout-choose-de.png"),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="ltc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		webtest.Until(`document.getElementById("countdown").textContent.startsWith("noch ")`, 10*time.Second),
		webtest.Into(&send, chromedp.Text(chromedp.CSS(`#pay .label`))),
		webtest.Into(&status, chromedp.Text(chromedp.CSS(`#status`))),
		webtest.Into(&countdown, chromedp.Text(chromedp.CSS(`#countdown`))),
		webtest.Into(&lang, chromedp.Evaluate[string](`document.documentElement.lang`)),
		webtest.Shot("checkout-address-de.png"),
	); err != nil {
		t.Fatalf("German page: %v", err)
	}
	if h1 != "Zahlung" || legend != "Bezahlen mit" || send != "Senden Sie genau" || status != "Wir warten auf Ihre Zahlung." || lang != "de" {
		t.Fatalf("German page: h1 %q, legend %q, %q, status %q, countdown %q, lang %q", h1, legend, send, status, countdown, lang)
	}
	var after, switchTo, switched string
	if err := chromedp.Do(ctx,
		webtest.Into(&switchTo, chromedp.Evaluate[string](`document.querySelector('#langs a[hreflang="es"]').href`)),
	); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx,
		// Following the link (a navigation, as a click without script).
		chromedp.Navigate(switchTo),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		webtest.Into(&switched, chromedp.Evaluate[string](`document.documentElement.lang`)),
		chromedp.Navigate(r["payment_url"].(string)+"?coin=ltc"),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		webtest.Into(&after, chromedp.Text(chromedp.CSS(`#status`))),
	); err != nil {
		t.Fatalf("language switch: %v", err)
	}
	if !strings.HasSuffix(switchTo, "?coin=ltc&lang=es") || switched != "es" || after != "Esperando su pago." {
		t.Fatalf("switch %s to %q; after choosing Español, the next page says %q", switchTo, switched, after)
	}
}
