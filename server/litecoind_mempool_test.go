package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestLitecoindMempoolDetected: a payer pays a checkout's litecoin address
// from a real litecoind's wallet; before any block, the payment shows as
// detected on the hosted page (in status.json, in the page's HTML, and live
// in Chromium, which was showing "Waiting for your payment"), and the
// merchant is told nothing (no webhook: the spec reports payments from
// their block). Once the node mines it, the page goes on to confirming
// or paid and the webhooks follow.
func TestLitecoindMempoolDetected(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := webtest.Browser(t)
			ms := newMerchantSink(t)
			e := newLTCEnv(t, d, func(c *server.Config) {
				c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(ms.URL+"/merchant", servertest.A)...)
				c.API.PagePollInterval = 200 * time.Millisecond
			})
			p, err := e.in.Server.DB().Client.Project.Get(context.Background(), e.in.ProjectA)
			if err != nil {
				t.Fatal(err)
			}
			ms.secrets = []string{p.IpnSecret}
			r := e.in.Get(t, "/checkout/request/", q("notify_url", ms.URL+"/merchant", "value", "10", "currency", "USD"), e.in.KeyA)
			wantStatus(t, r, 200)
			id, pageURL := r.JSON["payment_id"].(string), r.JSON["payment_url"].(string)
			a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "ltc"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn, amount := a.JSON["address_in"].(string), a.JSON["value_coin"].(string)
			var before string
			if err := chromedp.Do(ctx,
				chromedp.Navigate(pageURL+"?coin=ltc"),
				chromedp.WaitVisible(chromedp.CSS(`#address`)),
				webtest.Into(&before, chromedp.Text(chromedp.CSS(`#status`))),
			); err != nil {
				t.Fatal(err)
			}
			if before != "Waiting for your payment." {
				t.Fatalf("before paying: %q", before)
			}
			var txid string
			var info struct {
				Blocks int64 `json:"blocks"`
			}
			e.n.Must(&info, "getblockchaininfo")
			e.n.Must(&txid, "sendtoaddress", addrIn, json.Number(amount))
			e.step(t, 0) // polls the node (no block) and runs due deliveries

			st := e.in.Get(t, strings.TrimPrefix(pageURL, e.in.BaseURL)+"status.json", q("coin", "ltc"), "")
			if st.JSON["status"] != "detected" || st.JSON["text"] != "Payment detected, waiting for confirmation." {
				t.Fatalf("status.json with the payment in the mempool: %s", st.Body)
			}
			if html := page(t, pageURL+"?coin=ltc"); !strings.Contains(html, "status-detected") || !strings.Contains(html, "Payment detected, waiting for confirmation.") {
				t.Fatalf("page with the payment in the mempool:\n%s", html)
			}
			var live string
			if err := chromedp.Do(ctx,
				chromedp.WaitVisible(chromedp.CSS(`#status.status-detected`)),
				webtest.Into(&live, chromedp.Text(chromedp.CSS(`#status`))),
				webtest.Shot("checkout-detected-litecoind.png"),
			); err != nil {
				t.Fatalf("live page: %v", err)
			}
			var after struct {
				Blocks int64 `json:"blocks"`
			}
			e.n.Must(&after, "getblockchaininfo")
			if after.Blocks != info.Blocks {
				t.Fatalf("a block was mined (%d to %d): the test proves nothing", info.Blocks, after.Blocks)
			}
			if got, bad := ms.take(); len(got)+len(bad) != 0 {
				t.Fatalf("webhooks for a payment in the mempool: %v %v", got, bad)
			}

			e.step(t, 1)
			st = e.in.Get(t, strings.TrimPrefix(pageURL, e.in.BaseURL)+"status.json", q("coin", "ltc"), "")
			if s := st.JSON["status"]; s != "confirming" && s != "paid" {
				t.Fatalf("status.json once mined: %s", st.Body)
			}
			if got, bad := ms.take(); len(got) == 0 || len(bad) != 0 {
				t.Fatalf("once the payment is in a block: webhooks %v, refused %v", got, bad)
			}
		})
	}
}
