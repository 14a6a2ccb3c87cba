package dashboard_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardRefunds: on a phone-width dashboard, a user refunds
// part of an overpaid checkout's payment from its page (the refund is
// listed, completed); the payer asks for the rest on the hosted page and
// the user approves it on the Payouts page; a token sent to an ETH address
// is listed there as another asset, and the user forwards it.
func TestBrowserDashboardRefunds(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t, func(c *server.Config) { c.Dev = true })
	post := func(path, body, key string) map[string]any {
		t.Helper()
		r := d.in.PostJSON(t, path, body, key)
		if r.Code != 200 {
			t.Fatalf("%s: %d %s", path, r.Code, r.Body)
		}
		return r.JSON
	}
	deriver, err := chains.NewDeriver(bytes.Repeat([]byte{0x42}, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	ltc, _ := family.DefaultRegistry().Lookup("ltc")
	eth, _ := family.DefaultRegistry().Lookup("eth")
	dest, _ := deriver.Address(ltc, 1000)
	ethDest, _ := deriver.Address(eth, 1000)

	// An overpaid checkout.
	r := d.in.Get(t, "/checkout/request/", url.Values{"notify_url": {"https://shop.example/hook"}, "value": {"10"}, "currency": {"USD"}}, d.in.KeyA)
	id, pageURL := r.JSON["payment_id"].(string), r.JSON["payment_url"].(string)
	a := d.in.Get(t, "/checkout/address/", url.Values{"payment_id": {id}, "coin": {"ltc"}}, d.in.KeyA)
	quote := decimal.RequireFromString(a.JSON["value_coin"].(string))
	post("/devnet/ltc/pay/", fmt.Sprintf(`{"address_in": %q, "value_coin": %q}`, a.JSON["address_in"], quote.Add(decimal.RequireFromString("0.01"))), "")
	post("/devnet/ltc/mine/", `{"blocks": 6}`, "")

	var refunds string
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/checkouts/"+id+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#refund-form`)),
		chromedp.SendKeys(chromedp.CSS(`#refund-address`), dest),
		chromedp.SendKeys(chromedp.CSS(`#refund-value`), "0.004"),
		chromedp.Click(chromedp.CSS(`#refund-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`#refund-done`)),
		webtest.Until(`(document.querySelector("#refunds")?.innerText ?? "").includes("completed")`, 30*time.Second),
		webtest.Into(&refunds, chromedp.Text(chromedp.CSS(`#refunds`))),
		webtest.Shot("dashboard-checkout-refund.png"),
	); err != nil {
		t.Fatalf("refund from the checkout page: %v", err)
	}
	if !strings.Contains(refunds, "0.004") || !strings.Contains(refunds, dest) {
		t.Fatalf("the checkout's refunds: %q", refunds)
	}

	// The payer asks for the rest of the overpayment; the user approves
	// (once the first refund's change is back in the balance).
	post("/devnet/ltc/mine/", `{"blocks": 6}`, "")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).
		PostForm(pageURL+"refund", url.Values{"address": {dest}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the payer's refund request: HTTP %d", resp.StatusCode)
	}
	var asked string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/payouts/"),
		chromedp.WaitVisible(chromedp.CSS(`#refunds tr.refund`)),
		webtest.Until(`(document.querySelector("#refunds")?.innerText ?? "").includes("overpaid")`, 30*time.Second),
		webtest.Into(&asked, chromedp.Text(chromedp.CSS(`#refunds`))),
		chromedp.Click(chromedp.CSS(`#refunds button`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		chromedp.WaitVisible(chromedp.CSS(`#no-refunds`)),
	); err != nil {
		t.Fatalf("approve the payer's refund: %v", err)
	}
	if !strings.Contains(asked, "0.006") || !strings.Contains(asked, id) {
		t.Errorf("the requested refund is listed as %q", asked)
	}

	// A token on an ETH address: listed, forwarded.
	c := d.in.Get(t, "/eth/create/", url.Values{"callback": {"https://shop.example/eth"}, "address": {ethDest}}, d.in.KeyA)
	post("/devnet/erc20/usdt/pay/", fmt.Sprintf(`{"address_in": %q, "value_coin": "50"}`, c.JSON["address_in"]), "")
	post("/devnet/erc20/usdt/mine/", `{"blocks": 20}`, "")
	var listed, done string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/payouts/"),
		chromedp.WaitVisible(chromedp.CSS(`#wrong-assets tr.wrong-asset`)),
		webtest.Until(`(document.querySelector("#wrong-assets")?.innerText ?? "").includes("erc20_usdt")`, 30*time.Second),
		webtest.Into(&listed, chromedp.Text(chromedp.CSS(`#wrong-assets`))),
		chromedp.Click(chromedp.CSS(`#wrong-assets button[id^="forward-"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#no-wrong-assets`)),
		webtest.Into(&done, chromedp.Text(chromedp.CSS(`#done`))),
		webtest.Shot("dashboard-wrong-asset.png"),
	); err != nil {
		t.Fatalf("forward the wrong asset: %v", err)
	}
	if !strings.Contains(listed, c.JSON["address_in"].(string)) || !strings.Contains(listed, "(eth)") || !strings.Contains(done, "forwarded") {
		t.Errorf("wrong asset listed as %q; after forwarding %q", listed, done)
	}
}
