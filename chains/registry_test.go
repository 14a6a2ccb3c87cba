package chains_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func TestDefaultRegistryEntries(t *testing.T) {
	t.Parallel()
	r := family.DefaultRegistry()
	tests := []struct {
		ticker   string
		network  string
		coin     string
		family   chains.FamilyName
		token    bool
		contract string
		decimals int32
	}{
		{"btc", "btc", "btc", chains.FamilyUTXO, false, "", 8},
		{"ltc", "ltc", "ltc", chains.FamilyUTXO, false, "", 8},
		{"bch", "bch", "bch", chains.FamilyUTXO, false, "", 8},
		{"doge", "doge", "doge", chains.FamilyUTXO, false, "", 8},
		{"eth", "eth", "eth", chains.FamilyEVM, false, "", 18},
		{"erc20/usdt", "erc20", "usdt", chains.FamilyEVM, true, "0xdAC17F958D2ee523a2206206994597C13D831ec7", 6},
		{"erc20/usdc", "erc20", "usdc", chains.FamilyEVM, true, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", 6},
		{"bep20/usdt", "bep20", "usdt", chains.FamilyEVM, true, "0x55d398326f99059fF775485246999027B3197955", 18},
		// Two segments, yet the native coin of the Polygon network.
		{"polygon/pol", "polygon", "pol", chains.FamilyEVM, false, "", 18},
		{"trx", "trx", "trx", chains.FamilyTron, false, "", 6},
		{"trc20/usdt", "trc20", "usdt", chains.FamilyTron, true, "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", 6},
		{"sol", "sol", "sol", chains.FamilySolana, false, "", 9},
		{"sol/usdc", "sol", "usdc", chains.FamilySolana, true, "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", 6},
	}
	for _, tt := range tests {
		t.Run(tt.ticker, func(t *testing.T) {
			t.Parallel()
			got, ok := r.Lookup(tt.ticker)
			if !ok {
				t.Fatalf("Lookup(%q) not found", tt.ticker)
			}
			if got.Ticker != tt.ticker || got.Network != tt.network || got.Coin != tt.coin ||
				got.Family != tt.family || got.Token != tt.token || got.Contract != tt.contract || got.Decimals != tt.decimals {
				t.Errorf("Lookup(%q) = %+v, want network %q coin %q family %q token %v contract %q decimals %d",
					tt.ticker, got, tt.network, tt.coin, tt.family, tt.token, tt.contract, tt.decimals)
			}
			if got.MinConfirmations < 1 || got.MinConfirmations > got.DefaultConfirmations {
				t.Errorf("confirmations min %d default %d", got.MinConfirmations, got.DefaultConfirmations)
			}
			if got.MinTransaction.Sign() <= 0 {
				t.Errorf("MinTransaction = %s, want > 0", got.MinTransaction)
			}
		})
	}
	if n := len(r.All()); n != len(tests) {
		t.Errorf("len(All()) = %d, want %d", n, len(tests))
	}
}

func TestDefaultRegistrySolanaConfirmations(t *testing.T) {
	t.Parallel()
	r := family.DefaultRegistry()
	for _, name := range []string{"sol", "sol/usdc"} {
		tk, _ := r.Lookup(name)
		if tk.DefaultConfirmations != 1 || tk.MinConfirmations != 1 {
			t.Errorf("%s confirmations default %d min %d, want 1 and 1", name, tk.DefaultConfirmations, tk.MinConfirmations)
		}
	}
}

func TestRegistryAmountsAreExactDecimals(t *testing.T) {
	t.Parallel()
	btc, _ := family.DefaultRegistry().Lookup("btc")
	tests := []struct {
		name string
		got  decimal.Decimal
		want string
	}{
		{"min transaction", btc.MinTransaction, "0.0001"},
		{"fee rate", btc.FeeRate, "0.01"},
		{"network fee", btc.NetworkFeeEstimate, "0.00002"},
	}
	for _, tt := range tests {
		if !tt.got.Equal(decimal.RequireFromString(tt.want)) || tt.got.String() != tt.want {
			t.Errorf("%s = %s, want exactly %s", tt.name, tt.got, tt.want)
		}
	}
}

func TestRegistryLookup(t *testing.T) {
	t.Parallel()
	r := family.DefaultRegistry()
	tests := []struct {
		name  string
		in    string
		want  string
		found bool
	}{
		{"lower", "btc", "btc", true},
		{"upper", "BTC", "btc", true},
		{"mixed token", "TRC20/Usdt", "trc20/usdt", true},
		{"unknown", "xmr", "", false},
		{"coin alone is not a ticker", "usdt", "", false},
		{"surrounding space not trimmed", " btc", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := r.Lookup(tt.in)
			if ok != tt.found || got.Ticker != tt.want {
				t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.in, got.Ticker, ok, tt.want, tt.found)
			}
			_, err := r.Get(tt.in)
			if tt.found != (err == nil) || (!tt.found && !errors.Is(err, chains.ErrUnknownTicker)) {
				t.Errorf("Get(%q) error = %v, want ErrUnknownTicker: %v", tt.in, err, !tt.found)
			}
		})
	}
}

