package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store/storetest"
)

// field is a received callback's field, whatever its transport.
func (r received) field(k string) string {
	if r.fields != nil {
		var s string
		if json.Unmarshal(r.fields[k], &s) == nil {
			return s
		}
		return string(r.fields[k])
	}
	return r.form.Get(k)
}

// take returns the callbacks received since the last take.
func (s *callbackSink) take() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.got
	s.got = nil
	return got
}

// TestWrongAssetAndMultiToken: on the devnet, USDT (erc20/usdt) sent to an
// ETH address created without multi_token is credited and held as
// wrong_asset: its callback URL gets one signed wrong_asset webhook naming
// both coins and nothing else, and it is not forwarded until the merchant
// forwards it (to the address's destination, as USDT) or refunds it (a
// payout that spends it). Sent to an ETH address created with
// multi_token=1, it is credited, called back and forwarded under its own
// ticker. An ETH address created with multi_chain=1 is watched on Polygon:
// POL sent there is called back as POL; one without it is not watched
// there.
func TestWrongAssetAndMultiToken(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	eth, _ := reg.Lookup("eth")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDevEnv(t, d)
			ctx := context.Background()
			dest, refundTo := destinations(t, eth)
			create := func(cb string, kv ...string) string {
				t.Helper()
				r := e.in.Get(t, "/eth/create/", q(append([]string{"callback", e.sink.URL + "/hook?" + cb, "address", dest}, kv...)...), e.in.KeyA)
				wantStatus(t, r, 200)
				return r.JSON["address_in"].(string)
			}
			plain := create("a=plain")
			multi := create("a=multi", "multi_token", "1")
			chainWide := create("a=chain", "multi_chain", "1")
			ethOnly := create("a=eth")
			bare := e.in.Get(t, "/eth/create/", q("callback", e.sink.URL+"/hook?a=bare"), e.in.KeyA).JSON["address_in"].(string)
			if r := e.in.Get(t, "/eth/create/", q("callback", e.sink.URL+"/hook?a=plain", "address", dest, "multi_token", "1"), e.in.KeyA); r.Code != 409 || !strings.Contains(fmt.Sprint(r.JSON["error"]), "multi_token") {
				t.Errorf("the same callback with multi_token: HTTP %d %s", r.Code, r.Body)
			}

			for _, to := range []string{plain, multi, bare} {
				wantStatus(t, e.post(t, "/devnet/erc20/usdt/pay/", map[string]any{"address_in": to, "value_coin": "50"}), 200)
			}
			for _, to := range []string{chainWide, ethOnly} {
				wantStatus(t, e.post(t, "/devnet/polygon/pol/pay/", map[string]any{"address_in": to, "value_coin": "20"}), 200)
			}
			for range 2 {
				e.mine(t, "erc20/usdt", 20)
				e.mine(t, "polygon/pol", 140)
			}
			byAddress := map[string][]received{}
			for _, r := range e.sink.take() {
				byAddress[r.field("address_in")] = append(byAddress[r.field("address_in")], r)
			}
			if errs := e.sink.errs; len(errs) > 0 {
				t.Fatalf("callbacks that did not verify: %v", errs)
			}
			w := byAddress[plain]
			if len(w) != 1 || w[0].field("event_type") != "wrong_asset" || w[0].field("coin") != "erc20_usdt" ||
				w[0].field("expected_coin") != "eth" || w[0].field("value_coin") != "50" || w[0].field("txid_in") == "" {
				t.Fatalf("the plain address's callbacks: %+v", w)
			}
			var statuses []string
			for _, r := range byAddress[multi] {
				if r.field("coin") != "usdt" { // as an erc20/usdt address's callbacks name it
					t.Errorf("multi_token callback of coin %q", r.field("coin"))
				}
				statuses = append(statuses, r.status())
			}
			if s := strings.Join(statuses, ","); !strings.HasSuffix(s, "confirmed,completed") {
				t.Errorf("multi_token callbacks %v", statuses)
			}
			statuses = nil
			for _, r := range byAddress[chainWide] {
				if r.field("coin") != "pol" {
					t.Errorf("multi_chain callback of coin %q", r.field("coin"))
				}
				statuses = append(statuses, r.status())
			}
			if len(statuses) == 0 || statuses[len(statuses)-1] != "completed" {
				t.Errorf("multi_chain callbacks %v", statuses)
			}
			if len(byAddress[ethOnly]) != 0 {
				t.Errorf("an address without multi_chain heard of Polygon: %+v", byAddress[ethOnly])
			}
			db := e.in.Server.DB().Client
			held, err := db.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(plain))).Only(ctx)
			if err != nil || held.HoldReason != entpayment.HoldReasonWrongAsset || held.Ticker != "erc20/usdt" || held.Status != entpayment.StatusConfirmed {
				t.Fatalf("the wrong-asset payment %+v %v", held, err)
			}

			// The merchant forwards it: its address's destination gets it as USDT.
			r := e.postKey(t, "/wrong_asset/forward/", fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, held.TxidIn), e.in.KeyB)
			wantStatus(t, r, 404)
			r = e.postKey(t, "/wrong_asset/forward/", fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, held.TxidIn), e.in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["payment_status"] != "completed" || r.JSON["txid_out"] == "" {
				t.Fatalf("forwarded wrong asset: %s", r.Body)
			}
			usdt, _ := e.in.Server.Devnet().Chain("erc20/usdt")
			paid := decimal.Zero
			for _, f := range usdt.Forwards() {
				if f.From == plain {
					for _, o := range f.Outputs {
						if o.Address == dest {
							paid = paid.Add(o.Amount)
						}
					}
				}
			}
			if paid.Sign() <= 0 || fmt.Sprint(r.JSON["value_forwarded_coin"]) != paid.String() {
				t.Errorf("forwarded %s to the destination, the API says %v", paid, r.JSON["value_forwarded_coin"])
			}
			wantStatus(t, e.postKey(t, "/wrong_asset/forward/", fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, held.TxidIn), e.in.KeyA), 404)

			// The bare address has no destination: refunded by a payout.
			bp, err := db.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(bare))).Only(ctx)
			if err != nil || bp.HoldReason != entpayment.HoldReasonWrongAsset {
				t.Fatalf("the bare address's payment %+v %v", bp, err)
			}
			wantStatus(t, e.postKey(t, "/wrong_asset/forward/", fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, bp.TxidIn), e.in.KeyA), 400)
			r = e.postKey(t, "/wrong_asset/refund/", fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q, "address": %q, "value": "40"}`, bp.TxidIn, refundTo), e.in.KeyA)
			wantStatus(t, r, 200)
			info := r.JSON["payout_info"].(map[string]any)
			if info["status"] != "done" || info["from"] != bare || info["requests"].(map[string]any)[refundTo] != "40" {
				t.Fatalf("wrong-asset refund: %s; want it sent at once from the address it is on", r.Body)
			}
			paidBack := decimal.Zero
			for _, f := range usdt.Forwards() {
				if f.From == bare {
					for _, o := range f.Outputs {
						if o.Address == refundTo {
							paidBack = paidBack.Add(o.Amount)
						}
					}
				}
			}
			if !paidBack.Equal(decimal.RequireFromString("40")) {
				t.Errorf("the chain sent back %s, want 40", paidBack)
			}
		})
	}
}
