package server_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
)

// TestForwardPriority: an address's priority chooses its forward's network
// fee: on the devnet, a btc address at fast (10 blocks) deducts two and a
// half times the default estimate, an eth address at economic offers 95%
// of the gas price and deducts 95% of the estimate; /estimate/ follows the
// same levels.
func TestForwardPriority(t *testing.T) {
	t.Parallel()
	e := newDevEnv(t, store.SQLite)
	reg := family.DefaultRegistry()
	for _, c := range []struct {
		ticker, priority, value string
		fee                     decimal.Decimal
		gasPercent              int
	}{
		{"btc", "fast", "0.01", decimal.RequireFromString("0.00005"), 0},
		{"eth", "economic", "0.1", decimal.RequireFromString("0.000475"), 95},
	} {
		tk, _ := reg.Lookup(c.ticker)
		dest, _ := destinations(t, tk)
		r := e.in.Get(t, "/"+c.ticker+"/create/", q("callback", e.sink.URL+"/hook?p="+c.ticker, "address", dest, "priority", c.priority), e.in.KeyA)
		wantStatus(t, r, 200)
		if r.JSON["priority"] != c.priority {
			t.Fatalf("%s create: %s", c.ticker, r.Body)
		}
		addrIn := r.JSON["address_in"].(string)
		est := e.in.Get(t, "/"+c.ticker+"/estimate/", q("priority", c.priority), "")
		if est.JSON["estimated_cost"] != c.fee.String() {
			t.Errorf("%s estimate at %s: %s, want %s", c.ticker, c.priority, est.Body, c.fee)
		}
		wantStatus(t, e.post(t, "/devnet/"+c.ticker+"/pay/", map[string]any{"address_in": addrIn, "value_coin": c.value}), 200)
		e.mine(t, c.ticker, 20)
		ch, _ := e.in.Server.Devnet().Chain(c.ticker)
		found := false
		for _, f := range ch.Forwards() {
			if f.From != addrIn {
				continue
			}
			found = true
			if !f.NetworkFee.Equal(c.fee) || f.GasPercent != c.gasPercent {
				t.Errorf("%s forward at %s: network fee %s, gas %d%%; want %s, %d%%", c.ticker, c.priority, f.NetworkFee, f.GasPercent, c.fee, c.gasPercent)
			}
		}
		if !found {
			t.Errorf("no %s forward from %s", c.ticker, addrIn)
		}
	}
}
