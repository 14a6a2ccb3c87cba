package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestLitecoindRefundFromHostedPage: on litecoind regtest, a payer
// overpays a checkout; in headless Chromium its hosted page offers the
// overpayment back, the payer types an address of the node's wallet and
// asks; the page shows the request. The merchant approves it by the API;
// the refund's transaction, accepted and mined by the node, pays that
// address exactly the overpaid amount, spending the payment's own output
// (the project has no ltc wallet: the payment is held), and the page
// shows it sent with its hash.
func TestLitecoindRefundFromHostedPage(t *testing.T) {
	t.Parallel()
	ctx := webtest.Browser(t)
	ms := newMerchantSink(t)
	e := newLTCEnv(t, store.Postgres, func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(ms.URL+"/merchant", servertest.A, servertest.B)...)
	})
	r := e.in.Get(t, "/checkout/request/", q("notify_url", ms.URL+"/merchant", "value", "10", "currency", "USD"), e.in.KeyA)
	wantStatus(t, r, 200)
	id, pageURL := r.JSON["payment_id"].(string), r.JSON["payment_url"].(string)
	a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "ltc"), e.in.KeyA)
	wantStatus(t, a, 200)
	addrIn := a.JSON["address_in"].(string)
	quote := decimal.RequireFromString(a.JSON["value_coin"].(string))
	over := decimal.RequireFromString("0.05")
	var txidIn string
	e.n.Must(&txidIn, "sendtoaddress", addrIn, json.Number(quote.Add(over).String()))
	for range 3 {
		e.step(t, 1)
	}

	var refundTo string
	e.n.Must(&refundTo, "getnewaddress")
	var offer, state string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(chromedp.CSS(`#status.status-paid`)),
		chromedp.WaitVisible(chromedp.CSS(`#refund-form`)),
		webtest.Into(&offer, chromedp.Text(chromedp.CSS(`#refund-offer`))),
		chromedp.SendKeys(chromedp.CSS(`#refund-address`), refundTo),
		chromedp.Click(chromedp.CSS(`#refund-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`.refund-state`)),
		webtest.Until(`document.querySelector(".refund-state").textContent.length > 0`, 10*time.Second),
		webtest.Into(&state, chromedp.Text(chromedp.CSS(`.refund-state`))),
		webtest.Shot("checkout-refund-requested.png"),
	); err != nil {
		t.Fatalf("ask for a refund on the hosted page: %v", err)
	}
	if !strings.Contains(offer, "0.05 LTC more than was due") || !strings.Contains(state, "asked for") {
		t.Fatalf("the page offered %q and shows %q", offer, state)
	}
	rf, err := e.in.Server.DB().Client.Refund.Query().Only(t.Context())
	if err != nil || rf.Address != refundTo || !rf.Value.Equal(over) {
		t.Fatalf("refund %+v %v", rf, err)
	}

	r = e.postKey(t, "/refund/approve/", fmt.Sprintf(`{"refund_id": %q}`, rf.UUID), e.in.KeyA)
	wantStatus(t, r, 200)
	txid, _ := r.JSON["refund"].(map[string]any)["txid"].(string)
	if txid == "" {
		t.Fatalf("approved refund %s", r.Body)
	}
	e.step(t, 1)
	var tx struct {
		Confirmations int                     `json:"confirmations"`
		Vin           []struct{ Txid string } `json:"vin"`
		Vout          []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Address   string   `json:"address"`
				Addresses []string `json:"addresses"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	e.n.Must(&tx, "getrawtransaction", txid, true)
	paid := decimal.Zero
	for _, o := range tx.Vout {
		to := o.ScriptPubKey.Address
		if len(o.ScriptPubKey.Addresses) == 1 {
			to = o.ScriptPubKey.Addresses[0]
		}
		if to == refundTo {
			v, _ := decimal.NewFromString(o.Value.String())
			paid = paid.Add(v)
		}
	}
	if !paid.Equal(over) || tx.Confirmations < 1 || len(tx.Vin) == 0 || tx.Vin[0].Txid != txidIn {
		t.Fatalf("the refund transaction pays %s to the payer (want %s), %d confirmations, spends %+v (want %s first)", paid, over, tx.Confirmations, tx.Vin, txidIn)
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(pageURL),
		webtest.Until(`document.querySelector(".refund-state").textContent.includes("`+txid+`")`, 10*time.Second),
		webtest.Shot("checkout-refund-sent.png"),
	); err != nil {
		t.Fatalf("the page after the refund: %v", err)
	}
}
