package jsonrpc

import (
	"math/big"
	"testing"
)

// TestFeesAtPriority: a priority's share scales the tip and the cap (or
// the legacy price), rounded down; the cap never falls below the base fee,
// nor the tip above the cap; 0 and 100 change nothing.
func TestFeesAtPriority(t *testing.T) {
	t.Parallel()
	b := big.NewInt
	p := feeParams{tip: b(2_000), cap: b(202_000), base: b(100_000)}
	for _, c := range []struct {
		percent        int
		wantTip, wantC int64
	}{
		{0, 2_000, 202_000}, {100, 2_000, 202_000}, {120, 2_400, 242_400}, {95, 1_900, 191_900}, {75, 1_500, 151_500}, {40, 800, 100_000},
	} {
		got := p.at(c.percent)
		if got.tip.Int64() != c.wantTip || got.cap.Int64() != c.wantC || got.base.Int64() != 100_000 {
			t.Errorf("%d%%: tip %s cap %s, want %d %d", c.percent, got.tip, got.cap, c.wantTip, c.wantC)
		}
	}
	legacy := feeParams{legacy: true, cap: b(1_000)}
	if got := legacy.at(85); !got.legacy || got.cap.Int64() != 850 || got.tip != nil {
		t.Errorf("legacy at 85%%: %+v", got)
	}
	if p.tip.Int64() != 2_000 {
		t.Error("at changed its receiver")
	}
}
