package admin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRegistryFileReservedNames: --registry-file may not name a ticker
// after a first segment of the route table (here the checkout API's), and
// loads otherwise.
func TestRegistryFileReservedNames(t *testing.T) {
	t.Parallel()
	const entry = `{"tickers": [{"ticker": %q, "family": "evm", "token": true,
		"contract": "0xdAC17F958D2ee523a2206206994597C13D831ec7", "decimals": 6,
		"default_confirmations": 12, "min_confirmations": 3, "min_transaction": "5",
		"fee_rate": "0.01", "network_fee_estimate": "2"}]}`
	for _, r := range []struct {
		ticker string
		err    string
	}{
		{"checkout/usdt", `"checkout" is reserved for payhook's own paths`},
		{"openapi/usdt", ""},
		{"erc20/usdt", ""},
	} {
		t.Run(r.ticker, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "registry.json")
			if err := os.WriteFile(path, []byte(strings.Replace(entry, "%q", `"`+r.ticker+`"`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadRegistry(path)
			switch {
			case r.err == "" && err != nil:
				t.Fatalf("LoadRegistry: %v", err)
			case r.err != "" && (err == nil || !strings.Contains(err.Error(), r.err)):
				t.Fatalf("LoadRegistry = %v, want an error containing %q", err, r.err)
			}
		})
	}
}
