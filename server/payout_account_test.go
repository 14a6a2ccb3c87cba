package server_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
)

// payoutStatus reads a payout's payout_info.
func (e *devEnv) payoutStatus(t *testing.T, id, key string) map[string]any {
	t.Helper()
	r := e.postForm(t, "/payout/status/", url.Values{"payout_id": {id}}, key)
	wantStatus(t, r, 200)
	return r.JSON["payout_info"].(map[string]any)
}

// TestPayoutAccountChains: on the devnet, for a native coin and a token of
// every account family, a project's held funds on two addresses without
// forwarding fund a payout from its payout wallet. The payout is queued;
// both addresses are swept to the wallet (each sweep less its network
// fee); once the wallet's payments of them are credited the payout is sent
// from the wallet, one transaction per output, and is done. A second
// payout queued while the first's transactions are not in a block waits
// (one account's transactions are signed in nonce order), then goes once
// they land. The journal ends with every sweep arrived, nothing outgoing,
// the payouts paid exactly, and the balance what is left.
func TestPayoutAccountChains(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	for _, ticker := range []string{"eth", "erc20/usdt", "trx", "trc20/usdt", "sol", "sol/usdc"} {
		tk, ok := reg.Lookup(ticker)
		if !ok {
			t.Fatalf("no %s in the registry", ticker)
		}
		for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
			t.Run(ticker+"/"+string(d), func(t *testing.T) {
				t.Parallel()
				e := newDevEnv(t, d)
				nf := tk.Rules().NetworkFee(tk)
				minOut, err := tk.Rules().MinOutput(tk, "")
				if err != nil {
					minOut = decimal.Zero
				}
				u := decimal.Max(nf, tk.MinTransaction, minOut).Mul(decimal.NewFromInt(10))
				times := func(n int64) decimal.Decimal { return u.Mul(decimal.NewFromInt(n)) }
				path := "/" + ticker

				r := e.in.Get(t, path+"/payout/address/", nil, e.in.KeyA)
				wantStatus(t, r, 200)
				wallet := r.JSON["address"].(string)
				var held []string
				for i, v := range []decimal.Decimal{times(30), times(20)} {
					c := e.in.Get(t, path+"/create/", q("callback", fmt.Sprintf("%s/hook?held=%d", e.sink.URL, i)), e.in.KeyA)
					wantStatus(t, c, 200)
					a := c.JSON["address_in"].(string)
					held = append(held, a)
					wantStatus(t, e.post(t, "/devnet/"+ticker+"/pay/", map[string]any{"address_in": a, "value_coin": v.String()}), 200)
				}
				e.mine(t, ticker, 25)
				if b := e.in.Get(t, path+"/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != times(50).String() {
					t.Fatalf("balance %s, want %s", b.Body, times(50))
				}

				destA, destB := destinations(t, tk)
				body := fmt.Sprintf(`{"outputs": {%q: %q, %q: %q}}`, destA, times(25), destB, times(15))
				r = e.postKey(t, path+"/payout/request/bulk/process/", body, e.in.KeyA)
				wantStatus(t, r, 200)
				info := r.JSON["payout_info"].(map[string]any)
				id := fmt.Sprint(info["id"])
				if r.JSON["queued"] != true || info["status"] != "processing" || info["blockchain_fee"] != nf.Mul(decimal.NewFromInt(2)).String() {
					t.Fatalf("queued payout %s", r.Body)
				}
				c, _ := e.in.Server.Devnet().Chain(ticker)
				sweeps := map[string]decimal.Decimal{}
				for _, f := range c.Forwards() {
					if strings.HasPrefix(f.ID, "sweep:") {
						if len(f.Outputs) != 1 || f.Outputs[0].Address != wallet {
							t.Errorf("sweep %s pays %+v, want the wallet", f.ID, f.Outputs)
						}
						sweeps[f.From] = f.Outputs[0].Amount
					}
				}
				if len(sweeps) != 2 || !sweeps[held[0]].Equal(times(30).Sub(nf)) || !sweeps[held[1]].Equal(times(20).Sub(nf)) {
					t.Fatalf("sweeps %v: want both held addresses swept to the wallet, less the network fee", sweeps)
				}
				if b := e.in.Get(t, path+"/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != "0" {
					t.Errorf("balance while the sweeps travel: %s, want 0", b.Body)
				}
				if got := ledgerSum(t, e.in, e.in.ProjectA, ticker, entledger.AccountSwept); !got.Equal(times(50).Sub(nf.Mul(decimal.NewFromInt(2))).Shift(tk.Decimals)) {
					t.Errorf("journal: swept %s base units", got)
				}

				// The sweeps land and are credited to the wallet: the payout goes.
				e.mine(t, ticker, 25)
				info = e.payoutStatus(t, id, e.in.KeyA)
				if info["status"] != "done" || info["txid"] == "" || info["from"] != wallet {
					t.Fatalf("payout after the sweeps: %v", info)
				}
				var payout []string
				for _, f := range c.Forwards() {
					if f.ID == "payout:"+id {
						payout = append(payout, f.From)
						if len(f.Outputs) != 2 || !f.NetworkFee.Equal(nf.Mul(decimal.NewFromInt(2))) {
							t.Errorf("payout transaction %+v", f)
						}
						for _, o := range f.Outputs {
							want := map[string]decimal.Decimal{destA: times(25), destB: times(15)}[o.Address]
							if !o.Amount.Equal(want) {
								t.Errorf("pays %s %s, want %s", o.Address, o.Amount, want)
							}
						}
					}
				}
				if len(payout) != 1 || payout[0] != wallet {
					t.Fatalf("payout transactions from %v, want one from the wallet", payout)
				}

				// A second payout waits for the first's transactions to land.
				r = e.postKey(t, path+"/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, destA, times(5)), e.in.KeyA)
				wantStatus(t, r, 200)
				second := fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"])
				if st := r.JSON["payout_info"].(map[string]any)["status"]; st != "processing" {
					t.Fatalf("second payout %s: want processing until the first lands", r.Body)
				}
				for range 3 {
					e.mine(t, ticker, 1)
				}
				if info := e.payoutStatus(t, second, e.in.KeyA); info["status"] != "done" {
					t.Fatalf("second payout once the first landed: %v", info)
				}

				units := func(v decimal.Decimal) decimal.Decimal { return v.Shift(tk.Decimals) }
				if got := ledgerSum(t, e.in, e.in.ProjectA, ticker, entledger.AccountPayout); !got.Equal(units(times(45))) {
					t.Errorf("journal: paid out %s base units, want %s", got, units(times(45)))
				}
				for _, acc := range []entledger.Account{entledger.AccountSwept, entledger.AccountOutgoing} {
					if got := ledgerSum(t, e.in, e.in.ProjectA, ticker, acc); !got.IsZero() {
						t.Errorf("journal: %s %s base units", acc, got)
					}
				}
				left := times(5).Sub(nf.Mul(decimal.NewFromInt(5)))
				if got := ledgerSum(t, e.in, e.in.ProjectA, ticker, entledger.AccountHeld); !got.Equal(units(left)) {
					t.Errorf("journal: held %s base units, want %s", got, units(left))
				}
				if got := ledgerSum(t, e.in, e.in.ProjectA, ticker, entledger.AccountReceived); !got.Equal(units(times(-50))) {
					t.Errorf("journal: received %s base units, want -50u: a sweep's arrival is not new money", got)
				}
				if b := e.in.Get(t, path+"/payout/balance/", nil, e.in.KeyA); b.JSON["balance"] != left.String() {
					t.Errorf("balance %s, want %s", b.Body, left)
				}
			})
		}
	}
}