func TestRegistryAllIsSortedCopy(t *testing.T) {
	t.Parallel()
	r := family.DefaultRegistry()
	all := r.All()
	if !slices.IsSortedFunc(all, func(a, b chains.Ticker) int { return strings.Compare(a.Ticker, b.Ticker) }) {
		t.Errorf("All() not sorted: %v", tickerNames(all))
	}
	all[0].Ticker = "mutated"
	if r.All()[0].Ticker == "mutated" {
		t.Error("All() exposes the registry's internal slice")
	}
}

func TestLoadRegistryOverrideFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/override.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := chains.LoadRegistry(bytes.NewReader(b), family.All())
	if err != nil {
		t.Fatalf("LoadRegistry: %v", err)
	}
	if got, want := tickerNames(r.All()), []string{"arbitrum/eth", "btc", "erc20/dai"}; !slices.Equal(got, want) {
		t.Fatalf("tickers = %v, want %v", got, want)
	}
	btc, _ := r.Lookup("btc")
	if btc.DefaultConfirmations != 3 || !btc.FeeRate.Equal(decimal.RequireFromString("0.005")) {
		t.Errorf("btc override not applied: %+v", btc)
	}
	arb, _ := r.Lookup("arbitrum/eth")
	if arb.Token || arb.Network != "arbitrum" || arb.Coin != "eth" {
		t.Errorf("arbitrum/eth = %+v, want native coin of network arbitrum", arb)
	}
}

// validEntry is a well-formed registry entry the error cases below modify.
func validEntry() map[string]any {
	return map[string]any{
		"ticker":                "erc20/usdt",
		"family":                "evm",
		"token":                 true,
		"contract":              "0xdAC17F958D2ee523a2206206994597C13D831ec7",
		"decimals":              6,
		"default_confirmations": 12,
		"min_confirmations":     3,
		"min_transaction":       "5",
		"fee_rate":              "0.01",
		"network_fee_estimate":  "2",
	}
}

