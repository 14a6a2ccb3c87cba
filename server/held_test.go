package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
)

// TestHeldFundsEndToEnd: creates without a forwarding address on the
// devnet, one of them the spec's minimal create (callback alone, GET). The payment is confirmed and completed without a forwarding
// transaction, every callback is signed and says so (address_out {}, no
// txid_out, value_forwarded_coin equal to what is held, no fees), nothing is
// broadcast, and the operator API and `payhook funds` list the held balance
// with the key's derivation path; a merchant's key may not read it.
func TestHeldFundsEndToEnd(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newDevEnv(t, d)
			r := e.in.Get(t, "/btc/create/", q("callback", e.sink.URL+"/hook", "json", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			addrIn := r.JSON["address_in"].(string)
			for range 2 {
				wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": "0.015"}), 200)
			}
			// The spec's minimal create: callback alone (GET callbacks).
			minimal := e.in.Get(t, "/btc/create/", q("callback", e.sink.URL+"/hook?minimal=1"), e.in.KeyA)
			wantStatus(t, minimal, 200)
			minimalIn := minimal.JSON["address_in"].(string)
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": minimalIn, "value_coin": "0.02"}), 200)
			e.mine(t, "btc", 1) // confirmed, then completed (held)

			e.sink.mu.Lock()
			var gets []received
			var rest []received
			for _, g := range e.sink.got {
				if g.method == http.MethodGet {
					gets = append(gets, g)
				} else {
					rest = append(rest, g)
				}
			}
			e.sink.got = rest
			e.sink.mu.Unlock()
			if len(gets) != 2 || gets[0].form.Get("payment_status") != "confirmed" || gets[1].form.Get("payment_status") != "completed" {
				t.Fatalf("minimal create: %d GET callbacks %v, want confirmed then completed", len(gets), gets)
			}
			for _, g := range gets {
				if g.form.Get("address_in") != minimalIn || g.form.Get("address_out") != "{}" {
					t.Errorf("minimal create callback %v", g.form)
				}
			}
			if c := gets[1].form; c.Has("txid_out") || c.Get("value_forwarded_coin") != "0.02" || c.Get("fee_coin") != "0" || c.Get("network_fee") != "0" {
				t.Errorf("minimal create completed callback %v", c)
			}

			e.sink.mu.Lock()
			got, errs := e.sink.got, e.sink.errs
			e.sink.mu.Unlock()
			if len(errs) > 0 {
				t.Fatalf("callbacks that did not verify: %v", errs)
			}
			if st := strings.Join(e.sink.statuses(), ","); st != "confirmed,confirmed,completed,completed" && st != "confirmed,completed,confirmed,completed" {
				t.Fatalf("callbacks %s, want each payment confirmed then completed", st)
			}
			for _, g := range got {
				if string(g.fields["address_out"]) != "{}" {
					t.Errorf("address_out %s, want {}", g.fields["address_out"])
				}
				if g.status() != "completed" {
					continue
				}
				if _, ok := g.fields["txid_out"]; ok {
					t.Errorf("held payment's completed callback carries txid_out: %v", g.fields)
				}
				if string(g.fields["value_forwarded_coin"]) != "0.015" || string(g.fields["fee_coin"]) != "0" || string(g.fields["network_fee"]) != "0" {
					t.Errorf("completed: value_forwarded_coin %s, fee_coin %s, network_fee %s; want 0.015, 0, 0",
						g.fields["value_forwarded_coin"], g.fields["fee_coin"], g.fields["network_fee"])
				}
			}
			c, _ := e.in.Server.Devnet().Chain("btc")
			if n := len(c.Forwards()); n != 0 {
				t.Fatalf("%d forwarding transactions broadcast for held funds", n)
			}

			// The operator API lists the balance; a merchant's key may not.
			opKey, _, err := apikey.CreateOperator(context.Background(), e.in.Server.DB().Client, "ops", clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, e.in.Get(t, "/operator/funds", nil, e.in.KeyA), 403)
			f := e.in.Get(t, "/operator/funds", nil, opKey)
			wantStatus(t, f, 200)
			var funds struct {
				Tickers []struct {
					Ticker, Coin, Total string
					Payments            int
					AddressCount        int `json:"address_count"`
					ByReason            []struct {
						Reason, Total string
						Payments      int
					} `json:"by_reason"`
				}
				Addresses []struct {
					Ticker          string
					AddressIn       string `json:"address_in"`
					Balance         string
					Payments        int
					Reasons         []string
					DerivationPath  string `json:"derivation_path"`
					DerivationIndex string `json:"derivation_index"`
				}
				NextPageToken string `json:"next_page_token"`
			}
			if err := json.Unmarshal(f.Body, &funds); err != nil {
				t.Fatal(err)
			}
			if len(funds.Tickers) != 1 || funds.Tickers[0].Ticker != "btc" || funds.Tickers[0].Total != "0.05" || funds.Tickers[0].Payments != 3 ||
				funds.Tickers[0].AddressCount != 2 || len(funds.Tickers[0].ByReason) != 1 || funds.Tickers[0].ByReason[0].Reason != "no_wallet" ||
				funds.Tickers[0].ByReason[0].Total != "0.05" || funds.NextPageToken != "" ||
				len(funds.Addresses) != 2 || funds.Addresses[0].AddressIn != addrIn || funds.Addresses[0].Ticker != "btc" ||
				funds.Addresses[0].Balance != "0.03" || funds.Addresses[1].AddressIn != minimalIn || len(funds.Addresses[0].Reasons) != 1 ||
				funds.Addresses[1].Balance != "0.02" || !strings.HasPrefix(funds.Addresses[0].DerivationPath, "m/84'/0'/0'/0/") {
				t.Fatalf("held funds %s", f.Body)
			}
			// Page by page: one address a page, the token leads to the next.
			p1 := e.in.Get(t, "/operator/funds", q("page_size", "1"), opKey)
			tok, _ := p1.JSON["next_page_token"].(string)
			p2 := e.in.Get(t, "/operator/funds", q("page_size", "1", "page_token", tok), opKey)
			a1, _ := p1.JSON["addresses"].([]any)
			a2, _ := p2.JSON["addresses"].([]any)
			if tok == "" || len(a1) != 1 || len(a2) != 1 || a1[0].(map[string]any)["address_in"] != addrIn || a2[0].(map[string]any)["address_in"] != minimalIn || p2.JSON["next_page_token"] != "" {
				t.Fatalf("pages: %s then %s", p1.Body, p2.Body)
			}
			wantStatus(t, e.in.Get(t, "/operator/funds", q("page_token", "not-a-token"), opKey), 400)
			wantStatus(t, e.in.Get(t, "/operator/funds", q("page_size", "1001"), opKey), 400)
			// The logs tell the merchant what happened to each payment.
			logs := e.in.Get(t, "/btc/logs/", q("callback", e.sink.URL+"/hook"), e.in.KeyA)
			wantStatus(t, logs, 200)
			for _, cb := range logs.JSON["callbacks"].([]any) {
				c := cb.(map[string]any)
				if note, _ := c["note"].(string); c["payment_status"] != "completed" || !strings.Contains(note, "held on address_in") {
					t.Fatalf("logs: payment %v, want completed and noted as held", cb)
				}
			}

			// payhook funds reads the same from the database.
			held, err := admin.HeldFunds(context.Background(), e.in.DSN, "")
			if err != nil || len(held.GetTickers()) != 1 || held.GetTickers()[0].GetTotal() != "0.05" {
				t.Fatalf("admin.HeldFunds = %v, %v", held, err)
			}
		})
	}
}
