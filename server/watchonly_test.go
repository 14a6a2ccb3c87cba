package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/watchonly"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/merchant/project"
)

// merchantAccount returns the merchant's account key m/purpose'/coin'/0'
// of a fixed seed (their hardware wallet), as the spec payhook is given:
// a descriptor with its key origin for UTXO coins, the account xpub for
// EVM.
func merchantAccount(t *testing.T, purpose, coin uint32, script string) string {
	t.Helper()
	master, err := hdkeychain.NewMaster([]byte(strings.Repeat("merchant", 4)), &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	mpub, _ := master.ECPubKey()
	fp := btcutil.Hash160(mpub.SerializeCompressed())[:4]
	k := master
	for _, step := range []uint32{purpose, coin, 0} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + step); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	if script == "" {
		return pub.String()
	}
	return fmt.Sprintf("%s([%x/%dh/%dh/0h]%s/0/*)", script, fp, purpose, coin, pub.String())
}

// TestWatchOnlyDevnet: a project whose wallet of a coin is the merchant's
// own key hands out that key's addresses, each index once, in order, for
// low-level creates and checkouts alike; refuses a forwarding address; and
// a payment to one is credited, notified pending/confirmed/completed with
// value_forwarded_coin equal to value_coin and no txid_out, nothing sent,
// and the service fee journaled as owed.
func TestWatchOnlyDevnet(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	cases := []struct {
		ticker, spec, value string
		steps               []int
	}{
		{"btc", merchantAccount(t, 84, 0, "wpkh"), "0.05", []int{1, 1, 1}},
		{"eth", merchantAccount(t, 44, 60, ""), "0.25", []int{1, 2}},
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.ticker, func(t *testing.T) {
					ctx := context.Background()
					e := newDevEnv(t, d)
					tk, _ := reg.Lookup(c.ticker)
					key, err := watchonly.Parse(tk, c.spec)
					if err != nil {
						t.Fatal(err)
					}
					db := e.in.Server.DB().Client
					if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: tk, Key: key}, clock.Now()); err != nil {
						t.Fatal(err)
					}
					// Low-level creates: the key's addresses 0, 1, 2 in
					// order; the same callback again is the same address.
					var addrs []string
					for i := range 3 {
						r := e.in.Get(t, "/"+c.ticker+"/create/", q("callback", fmt.Sprintf("%s/hook?n=%d", e.sink.URL, i), "json", "1", "confirmations", "3"), e.in.KeyA)
						wantStatus(t, r, 200)
						want, _ := key.Address(uint32(i))
						if got := r.JSON["address_in"]; got != want {
							t.Fatalf("create %d: address_in %v, want the key's /0/%d %s", i, got, i, want)
						}
						addrs = append(addrs, want)
					}
					r := e.in.Get(t, "/"+c.ticker+"/create/", q("callback", e.sink.URL+"/hook?n=0", "json", "1", "confirmations", "3"), e.in.KeyA)
					wantStatus(t, r, 200)
					if r.JSON["address_in"] != addrs[0] {
						t.Fatalf("the same callback again: %v, want %s", r.JSON["address_in"], addrs[0])
					}
					// A forwarding address is refused, naming it.
					dest, _ := destinations(t, tk)
					r = e.in.Get(t, "/"+c.ticker+"/create/", q("callback", e.sink.URL+"/hook?n=9", "address", dest), e.in.KeyA)
					wantStatus(t, r, 400)
					if !strings.Contains(string(r.Body), "address") || !strings.Contains(string(r.Body), "watch-only") {
						t.Fatalf("create with a forwarding address: %s", r.Body)
					}
					// Another project's creates still come from the seed.
					r = e.in.Get(t, "/"+c.ticker+"/create/", q("callback", e.sink.URL+"/hook?b=1", "address", dest), e.in.KeyB)
					wantStatus(t, r, 200)
					if a := r.JSON["address_in"].(string); a == addrs[0] || a == addrs[1] {
						t.Fatalf("project B got the merchant's address %s", a)
					}

					pay := e.post(t, "/devnet/"+c.ticker+"/pay/", map[string]any{"address_in": addrs[1], "value_coin": c.value})
					wantStatus(t, pay, 200)
					txid := pay.JSON["txid_in"].(string)
					for _, n := range c.steps {
						e.mine(t, c.ticker, n)
					}
					if len(e.sink.errs) > 0 {
						t.Fatalf("receiver rejected callbacks: %v", e.sink.errs)
					}
					statuses := e.sink.statuses()
					if len(statuses) < 2 || statuses[len(statuses)-2] != "confirmed" || statuses[len(statuses)-1] != "completed" {
						t.Fatalf("callbacks %v, want ... confirmed, completed", statuses)
					}
					value := decimal.RequireFromString(c.value)
					wantFee := distribute.Fee(tk, value)
					e.sink.mu.Lock()
					last := e.sink.got[len(e.sink.got)-1]
					e.sink.mu.Unlock()
					f := last.fields
					if _, has := f["txid_out"]; has {
						t.Fatalf("completed carries txid_out %s: nothing was sent", f["txid_out"])
					}
					fwd := decimal.RequireFromString(string(f["value_forwarded_coin"]))
					if !fwd.Equal(value) {
						t.Fatalf("value_forwarded_coin %s, want value_coin %s", fwd, value)
					}
					var in string
					_ = json.Unmarshal(f["txid_in"], &in)
					if in != txid {
						t.Fatalf("txid_in %s, want %s", in, txid)
					}

					p, err := db.Payment.Query().Where(entpayment.TxidIn(txid)).Only(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if p.Status != entpayment.StatusCompleted || p.HoldReason != entpayment.HoldReasonNone || !p.FeeCoin.Equal(wantFee) {
						t.Fatalf("payment %s, hold %s, fee %v; want completed, none, %s", p.Status, p.HoldReason, p.FeeCoin, wantFee)
					}
					if n, _ := db.Outbound.Query().Count(ctx); n > 0 {
						t.Fatalf("%d outgoing transactions: nothing may be sent from the merchant's key", n)
					}
					lines, err := db.LedgerEntry.Query().Where(entledger.PaymentID(p.ID)).All(ctx)
					if err != nil {
						t.Fatal(err)
					}
					units := func(v decimal.Decimal) decimal.Decimal { return v.Shift(int32(tk.Decimals)) }
					want := map[string]decimal.Decimal{
						"credit/received": units(value).Neg(), "credit/pending": units(value),
						"direct/pending": units(value).Neg(), "direct/direct": units(value),
						"direct/fee": units(wantFee), "direct/owed": units(wantFee).Neg(),
					}
					got := map[string]decimal.Decimal{}
					for _, l := range lines {
						got[string(l.Event)+"/"+string(l.Account)] = l.Amount
					}
					if len(got) != len(want) {
						t.Fatalf("journal %v, want %v", got, want)
					}
					for k, v := range want {
						if !got[k].Equal(v) {
							t.Fatalf("journal %s = %s, want %s (all: %v)", k, got[k], v, got)
						}
					}

					// A checkout of the project takes the key's next index.
					notify := e.sink.URL + "/hook"
					r = e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100", "currency", "USD", "json", "1"), e.in.KeyA)
					wantStatus(t, r, 200)
					ca := e.in.Get(t, "/checkout/address/", q("payment_id", r.JSON["payment_id"].(string), "coin", c.ticker), e.in.KeyA)
					wantStatus(t, ca, 200)
					if want, _ := key.Address(3); ca.JSON["address_in"] != want {
						t.Fatalf("checkout address %v, want the key's /0/3 %s", ca.JSON["address_in"], want)
					}
					pr, err := project.Get(ctx, db, e.in.ProjectA)
					if err != nil {
						t.Fatal(err)
					}
					ws, err := project.WatchWallets(ctx, db, pr)
					if err != nil || len(ws) != 1 {
						t.Fatalf("watch wallets %v, %v", ws, err)
					}
					w := ws[0]
					if w.Handed != 4 || w.LastUsed != 1 || w.LongestGap != 1 || w.Tail != 2 || w.Outrun() {
						t.Fatalf("wallet report: handed %d, last used %d, longest gap %d, tail %d", w.Handed, w.LastUsed, w.LongestGap, w.Tail)
					}
					rows, err := db.Address.Query().Where(entaddress.ProjectID(e.in.ProjectA), entaddress.Ticker(tk.Ticker)).All(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, a := range rows {
						if a.DerivationIndex != nil || a.WatchKeyID == nil || a.WatchIndex == nil {
							t.Fatalf("address %s: derivation index %v, watch key %v, index %v", a.AddressIn, a.DerivationIndex, a.WatchKeyID, a.WatchIndex)
						}
						if want, _ := key.Address(uint32(*a.WatchIndex)); want != a.AddressIn {
							t.Fatalf("address %s stored with index %d, which is %s", a.AddressIn, *a.WatchIndex, want)
						}
					}
				})
			}
		})
	}
}

