package chains_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// TestLoadRegistryReserved: a ticker whose first segment the caller
// reserves is refused, naming the segment; without the option, or for a
// name nobody reserved, it loads.
func TestLoadRegistryReserved(t *testing.T) {
	t.Parallel()
	entry := func(ticker string) string {
		e := validEntry()
		e["ticker"] = ticker
		return registryJSON(t, e)
	}
	rows := []struct {
		name     string
		ticker   string
		reserved []string
		refused  bool
	}{
		{"reserved network", "checkout/usdt", []string{"checkout", "info"}, true},
		{"reserved one-segment ticker", "info", []string{"checkout", "info"}, true},
		{"not reserved", "erc20/usdt", []string{"checkout", "info"}, false},
		{"reserved only by position", "erc20/checkout", []string{"checkout"}, false},
		{"no option", "checkout/usdt", nil, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			in := entry(r.ticker)
			if !strings.Contains(r.ticker, "/") {
				// A one-segment name is a native coin of an EVM network.
				e := validEntry()
				e["ticker"], e["token"] = r.ticker, false
				delete(e, "contract")
				in = registryJSON(t, e)
			}
			var opts []chains.LoadOption
			if r.reserved != nil {
				opts = append(opts, chains.Reserved(r.reserved...))
			}
			_, err := chains.LoadRegistry(strings.NewReader(in), family.All(), opts...)
			var re *chains.RegistryError
			switch {
			case r.refused && (!errors.As(err, &re) || re.Field != "ticker" || !strings.Contains(re.Reason, "reserved")):
				t.Fatalf("LoadRegistry = %v, want the ticker refused as reserved", err)
			case !r.refused && err != nil:
				t.Fatalf("LoadRegistry = %v, want it loaded", err)
			}
		})
	}
}
