package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestRefundCheckout: a checkout payment held on its own address (the
// project has no ltc wallet) is refunded in part by the merchant API: the
// refund is paid by a payout whose transaction spends the payment's own
// output first and pays the refund address exactly; the merchant gets
// checkout.refund.pending then checkout.refund.completed with the txid,
// signed like its other webhooks, at the checkout's notify_url; the
// journal pays out the refund. What is left to refund bounds the next
// refund; bad input is a 4xx naming the field; another project's invoice
// is not found.
func TestRefundCheckout(t *testing.T) {
	t.Parallel()
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			ctx := context.Background()
			notify := e.ms.URL + "/merchant?order=9"
			r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100", "currency", "USD", "post", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			id := r.JSON["payment_id"].(string)
			a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "ltc"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn := a.JSON["address_in"].(string)
			paid := decimal.RequireFromString(a.JSON["value_coin"].(string)).Add(decimal.RequireFromString("0.5"))
			p := e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addrIn, "value_coin": paid.String()})
			wantStatus(t, p, 200)
			txidIn := p.JSON["txid_in"].(string)
			e.mine(t, "ltc", 6)
			e.ms.take()
			if b := e.in.Get(t, "/ltc/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != paid.String() {
				t.Fatalf("balance %s: want the payment held (%s)", b.Body, paid)
			}

			dest, _ := destinations(t, tk)
			form := url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {dest}, "value": {"0.5"}}
			r = e.postForm(t, "/checkout/refund/", form, e.in.KeyA)
			wantStatus(t, r, 200)
			ref := r.JSON["refund"].(map[string]any)
			if ref["status"] != "completed" || ref["value"] != "0.5" || ref["payment_id"] != id || ref["txid_in"] != txidIn ||
				ref["address"] != dest || ref["coin"] != "ltc" || ref["txid"] == "" {
				t.Fatalf("refund %s", r.Body)
			}
			c, _ := e.in.Server.Devnet().Chain("ltc")
			var sent int
			for _, f := range c.Forwards() {
				if f.ID != fmt.Sprintf("payout:%v", ref["payout_id"]) {
					continue
				}
				sent++
				if len(f.Inputs) != 1 || f.Inputs[0].TxID != txidIn {
					t.Errorf("the refund spends %+v, want the payment's own output", f.Inputs)
				}
				if f.Outputs[0].Address != dest || !f.Outputs[0].Amount.Equal(decimal.RequireFromString("0.5")) {
					t.Errorf("the refund pays %+v", f.Outputs)
				}
			}
			if sent != 1 {
				t.Fatalf("%d refund transactions, want 1", sent)
			}
			if err := e.in.Server.Notifier().Dispatcher.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
			hooks, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatalf("webhooks that did not verify: %v", errs)
			}
			var events []string
			for _, w := range hooks {
				events = append(events, w.event)
				if w.method != http.MethodPost || w.get("payment_id") != id || w.get("refund_id") != ref["refund_id"] || w.get("txid_in") != txidIn ||
					w.get("value") != "0.5" || w.get("coin") != "ltc" || w.get("address") != dest || w.get("event_type") != w.event {
					t.Errorf("refund webhook %s: %v", w.event, w.fields)
				}
				if w.event == "checkout.refund.completed" && w.get("txid") != ref["txid"] {
					t.Errorf("completed webhook without the txid: %v", w.fields)
				}
			}
			if strings.Join(events, ",") != "checkout.refund.pending,checkout.refund.completed" {
				t.Fatalf("refund webhooks %v", events)
			}
			if got := ledgerSum(t, e.in, e.in.ProjectA, "ltc", entledger.AccountPayout); !got.Equal(decimal.RequireFromString("0.5").Shift(tk.Decimals)) {
				t.Errorf("journal: paid out %s base units, want the refund", got)
			}
			st := e.in.Get(t, "/refund/status/", q("refund_id", ref["refund_id"].(string)), e.in.KeyA)
			if st.Code != 200 || st.JSON["refund"].(map[string]any)["status"] != "completed" {
				t.Errorf("refund status: HTTP %d %s", st.Code, st.Body)
			}
			wantStatus(t, e.in.Get(t, "/refund/status/", q("refund_id", ref["refund_id"].(string)), e.in.KeyB), 404)

			// What is left to refund bounds the next one.
			left := paid.Sub(decimal.RequireFromString("0.5"))
			over := e.postForm(t, "/checkout/refund/", url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {dest}, "value": {left.Add(decimal.New(1, -8)).String()}}, e.in.KeyA)
			if over.Code != 400 || !strings.Contains(fmt.Sprint(over.JSON["error"]), "value") || !strings.Contains(fmt.Sprint(over.JSON["error"]), left.String()) {
				t.Errorf("a refund above what is left: HTTP %d %s", over.Code, over.Body)
			}
			for name, c := range map[string]struct {
				form url.Values
				code int
				want string
			}{
				"no address":        {url.Values{"payment_id": {id}, "txid_in": {txidIn}}, 400, "address"},
				"no txid_in":        {url.Values{"payment_id": {id}, "address": {dest}}, 400, "txid_in"},
				"another coin":      {url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}}, 400, "address"},
				"a zero value":      {url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {dest}, "value": {"0"}}, 400, "value"},
				"over-precise":      {url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {dest}, "value": {"0.123456789"}}, 400, "value"},
				"an unknown txid":   {url.Values{"payment_id": {id}, "txid_in": {strings.Repeat("ab", 32)}, "address": {dest}}, 404, "txid_in"},
				"an unknown id":     {url.Values{"payment_id": {"chk_nothing"}, "txid_in": {txidIn}, "address": {dest}}, 404, ""},
				"a deposit's route": {url.Values{"payment_id": {id}, "txid_in": {txidIn}, "address": {dest}}, 404, ""},
			} {
				path := "/checkout/refund/"
				if name == "a deposit's route" {
					path = "/deposit/refund/"
				}
				r := e.postForm(t, path, c.form, e.in.KeyA)
				if r.Code != c.code || !strings.Contains(fmt.Sprint(r.JSON["error"]), c.want) {
					t.Errorf("%s: HTTP %d %s, want %d naming %q", name, r.Code, r.Body, c.code, c.want)
				}
			}
			wantStatus(t, e.postForm(t, "/checkout/refund/", form, e.in.KeyB), 404)
			if n, _ := e.in.Server.DB().Client.Refund.Query().Count(ctx); n != 1 {
				t.Errorf("%d refunds recorded, want the one", n)
			}
		})
	}
}
