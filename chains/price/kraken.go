package price

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/clock"
)

// KrakenURL is the base URL of Kraken's public REST API.
const KrakenURL = "https://api.kraken.com"

// KrakenPair is the Kraken asset pair that prices a coin in US dollars.
type KrakenPair struct {
	// Pair is the pair as the request names it ("XBTUSD").
	Pair string
	// Keys are the names the answer may list the pair under: Kraken keys
	// its result by the pair's full name, which for older assets differs
	// from the name asked for ("XBTUSD" is answered as "XXBTZUSD").
	// Default: Pair alone.
	Keys []string
}

// KrakenPairs returns a new map from the asset symbols of the default
// ticker registry that Kraken lists against USD to their pairs (bnb has
// none).
func KrakenPairs() map[string]KrakenPair {
	return map[string]KrakenPair{
		"btc":  {Pair: "XBTUSD", Keys: []string{"XXBTZUSD", "XBTUSD"}},
		"eth":  {Pair: "ETHUSD", Keys: []string{"XETHZUSD", "ETHUSD"}},
		"ltc":  {Pair: "LTCUSD", Keys: []string{"XLTCZUSD", "LTCUSD"}},
		"doge": {Pair: "XDGUSD", Keys: []string{"XDGUSD", "XXDGZUSD"}},
		"bch":  {Pair: "BCHUSD"},
		"sol":  {Pair: "SOLUSD"},
		"trx":  {Pair: "TRXUSD"},
		"pol":  {Pair: "POLUSD"},
		"usdt": {Pair: "USDTZUSD"},
		"usdc": {Pair: "USDCUSD"},
	}
}

// KrakenConfig configures the Kraken provider.
type KrakenConfig struct {
	// BaseURL is the API root, before /0/public. Default KrakenURL.
	BaseURL string
	// Client sends the requests. Default: a client with DefaultHTTPTimeout.
	Client *http.Client
	// Pairs maps asset symbols to their USD pairs. Default KrakenPairs().
	// Coins without a pair are not asked for: Kraken refuses a whole
	// request that names one pair it does not list.
	Pairs map[string]KrakenPair
	// Now stamps each quote. Default clock.Now.
	Now func() time.Time
}

