package rpc

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/solana/solanatest"
)

// TestTransfersPaging: Transfers pages back through
// getSignaturesForAddress (two signatures a page here) and returns exactly
// the range's transfers, oldest first.
func TestTransfersPaging(t *testing.T) {
	t.Parallel()
	reg, err := family.DefaultRegistry().WithNet("sol", chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := reg.Get("sol")
	fake := solanatest.New(solanatest.Options{ConfirmedDepth: 1, Decimals: 9})
	t.Cleanup(fake.Close)
	b, err := New(Config{Ticker: tk, URL: fake.URL()})
	if err != nil {
		t.Fatal(err)
	}
	b.page = 2
	d, err := chains.NewDeriver(chaintest.Seed, family.All())
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Address(tk, 0)
	if err != nil {
		t.Fatal(err)
	}
	b.Watch(a)
	type paid struct {
		sig  string
		slot int64
	}
	var all []paid
	for slot := int64(1); slot <= 6; slot++ {
		for i := range int(slot % 3) { // 1, 2, 0, 1, 2, 0 payments
			sig, err := fake.PaySOL(a, uint64(1_000_000*slot+int64(i)))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, paid{sig, slot})
		}
		fake.Mine(1)
	}
	for _, r := range [][2]int64{{0, 6}, {0, 1}, {1, 5}, {2, 3}, {3, 6}, {5, 6}} {
		var want []string
		for _, p := range all {
			if p.slot > r[0] && p.slot <= r[1] {
				want = append(want, p.sig)
			}
		}
		trs, err := b.Transfers(t.Context(), r[0], r[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tr := range trs {
			got = append(got, tr.TxID)
			if tr.Value.LessThan(decimal.New(1, -3)) {
				t.Errorf("transfer %+v", tr)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("Transfers(%d, %d) = %v, want %v", r[0], r[1], got, want)
		}
	}
}
