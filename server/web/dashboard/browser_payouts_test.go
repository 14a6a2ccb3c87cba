package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserDashboardPayouts: a payout above the project's limit waits for
// approval; a user of the project signs in at a phone's width, sees it on
// the Payouts page with its output, the reason and the balance, approves
// it, and it is sent (the API reports it done with its txid); the page
// then shows none waiting. The settings page shows the operator's limits
// and sets the payout webhook.
func TestBrowserDashboardPayouts(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	d := newDash(t, func(c *server.Config) { c.Dev = true })
	bg := context.Background()
	if err := project.SetPayoutLimit(bg, d.in.Server.DB().Client, d.in.ProjectA, "ltc", decimal.RequireFromString("0.1"), decimal.Zero, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	wallet := d.in.Get(t, "/ltc/payout/address/", nil, d.in.KeyA).JSON["address"].(string)
	if r := d.in.PostJSON(t, "/devnet/ltc/pay/", fmt.Sprintf(`{"address_in": %q, "value_coin": "1"}`, wallet), ""); r.Code != 200 {
		t.Fatalf("pay: %d %s", r.Code, r.Body)
	}
	if r := d.in.PostJSON(t, "/devnet/ltc/mine/", `{"blocks": 5}`, ""); r.Code != 200 {
		t.Fatalf("mine: %d %s", r.Code, r.Body)
	}
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	deriver, err := chains.NewDeriver(bytes.Repeat([]byte{0x42}, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	dest, _ := deriver.Address(tk, 1000)
	r := d.in.PostJSON(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.2"}}`, dest), d.in.KeyA)
	info, _ := r.JSON["payout_info"].(map[string]any)
	if r.Code != 200 || info["status"] != "pending_approval" {
		t.Fatalf("a payout above the limit: %d %s", r.Code, r.Body)
	}
	id := fmt.Sprint(info["id"])

	var listed string
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/payouts/"),
		chromedp.WaitVisible(chromedp.CSS(`#payout-`+id)),
		webtest.Until(`(document.querySelector("#payouts")?.innerText ?? "").includes("maximum per payout")`, 30*time.Second),
		webtest.Into(&listed, chromedp.Text(chromedp.CSS(`#payouts`))),
		webtest.Shot("dashboard-payouts.png"),
	); err != nil {
		t.Fatalf("payouts page: %v", err)
	}
	if !strings.Contains(listed, dest) || !strings.Contains(listed, "maximum per payout of 0.1") || !strings.Contains(listed, "0.2") {
		t.Fatalf("the waiting payout is listed as %q", listed)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#approve-`+id)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		chromedp.WaitVisible(chromedp.CSS(`#none`)),
	); err != nil {
		t.Fatalf("approve: %v", err)
	}
	// The settings page: the operator's limits, and the payout webhook
	// (a URL payhook refuses is named; a good one is saved).
	var limits, refused string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/"),
		chromedp.WaitVisible(chromedp.CSS(`#payout-limits`)),
		webtest.Until(`(document.querySelector("#payout-limits")?.innerText ?? "").includes("ltc")`, 30*time.Second),
		webtest.Into(&limits, chromedp.Text(chromedp.CSS(`#payout-limits`))),
		chromedp.SendKeys(chromedp.CSS(`#payout-url`), "ftp://shop.example/payouts"),
		chromedp.Click(chromedp.CSS(`#save-payout-webhook`)),
		chromedp.WaitVisible(chromedp.CSS(`#payout-error`)),
		webtest.Until(`(document.querySelector("#payout-error")?.innerText ?? "") !== ""`, 30*time.Second),
		webtest.Into(&refused, chromedp.Text(chromedp.CSS(`#payout-error`))),
		chromedp.SetValue(chromedp.CSS(`#payout-url`), "https://shop.example/payouts"),
		chromedp.Click(chromedp.CSS(`#payout-get`)),
		chromedp.Click(chromedp.CSS(`#save-payout-webhook`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
	); err != nil {
		t.Fatalf("payout settings: %v", err)
	}
	if !strings.Contains(limits, "0.1 ltc") || !strings.Contains(refused, "payout_notify_url") {
		t.Errorf("limits %q; refusal %q", limits, refused)
	}
	if p, err := project.Get(bg, d.in.Server.DB().Client, d.in.ProjectA); err != nil || p.PayoutNotifyURL != "https://shop.example/payouts" || p.PayoutNotifyPost {
		t.Errorf("saved payout webhook %q post=%v (%v)", p.PayoutNotifyURL, p.PayoutNotifyPost, err)
	}

	st := d.in.PostJSON(t, "/payout/status/", fmt.Sprintf(`{"payout_id": %s}`, id), d.in.KeyA)
	if info, _ := st.JSON["payout_info"].(map[string]any); info["status"] != "done" || info["txid"] == "" {
		t.Errorf("the approved payout: %s", st.Body)
	}
}