// WithDefaults returns the configuration with unset fields defaulted.
func (c KrakenConfig) WithDefaults() KrakenConfig {
	if c.BaseURL == "" {
		c.BaseURL = KrakenURL
	}
	if c.Client == nil {
		c.Client = defaultClient()
	}
	if c.Pairs == nil {
		c.Pairs = KrakenPairs()
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first unusable field.
func (c KrakenConfig) Validate() error {
	if err := checkBaseURL("KrakenConfig.BaseURL", c.BaseURL); err != nil {
		return err
	}
	for _, sym := range slices.Sorted(maps.Keys(c.Pairs)) {
		if !coinPattern.MatchString(sym) {
			return fmt.Errorf("%w: KrakenConfig.Pairs: %q is not a lower-case asset symbol", ErrInvalidConfig, sym)
		}
		p := c.Pairs[sym]
		for _, name := range append([]string{p.Pair}, p.Keys...) {
			if !krakenPairName(name) {
				return fmt.Errorf("%w: KrakenConfig.Pairs[%q]: %q is not a Kraken pair name", ErrInvalidConfig, sym, name)
			}
		}
	}
	return nil
}

// krakenPairName reports whether s can be a pair name: 1 to 32 upper-case
// letters and digits.
func krakenPairName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := range len(s) {
		if (s[i] < 'A' || s[i] > 'Z') && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return true
}

// Kraken is the provider for Kraken's public "Get Ticker Information"
// endpoint, GET /0/public/Ticker?pair=<pairs> (no key), whose answer lists,
// per pair, the ask, bid, last trade and daily figures as decimal strings;
// errors are reported in the error array, with HTTP status 200:
//
//	{"error": [], "result": {"XXBTZUSD": {"a": ["67190.1", "1", "1.000"], "b": [...],
//	 "c": ["67187.3", "0.0012"], "v": [...], "p": [...], "t": [...], "l": [...], "h": [...], "o": "66800.0"}}}
//
// A coin's USD price is the pair's last trade price (c[0]). It serves coin
// prices only, no fiat rates. A pair missing from the result is a coin not
// quoted; a non-empty error array fails the whole answer.
type Kraken struct {
	cfg KrakenConfig
}

// NewKraken returns the provider, or an error wrapping ErrInvalidConfig.
func NewKraken(cfg KrakenConfig) (*Kraken, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Pairs = maps.Clone(cfg.Pairs)
	return &Kraken{cfg: cfg}, nil
}

// Name returns "kraken".
func (*Kraken) Name() string { return "kraken" }

// Covers reports that Kraken quotes coins, not fiat rates.
func (*Kraken) Covers() (coins, fiat bool) { return true, false }

// Fetch asks for the pairs of those of coins that have one, in one
// request. With none, it returns an empty quote without asking.
func (p *Kraken) Fetch(ctx context.Context, coins []string) (Quote, error) {
	want := map[string]KrakenPair{}
	var pairs []string
	for _, c := range coins {
		if pair, ok := p.cfg.Pairs[c]; ok {
			want[c] = pair
			pairs = append(pairs, pair.Pair)
		}
	}
	if len(pairs) == 0 {
		return Quote{USD: map[string]decimal.Decimal{}, Time: p.cfg.Now()}, nil
	}
	slices.Sort(pairs)
	pairs = slices.Compact(pairs)
	body, err := getJSON(ctx, p.cfg.Client, p.Name(), p.cfg.BaseURL, "/0/public/Ticker", url.Values{"pair": {strings.Join(pairs, ",")}}, nil)
	if err != nil {
		return Quote{}, err
	}
	usd, err := parseKraken(body, want)
	if err != nil {
		return Quote{}, err
	}
	return Quote{USD: usd, Time: p.cfg.Now()}, nil
}

// parseKraken reads a Ticker answer for the coins of want (symbol to pair).
func parseKraken(body []byte, want map[string]KrakenPair) (map[string]decimal.Decimal, error) {
	const name = "kraken"
	bad := func(field, format string, args ...any) error {
		return &ProviderError{Provider: name, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadQuote}, args...)...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, bad("", "the answer is not a JSON object")
	}
	var errs []string
	if raw, ok := top["error"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &errs); err != nil {
			return nil, bad("error", "not an array of strings")
		}
	}
	if len(errs) > 0 {
		// Kraken's own refusals (EService:Unavailable, EAPI:Rate limit
		// exceeded, EQuery:Unknown asset pair) come with status 200.
		return nil, &ProviderError{Provider: name, Field: "error", Err: fmt.Errorf("%w: %s", ErrUnavailable, clip(strings.Join(errs, "; ")))}
	}
	var result map[string]json.RawMessage
	if raw, ok := top["result"]; !ok {
		return nil, bad("result", "missing")
	} else if err := json.Unmarshal(raw, &result); err != nil || result == nil {
		return nil, bad("result", "not a JSON object")
	}
	out := make(map[string]decimal.Decimal, len(want))
	for _, sym := range slices.Sorted(maps.Keys(want)) {
		pair := want[sym]
		keys := pair.Keys
		if len(keys) == 0 {
			keys = []string{pair.Pair}
		}
		var key string
		var raw json.RawMessage
		for _, k := range keys {
			if r, ok := result[k]; ok && !isNull(r) {
				key, raw = k, r
				break
			}
		}
		if key == "" {
			continue
		}
		var ticker map[string]json.RawMessage
		if err := json.Unmarshal(raw, &ticker); err != nil || ticker == nil {
			return nil, bad("result."+key, "not a JSON object")
		}
		var last []string
		if err := json.Unmarshal(ticker["c"], &last); err != nil || len(last) == 0 {
			return nil, bad("result."+key+".c", "missing or not an array of decimal strings")
		}
		v, err := parseQuoted(last[0])
		if err != nil {
			return nil, &ProviderError{Provider: name, Field: "result." + key + ".c", Err: err}
		}
		out[sym] = v
	}
	return out, nil
}
