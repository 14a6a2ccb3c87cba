package chains_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

func TestValidateAddressUnsupportedTicker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    chains.Ticker
	}{
		{"zero ticker", chains.Ticker{}},
		{"unknown family", chains.Ticker{Ticker: "xmr", Network: "xmr", Family: "cryptonote"}},
		{"unknown utxo network", chains.Ticker{Ticker: "dash", Network: "dash", Family: chains.FamilyUTXO}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := chains.ValidateAddress(tt.t, "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2")
			if !errors.Is(err, chains.ErrUnsupportedNetwork) || errors.Is(err, chains.ErrInvalidAddress) {
				t.Errorf("error = %v, want ErrUnsupportedNetwork only", err)
			}
		})
	}
}

func TestAddressErrorMessage(t *testing.T) {
	t.Parallel()
	btc, _ := family.DefaultRegistry().Lookup("btc")
	tests := []struct {
		name string
		addr string
		want string
	}{
		{"base58", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3", `invalid btc address "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3": bad checksum`},
		{"long input truncated", strings.Repeat("1", 200), `invalid btc address "` + strings.Repeat("1", 128) + `...": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := chains.ValidateAddress(btc, tt.addr)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v, want prefix %q", err, tt.want)
			}
		})
	}
}

// FuzzValidateAddress checks that no input panics and that every error is
// classified.

// FuzzValidateAddress checks that no input panics and that every error is
// classified.
func FuzzValidateAddress(f *testing.F) {
	for _, s := range []string{
		"", "1", "bc1", "bitcoincash:", ":", "0x", "T", "11111111111111111111111111111111",
		"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
		"bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
		"TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk",
	} {
		f.Add(s)
	}
	tickers := family.DefaultRegistry().All()
	f.Fuzz(func(t *testing.T, addr string) {
		for _, tk := range tickers {
			if err := chains.ValidateAddress(tk, addr); err != nil && !errors.Is(err, chains.ErrInvalidAddress) {
				t.Fatalf("ValidateAddress(%s, %q) = %v: not ErrInvalidAddress", tk.Ticker, addr, err)
			}
		}
	})
}