// TestWatchOnlyConcurrentCreates: creates racing for a merchant's key get
// one index each, 0 to n-1, none twice and none skipped, on both dialects
// (the key's row is updated in each create's transaction: PostgreSQL
// makes the others wait for it).
func TestWatchOnlyConcurrentCreates(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newDevEnv(t, d)
			tk, _ := family.DefaultRegistry().Lookup("btc")
			key, err := watchonly.Parse(tk, merchantAccount(t, 84, 0, "wpkh"))
			if err != nil {
				t.Fatal(err)
			}
			db := e.in.Server.DB().Client
			if _, err := project.SetWatchKey(ctx, db, e.in.ProjectA, project.WatchKeyParams{Ticker: tk, Key: key}, clock.Now()); err != nil {
				t.Fatal(err)
			}
			const n = 24
			got := make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.in.Get(t, "/btc/create/", q("callback", fmt.Sprintf("%s/hook?race=%d", e.sink.URL, i)), e.in.KeyA)
					if r.Code != 200 {
						t.Errorf("create %d: HTTP %d %s", i, r.Code, r.Body)
						return
					}
					got[i], _ = r.JSON["address_in"].(string)
				}()
			}
			wg.Wait()
			want := map[string]bool{}
			for i := range n {
				a, _ := key.Address(uint32(i))
				want[a] = true
			}
			for i, a := range got {
				if !want[a] {
					t.Fatalf("create %d got %q, not one of the key's first %d addresses (or twice)", i, a, n)
				}
				delete(want, a)
			}
		})
	}
}
