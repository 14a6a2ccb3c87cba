package distribute_test

import (
	"errors"
	"testing"

	"github.com/payhook/payhook/chains/distribute"
)

// TestCheckOutputs plans each ticker's minimum payment over a split and
// refuses the splits that give a destination less than its network carries
// (ltc: 0.002 minus 1% and 0.00002 leaves 0.00196 to split; btc: 0.000079;
// sol: 0.009895).
func TestCheckOutputs(t *testing.T) {
	t.Parallel()
	const (
		ltcA    = "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh" // P2WPKH: 2940 litoshi
		ltcB    = "ltc1qwlezpr3890hcp6vva9twqh27mr6edadreqvhnn"
		ltcPKH  = "LdP8Qox1VAhCzLJNqrr74YovaWYyNBUWvL" // P2PKH: 5460 litoshi
		btcA    = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
		btcB    = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
		solA    = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
		solB    = "Hh8QwFUA6MtVu1qAoq12ucvFHNwCcVTV7hpWjeY1Hztb"
		ethA    = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
		ethB    = "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"
		refused = true
	)
	type dest struct{ addr, share string }
	tests := []struct {
		name    string
		ticker  string
		split   []dest
		refused bool
		// the refusal: destination, its amount and the limit
		addr, amount, limit string
	}{
		{"ltc one destination", "ltc", []dest{{ltcA, "1"}}, false, "", "", ""},
		{"ltc 1% below P2WPKH dust", "ltc", []dest{{ltcA, "0.99"}, {ltcB, "0.01"}}, refused, ltcB, "0.0000196", "0.0000294"},
		{"ltc 1.5% exactly at P2WPKH dust", "ltc", []dest{{ltcA, "0.985"}, {ltcB, "0.015"}}, false, "", "", ""},
		{"ltc 2.7% below P2PKH dust", "ltc", []dest{{ltcA, "0.973"}, {ltcPKH, "0.027"}}, refused, ltcPKH, "0.00005292", "0.0000546"},
		{"ltc 2.8% above P2PKH dust", "ltc", []dest{{ltcA, "0.972"}, {ltcPKH, "0.028"}}, false, "", "", ""},
		{"btc 0.1% of 7900 sats", "btc", []dest{{btcA, "0.999"}, {btcB, "0.001"}}, refused, btcB, "0.00000007", "0.00000294"},
		{"btc share that rounds to nothing", "btc", []dest{{btcA, "0.99999999"}, {btcB, "0.00000001"}}, refused, btcB, "0", "0.00000294"},
		{"sol 10% above rent", "sol", []dest{{solA, "0.9"}, {solB, "0.1"}}, false, "", "", ""},
		{"sol 9% below rent", "sol", []dest{{solA, "0.91"}, {solB, "0.09"}}, refused, solB, "0.00089055", "0.00089088"},
		{"eth has no minimum", "eth", []dest{{ethA, "0.99999999"}, {ethB, "0.00000001"}}, false, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var ss []distribute.Share
			for _, s := range tt.split {
				ss = append(ss, distribute.Share{Address: s.addr, Share: d(s.share)})
			}
			err := distribute.CheckOutputs(ticker(t, tt.ticker), ss)
			if !tt.refused {
				if err != nil {
					t.Fatalf("CheckOutputs = %v, want nil", err)
				}
				return
			}
			var be *distribute.BelowNetworkMinimumError
			if !errors.Is(err, distribute.ErrBelowNetworkMinimum) || !errors.As(err, &be) {
				t.Fatalf("CheckOutputs = %v, want a *BelowNetworkMinimumError", err)
			}
			if be.Address != tt.addr || !be.Amount.Equal(d(tt.amount)) || !be.Limit.Equal(d(tt.limit)) {
				t.Errorf("refusal names %s, %s below %s; want %s, %s below %s", be.Address, be.Amount, be.Limit, tt.addr, tt.amount, tt.limit)
			}
		})
	}
}

// TestCheckOutputsWithoutAMinimumPlan: a ticker whose minimum payment
// leaves nothing to forward has no plan to check; invalid addresses and
// shares are errors of their own.
func TestCheckOutputsWithoutAMinimumPlan(t *testing.T) {
	t.Parallel()
	btc := ticker(t, "btc")
	btc.MinTransaction = d("0")
	tiny := []distribute.Share{{Address: "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", Share: d("0.99999999")}, {Address: "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g", Share: d("0.00000001")}}
	if err := distribute.CheckOutputs(btc, tiny); err != nil {
		t.Errorf("CheckOutputs with a zero minimum = %v, want nil", err)
	}
	bad := []distribute.Share{{Address: "not-an-address", Share: d("1")}}
	if err := distribute.CheckOutputs(ticker(t, "btc"), bad); err == nil || errors.Is(err, distribute.ErrBelowNetworkMinimum) {
		t.Errorf("CheckOutputs of an invalid address = %v, want the address error", err)
	}
	if err := distribute.CheckOutputs(ticker(t, "btc"), nil); !errors.Is(err, distribute.ErrInvalidShares) {
		t.Errorf("CheckOutputs without shares = %v, want ErrInvalidShares", err)
	}
}
