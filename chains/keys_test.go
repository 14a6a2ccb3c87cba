package chains_test

import (
	"crypto/ed25519"
	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"
)

// TestKeysControlDerivedAddresses: the key Keys gives for index i controls
// the address Deriver gives for i, on every network.
func TestKeysControlDerivedAddresses(t *testing.T) {
	seed := []byte("payhook keys test seed, 32 bytes")
	d, err := chains.NewDeriver(seed, family.All())
	if err != nil {
		t.Fatal(err)
	}
	k, err := chains.NewKeys(seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, net := range []chains.Net{chains.Mainnet, chains.Testnet, chains.Regtest} {
		for _, tk := range family.DefaultRegistry().All() {
			r, err := family.DefaultRegistry().WithNet(tk.Ticker, net)
			if err != nil {
				t.Fatal(err)
			}
			tk, _ = r.Lookup(tk.Ticker)
			for _, i := range []uint32{0, 7} {
				want, err := d.Address(tk, i)
				if err != nil {
					t.Fatal(err)
				}
				var got string
				if p, _ := tk.Rules().KeyPath(tk); p.Curve == chains.Ed25519 {
					priv, err := k.Ed25519(tk, i)
					if err != nil {
						t.Fatal(err)
					}
					got = base58.Encode(priv.Public().(ed25519.PublicKey))
				} else {
					priv, err := k.Secp256k1(tk, i)
					if err != nil {
						t.Fatal(err)
					}
					if got, err = chains.PubKeyAddress(tk, priv.PubKey()); err != nil {
						t.Fatal(err)
					}
				}
				if got != want {
					t.Errorf("%s on %s, index %d: key controls %s, Deriver gives %s", tk.Ticker, net, i, got, want)
				}
				if err := chains.ValidateAddress(tk, want); err != nil {
					t.Errorf("%s on %s: derived address %s: %v", tk.Ticker, net, want, err)
				}
			}
			op, err := k.OperatorAddress(tk)
			if err != nil {
				t.Fatal(err)
			}
			if err := chains.ValidateAddress(tk, op); err != nil {
				t.Errorf("%s on %s: operator address %s: %v", tk.Ticker, net, op, err)
			}
			if a0, _ := d.Address(tk, 0); a0 == op {
				t.Errorf("%s: the operator address is payment address 0", tk.Ticker)
			}
		}
	}
	if s := k.String() + k.GoString(); strings.Contains(s, string(seed)) {
		t.Error("Keys prints its seed")
	}
}

// TestAddressesOfTheWrongNetwork: each network's addresses carry its
// prefixes, and an address of another network is refused with a reason
// that says so.
func TestAddressesOfTheWrongNetwork(t *testing.T) {
	seed := []byte("payhook keys test seed, 32 bytes")
	d, _ := chains.NewDeriver(seed, family.All())
	on := func(ticker string, net chains.Net) chains.Ticker {
		r, err := family.DefaultRegistry().WithNet(ticker, net)
		if err != nil {
			t.Fatal(err)
		}
		tk, _ := r.Lookup(ticker)
		return tk
	}
	for _, tt := range []struct {
		ticker string
		net    chains.Net
		prefix string
	}{
		{"btc", chains.Mainnet, "bc1q"}, {"btc", chains.Testnet, "tb1q"}, {"btc", chains.Regtest, "bcrt1q"},
		{"ltc", chains.Mainnet, "ltc1q"}, {"ltc", chains.Testnet, "tltc1q"}, {"ltc", chains.Regtest, "rltc1q"},
		{"bch", chains.Mainnet, "bitcoincash:q"}, {"bch", chains.Testnet, "bchtest:q"}, {"bch", chains.Regtest, "bchreg:q"},
		{"doge", chains.Mainnet, "D"}, {"doge", chains.Testnet, "n"}, {"doge", chains.Regtest, "m"},
	} {
		tk := on(tt.ticker, tt.net)
		a, err := d.Address(tk, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(a, tt.prefix) && !(tt.ticker == "doge" && tt.net != chains.Mainnet && (a[0] == 'm' || a[0] == 'n')) {
			t.Errorf("%s on %s: %s, want prefix %q", tt.ticker, tt.net, a, tt.prefix)
		}
		for _, other := range []chains.Net{chains.Mainnet, chains.Testnet, chains.Regtest} {
			if other == tt.net {
				continue
			}
			err := chains.ValidateAddress(on(tt.ticker, other), a)
			// base58 testnet and regtest versions coincide (btc, ltc, bch):
			// those mix-ups are indistinguishable and pass.
			sameForm := tt.net != chains.Mainnet && other != chains.Mainnet && !strings.Contains(tt.prefix, "1") && !strings.Contains(tt.prefix, ":")
			if tt.ticker == "doge" && tt.net != chains.Mainnet && other != chains.Mainnet {
				continue // doge testnet (0x71) and regtest (0x6f) differ, but either may be given
			}
			if sameForm {
				continue
			}
			if err == nil {
				t.Errorf("%s %s address %s accepted on %s", tt.ticker, tt.net, a, other)
				continue
			}
			if !strings.Contains(err.Error(), "network") && !strings.Contains(err.Error(), "mainnet") {
				t.Errorf("%s %s address on %s: %v; want a reason naming the network", tt.ticker, tt.net, other, err)
			}
		}
	}
	if _, err := family.DefaultRegistry().WithNet("ltc", "signet"); err == nil {
		t.Error("WithNet accepted an unknown network")
	}
	if _, err := family.DefaultRegistry().WithNet("nope", chains.Regtest); err == nil {
		t.Error("WithNet accepted an unknown ticker")
	}
}
