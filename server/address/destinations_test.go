package address

import (
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/base58"

	"github.com/payhook/payhook/chains/family"
)

// TestParseDestinationsComparesWhatAddressesPayTo: a destination spelled
// two ways is listed twice (400), whatever the spelling; two destinations
// that only look alike are accepted.
func TestParseDestinationsComparesWhatAddressesPayTo(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	p2sh := "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"
	hash, _, err := base58.CheckDecode(p2sh)
	if err != nil {
		t.Fatal(err)
	}
	ltcM := base58.CheckEncode(hash, 0x32) // the same script as p2sh on ltc
	const (
		cash    = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
		legacy  = "1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu" // cash's legacy form
		cashSH  = "bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq"
		eth     = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		ltcWPKH = "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"
	)
	tests := []struct {
		name   string
		ticker string
		a, b   string
		twice  bool
	}{
		{"ltc P2SH as 0x05 and 0x32", "ltc", p2sh, ltcM, true},
		{"ltc bech32 in two cases", "ltc", ltcWPKH, strings.ToUpper(ltcWPKH), true},
		{"CashAddr with and without prefix", "bch", cash, strings.TrimPrefix(cash, "bitcoincash:"), true},
		{"CashAddr and its legacy form", "bch", cash, legacy, true},
		{"CashAddr upper and lower case", "bch", strings.ToUpper(cash), cash, true},
		{"EVM checksummed and lower case", "eth", eth, strings.ToLower(eth), true},
		{"bch P2PKH and P2SH of one hash", "bch", cash, cashSH, false},
		{"ltc P2SH and P2WPKH", "ltc", ltcM, ltcWPKH, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk, err := reg.Get(tt.ticker)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseDestinations(tk, "0.5@"+tt.a+"|0.5@"+tt.b)
			var inv *InvalidError
			switch {
			case tt.twice && (!errors.As(err, &inv) || inv.Param != "address" || !strings.Contains(inv.Reason, "destination "+tt.b+" is listed twice")):
				t.Errorf("ParseDestinations = %v, %v; want %q listed twice", got, err, tt.b)
			case !tt.twice && (err != nil || len(got) != 2):
				t.Errorf("ParseDestinations = %v, %v; want both destinations", got, err)
			}
		})
	}
}
