package project

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/family"
)

// TestCheckAddresses: a wallet's destinations are valid, distinct however
// they are spelled, and each receives at least what its network carries of
// the ticker's minimum payment.
func TestCheckAddresses(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	const (
		ltcA = "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"
		ltcB = "ltc1qwlezpr3890hcp6vva9twqh27mr6edadreqvhnn"
		cash = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
		solA = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
		solB = "Hh8QwFUA6MtVu1qAoq12ucvFHNwCcVTV7hpWjeY1Hztb"
	)
	tests := []struct {
		name, spec string
		want       string // "" to accept, else part of the message
	}{
		{"one address", "ltc=" + ltcA, ""},
		{"an even split", "ltc=" + ltcA + "," + ltcB, ""},
		{"1.5% at dust", "ltc=" + ltcA + "@0.985," + ltcB + "@0.015", ""},
		{"1% below dust", "ltc=" + ltcA + "@0.99," + ltcB + "@0.01",
			"wallet ltc: destination " + ltcB + " would receive 0.0000196 ltc of the minimum payment of 0.002 ltc, below 0.0000294 ltc, the smallest output the ltc network carries to that address"},
		{"sol below rent", "sol=" + solA + "@0.91," + solB + "@0.09", "below 0.00089088 sol"},
		{"one CashAddr twice", "bch=" + cash + "," + strings.TrimPrefix(cash, "bitcoincash:"), "wallet bch: destination qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a is listed twice"},
		{"invalid address", "ltc=" + ltcA + ",nope", "nope is not a valid ltc address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ticker, ds, err := ParseWallet(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			tk, err := reg.Get(ticker)
			if err != nil {
				t.Fatal(err)
			}
			err = CheckAddresses(tk, ds)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckAddresses(%s) = %v, want nil", tt.spec, err)
			case tt.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckAddresses(%s) = %v, want ErrInvalid saying %q", tt.spec, err, tt.want)
			}
		})
	}
}
