package server_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
)

// TestRefundEveryFamily: on the devnet, a checkout paid in a coin of each
// family (and a token of each family that has them), held on its address
// (the project has no wallet for the coin), is refunded in part by the
// merchant API; the refund completes, with its transaction's hash, once
// the chain has moved what it needs (account chains sweep the payment to
// the payout wallet first), and the merchant hears pending then completed.
func TestRefundEveryFamily(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	for _, ticker := range []string{"ltc", "doge", "eth", "erc20/usdt", "trx", "trc20/usdt", "sol", "sol/usdc"} {
		tk, ok := reg.Lookup(ticker)
		if !ok {
			t.Fatalf("no %s", ticker)
		}
		t.Run(ticker, func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, store.SQLite)
			coin := strings.ReplaceAll(ticker, "/", "_")
			r := e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant", "value", "500", "currency", "USD"), e.in.KeyA)
			wantStatus(t, r, 200)
			id := r.JSON["payment_id"].(string)
			a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", coin), e.in.KeyA)
			wantStatus(t, a, 200)
			quote := decimal.RequireFromString(a.JSON["value_coin"].(string))
			p := e.post(t, "/devnet/"+ticker+"/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": quote.String()})
			wantStatus(t, p, 200)
			for range 3 {
				e.mine(t, ticker, 25)
			}
			e.ms.take()
			dest, _ := destinations(t, tk)
			back := quote.Div(decimal.NewFromInt(2)).RoundDown(tk.Decimals)
			r = e.postKey(t, "/checkout/refund/", fmt.Sprintf(`{"payment_id": %q, "txid_in": %q, "address": %q, "value": %q}`, id, p.JSON["txid_in"], dest, back), e.in.KeyA)
			wantStatus(t, r, 200)
			ref := r.JSON["refund"].(map[string]any)
			for i := 0; i < 6 && ref["status"] != "completed"; i++ {
				e.mine(t, ticker, 25)
				st := e.in.Get(t, "/refund/status/", q("refund_id", ref["refund_id"].(string)), e.in.KeyA)
				wantStatus(t, st, 200)
				ref = st.JSON["refund"].(map[string]any)
			}
			if ref["status"] != "completed" || ref["txid"] == "" || ref["value"] != back.String() {
				t.Fatalf("the %s refund: %v", ticker, ref)
			}
			// It left from the payment's own address (a UTXO refund spends
			// the payment's output; an account chain's is sent from it).
			pi := e.postForm(t, "/payout/status/", url.Values{"payout_id": {fmt.Sprint(ref["payout_id"])}}, e.in.KeyA).JSON["payout_info"].(map[string]any)
			if !tk.Rules().SpendsSeveralAddresses(tk) && pi["from"] != a.JSON["address_in"] {
				t.Errorf("the %s refund left from %v, want the payment's address %v", ticker, pi["from"], a.JSON["address_in"])
			}
			ch, _ := e.in.Server.Devnet().Chain(ticker)
			paid := decimal.Zero
			for _, f := range ch.Forwards() {
				for _, o := range f.Outputs {
					if o.Address == dest {
						paid = paid.Add(o.Amount)
					}
				}
			}
			if !paid.Equal(back) {
				t.Errorf("the chain paid the payer %s, want %s", paid, back)
			}
			e.mine(t, ticker, 1) // and deliver
			hooks, _ := e.ms.take()
			var events []string
			for _, h := range hooks {
				events = append(events, h.event)
			}
			if strings.Join(events, ",") != "checkout.refund.pending,checkout.refund.completed" {
				t.Errorf("refund webhooks %v", events)
			}
		})
	}
}