// TestPayoutInterval: with --payout-interval, queued payouts wait until the
// oldest has waited the interval, and with --payout-min-batch until
// together they reach it; then they go in one transaction, each payout
// done with its part of the network fee.
func TestPayoutInterval(t *testing.T) {
	t.Parallel()
	tk, _ := family.DefaultRegistry().Lookup("ltc")
	clk := clock.NewManual(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
	e := newDevEnv(t, store.SQLite, func(c *server.Config) {
		c.Now = clk.Now
		c.Chains.PayoutInterval = map[string]time.Duration{"ltc": 10 * time.Minute}
		c.Chains.PayoutMinBatch = map[string]decimal.Decimal{"ltc": decimal.RequireFromString("0.3")}
	})
	r := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	wallet := r.JSON["address"].(string)
	wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": wallet, "value_coin": "1"}), 200)
	e.mine(t, "ltc", 5)
	destA, destB := destinations(t, tk)
	var ids []string
	for _, out := range []string{fmt.Sprintf(`{"outputs": {%q: "0.1"}}`, destA), fmt.Sprintf(`{"outputs": {%q: "0.15"}}`, destB)} {
		r := e.postKey(t, "/ltc/payout/request/bulk/process/", out, e.in.KeyA)
		wantStatus(t, r, 200)
		info := r.JSON["payout_info"].(map[string]any)
		if info["status"] != "processing" || r.JSON["queued"] != true {
			t.Fatalf("queued payout %s", r.Body)
		}
		ids = append(ids, fmt.Sprint(info["id"]))
	}
	tick := func() {
		t.Helper()
		if err := e.in.Server.Payouts().Tick(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	if st := e.payoutStatus(t, ids[0], e.in.KeyA)["status"]; st != "processing" {
		t.Fatalf("before the interval: %v", st)
	}
	clk.Advance(11 * time.Minute)
	tick()
	if st := e.payoutStatus(t, ids[0], e.in.KeyA)["status"]; st != "processing" {
		t.Fatalf("a batch of 0.25 below the minimum of 0.3 went: %v", st)
	}
	// A refused payout does not wait in the queue: more than the balance.
	if r := e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.8"}}`, destA), e.in.KeyA); r.Code != 400 {
		t.Fatalf("a payout the balance less the queued ones does not cover: HTTP %d %s", r.Code, r.Body)
	}
	r = e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.1"}}`, destA), e.in.KeyA)
	wantStatus(t, r, 200)
	ids = append(ids, fmt.Sprint(r.JSON["payout_info"].(map[string]any)["id"]))
	tick()
	txids := map[any]bool{}
	fee := decimal.Zero
	for _, id := range ids {
		info := e.payoutStatus(t, id, e.in.KeyA)
		if info["status"] != "done" {
			t.Fatalf("payout %s after the interval with 0.35 queued: %v", id, info)
		}
		txids[info["txid"]] = true
		fee = fee.Add(decimal.RequireFromString(info["blockchain_fee"].(string)))
	}
	if len(txids) != 1 {
		t.Errorf("the batch went in %d transactions, want 1", len(txids))
	}
	c, _ := e.in.Server.Devnet().Chain("ltc")
	for _, f := range c.Forwards() {
		if strings.HasPrefix(f.ID, "payout:") && !f.NetworkFee.Equal(fee) {
			t.Errorf("the transaction's network fee %s, the payouts' %s", f.NetworkFee, fee)
		}
	}
}
