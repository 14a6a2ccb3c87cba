package pay_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserCheckout opens a checkout page in a real browser at a phone's
// width, chooses a coin, pays the shown amount to the shown address on
// the devnet, and watches the page report paid and send the customer to
// redirect_url with the success token. It also checks, in the browser,
// that an item_description of <script> is text and runs nothing, and
// renders the deposit and subscription pages.
func TestBrowserCheckout(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
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
		webtest.Shot("checkout-choose.png"),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="btc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		// The script shows the copy buttons and starts the countdown.
		chromedp.WaitVisible(chromedp.CSS(`button[data-copy="address"]`)),
		webtest.Until(`document.getElementById("countdown").textContent.endsWith("left")`, 10*time.Second),
		webtest.Into(&addr, chromedp.Text(chromedp.CSS(`#address`))),
		webtest.Into(&amount, chromedp.Text(chromedp.CSS(`#amount`))),
		webtest.Into(&statusText, chromedp.Text(chromedp.CSS(`#status`))),
		webtest.Shot("checkout-address.png"),
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
		webtest.Shot("checkout-paid.png"),
	); err != nil {
		t.Fatalf("paid: %v", err)
	}
	// The redirect replaces the page a poll runs in: poll again on the
	// new page until the shop's page is there.
	deadline := clock.Now().Add(15 * time.Second)
	for {
		arrived, err := chromedp.Run(ctx, chromedp.Poll[bool](`location.pathname === "/done" && document.getElementById("thanks") !== null`,
			chromedp.WithPollingTimeout(5*time.Second)))
		if err == nil && arrived {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("not redirected to the shop: %v", err)
		}
	}
	if err := chromedp.Do(ctx, webtest.Into(&final, chromedp.Location())); err != nil {
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
		webtest.Into(&shown, chromedp.Text(chromedp.CSS(`#description`))),
		webtest.Into(&clean, chromedp.Evaluate[bool](`window.__xss === undefined && document.querySelectorAll("#description *").length === 0`)),
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
		webtest.Shot("deposit-address.png"),
	); err != nil {
		t.Fatalf("deposit page: %v", err)
	}

	// The subscription page: plans, then a renewal's address.
	s := e.request(t, "/subscription/create/", "notify_url", notifyURL, "currency", "USD", "customer", "alice@example.com",
		"option", "1m:10.00", "option", "12m:100.00")
	subURL := s["subscription_url"].(string)
	var sub string
	// With the script each coin shows the chosen plan's amount only.
	visible := `Array.from(document.querySelectorAll('input[value="btc"] ~ .coin-amounts .coin-amount')).filter(e => e.offsetParent !== null).map(e => e.dataset.option).join()`
	var before, after string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(subURL),
		chromedp.WaitVisible(chromedp.CSS(`#choose-form`)),
		webtest.Shot("subscription-plans.png"),
		webtest.Into(&before, chromedp.Evaluate[string](visible)),
		chromedp.Click(chromedp.CSS(`input[name="option"][value="12m"]`)),
		webtest.Into(&after, chromedp.Evaluate[string](visible)),
		chromedp.Click(chromedp.CSS(`input[name="coin"][value="btc"]`)),
		chromedp.Click(chromedp.CSS(`#choose`)),
		chromedp.WaitVisible(chromedp.CSS(`#address`)),
		webtest.Into(&sub, chromedp.Text(chromedp.CSS(`main`))),
		webtest.Shot("subscription-renewal.png"),
	); err != nil {
		t.Fatalf("subscription page: %v", err)
	}
	if before != "1m" || after != "12m" {
		t.Fatalf("btc's plan amounts shown: %q before choosing, %q after choosing 12m", before, after)
	}
	if !strings.Contains(sub, "Renewal: 12 months") || !strings.Contains(sub, "100.00 USD") {
		t.Fatalf("subscription renewal page: %s", sub)
	}
}