func registryJSON(t *testing.T, entries ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"tickers": entries})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadRegistryRejects(t *testing.T) {
	t.Parallel()
	with := func(changes map[string]any, drop ...string) map[string]any {
		e := validEntry()
		for k, v := range changes {
			e[k] = v
		}
		for _, k := range drop {
			delete(e, k)
		}
		return e
	}
	tests := []struct {
		name    string
		entries []map[string]any
		entry   int    // expected chains.RegistryError.Entry
		field   string // expected chains.RegistryError.Field
		reason  string // substring of the reason
	}{
		{"missing ticker", []map[string]any{with(nil, "ticker")}, 1, "ticker", "missing"},
		{"upper-case ticker", []map[string]any{with(map[string]any{"ticker": "ERC20/USDT"})}, 1, "ticker", "lower-case"},
		{"three segments", []map[string]any{with(map[string]any{"ticker": "a/b/c"})}, 1, "ticker", "two"},
		{"empty segment", []map[string]any{with(map[string]any{"ticker": "erc20/"})}, 1, "ticker", "segments"},
		{"duplicate", []map[string]any{validEntry(), validEntry()}, 2, "ticker", "duplicate"},
		{"unknown family", []map[string]any{with(map[string]any{"family": "cosmos"})}, 1, "family", "unknown family"},
		{"family of known network", []map[string]any{with(map[string]any{"family": "tron"})}, 1, "family", "belongs to family"},
		{"unknown utxo network", []map[string]any{with(map[string]any{"ticker": "dash", "family": "utxo", "token": false}, "contract")}, 1, "ticker", "not supported"},
		{"missing token flag", []map[string]any{with(nil, "token")}, 1, "token", "missing"},
		{"token without contract", []map[string]any{with(nil, "contract")}, 1, "contract", "missing"},
		{"native coin with contract", []map[string]any{with(map[string]any{"ticker": "eth", "token": false})}, 1, "contract", "must be empty"},
		{"one-segment token", []map[string]any{with(map[string]any{"ticker": "eth"})}, 1, "token", "two-segment"},
		{"utxo token", []map[string]any{with(map[string]any{"ticker": "btc/usdt", "family": "utxo"})}, 1, "token", "no tokens"},
		{"contract bad checksum", []map[string]any{with(map[string]any{"contract": "0xdAC17F958D2ee523a2206206994597C13D831eC7"})}, 1, "contract", "EIP-55"},
		{"contract of another family", []map[string]any{with(map[string]any{"contract": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"})}, 1, "contract", "0x"},
		{"decimals negative", []map[string]any{with(map[string]any{"decimals": -1})}, 1, "decimals", "between 0 and 18"},
		{"decimals too many", []map[string]any{with(map[string]any{"decimals": 19})}, 1, "decimals", "between 0 and 18"},
		{"decimals missing", []map[string]any{with(nil, "decimals")}, 1, "decimals", "missing"},
		{"decimals not integer", []map[string]any{with(map[string]any{"decimals": 6.5})}, 1, "", "decimals"},
		{"min confirmations zero", []map[string]any{with(map[string]any{"min_confirmations": 0})}, 1, "min_confirmations", "between 1 and 100"},
		{"default confirmations too many", []map[string]any{with(map[string]any{"default_confirmations": 101})}, 1, "default_confirmations", "between 1 and 100"},
		{"min above default", []map[string]any{with(map[string]any{"min_confirmations": 13})}, 1, "min_confirmations", "must not exceed"},
		{"default confirmations missing", []map[string]any{with(nil, "default_confirmations")}, 1, "default_confirmations", "missing"},
		{"fee rate one", []map[string]any{with(map[string]any{"fee_rate": "1"})}, 1, "fee_rate", "below 1"},
		{"fee rate negative", []map[string]any{with(map[string]any{"fee_rate": "-0.01"})}, 1, "fee_rate", "at least 0"},
		{"fee rate missing", []map[string]any{with(nil, "fee_rate")}, 1, "fee_rate", "missing"},
		{"fee rate not a number", []map[string]any{with(map[string]any{"fee_rate": "1%"})}, 1, "", "decimal"},
		{"min transaction negative", []map[string]any{with(map[string]any{"min_transaction": "-1"})}, 1, "min_transaction", "negative"},
		{"min transaction too precise", []map[string]any{with(map[string]any{"min_transaction": "0.0000001"})}, 1, "min_transaction", "more than 6 decimal places"},
		{"network fee negative", []map[string]any{with(map[string]any{"network_fee_estimate": "-2"})}, 1, "network_fee_estimate", "negative"},
		{"network fee missing", []map[string]any{with(nil, "network_fee_estimate")}, 1, "network_fee_estimate", "missing"},
		{"unknown field", []map[string]any{with(map[string]any{"confirmations": 3})}, 1, "", "unknown field"},
		{"error names the right entry", []map[string]any{validEntry(), with(map[string]any{"ticker": "trc20/usdt", "family": "tron", "contract": "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", "decimals": 30})}, 2, "decimals", "between 0 and 18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := chains.LoadRegistry(strings.NewReader(registryJSON(t, tt.entries...)), family.All())
			if !errors.Is(err, chains.ErrInvalidRegistry) {
				t.Fatalf("LoadRegistry error = %v, want ErrInvalidRegistry", err)
			}
			var re *chains.RegistryError
			if !errors.As(err, &re) {
				t.Fatalf("error %v is not a *RegistryError", err)
			}
			if re.Entry != tt.entry || re.Field != tt.field || !strings.Contains(re.Reason, tt.reason) {
				t.Errorf("got entry %d field %q reason %q; want entry %d field %q reason containing %q",
					re.Entry, re.Field, re.Reason, tt.entry, tt.field, tt.reason)
			}
			if !strings.Contains(err.Error(), "entry") {
				t.Errorf("message %q does not name the entry", err)
			}
		})
	}
}

func TestLoadRegistryRejectsFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"empty input", ""},
		{"not json", "tickers: []"},
		{"no tickers", `{"tickers": []}`},
		{"null tickers", `{"tickers": null}`},
		{"unknown top-level field", `{"tickers": [], "version": 2}`},
		{"trailing data", `{"tickers": []} {}`},
		{"truncated", `{"tickers": [{"ticker": "btc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := chains.LoadRegistry(strings.NewReader(tt.in), family.All()); !errors.Is(err, chains.ErrInvalidRegistry) {
				t.Errorf("LoadRegistry(%q) error = %v, want ErrInvalidRegistry", tt.in, err)
			}
		})
	}
}

func TestLoadRegistryErrorMessage(t *testing.T) {
	t.Parallel()
	e := validEntry()
	e["decimals"] = 19
	_, err := chains.LoadRegistry(strings.NewReader(registryJSON(t, e)), family.All())
	want := `ticker registry entry 1 ("erc20/usdt"): field decimals: must be between 0 and 18, got 19`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func tickerNames(ts []chains.Ticker) []string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Ticker
	}
	return names
}
