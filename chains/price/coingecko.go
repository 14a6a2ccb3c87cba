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

// CoinGecko base URLs: the public (keyless or demo key) API and the paid one.
const (
	CoinGeckoPublicURL = "https://api.coingecko.com/api/v3"
	CoinGeckoProURL    = "https://pro-api.coingecko.com/api/v3"
)

// CoinGeckoIDs returns a new map from the asset symbols of the default
// ticker registry (and bnb) to their CoinGecko API ids.
func CoinGeckoIDs() map[string]string {
	return map[string]string{
		"btc":  "bitcoin",
		"ltc":  "litecoin",
		"bch":  "bitcoin-cash",
		"doge": "dogecoin",
		"eth":  "ethereum",
		"bnb":  "binancecoin",
		"pol":  "polygon-ecosystem-token",
		"trx":  "tron",
		"sol":  "solana",
		"usdt": "tether",
		"usdc": "usd-coin",
	}
}

// CoinGeckoConfig configures the CoinGecko provider.
type CoinGeckoConfig struct {
	// BaseURL is the API root up to and including /api/v3. Default
	// CoinGeckoPublicURL, or CoinGeckoProURL when Pro is set.
	BaseURL string
	// Client sends the requests. Default: a client with DefaultHTTPTimeout.
	Client *http.Client
	// APIKey is sent, when set, in the x-cg-demo-api-key header (or
	// x-cg-pro-api-key with Pro), never in the URL, so it stays out of
	// error messages and logs.
	APIKey string
	// Pro selects the paid API: the x-cg-pro-api-key header and its base
	// URL by default. It requires APIKey.
	Pro bool
	// IDs maps asset symbols to CoinGecko API ids. Default CoinGeckoIDs().
	// Coins without an id are not asked for.
	IDs map[string]string
	// Now stamps each quote. Default clock.Now.
	Now func() time.Time
}

// WithDefaults returns the configuration with unset fields defaulted.
func (c CoinGeckoConfig) WithDefaults() CoinGeckoConfig {
	if c.BaseURL == "" {
		c.BaseURL = CoinGeckoPublicURL
		if c.Pro {
			c.BaseURL = CoinGeckoProURL
		}
	}
	if c.Client == nil {
		c.Client = defaultClient()
	}
	if c.IDs == nil {
		c.IDs = CoinGeckoIDs()
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first unusable field.
func (c CoinGeckoConfig) Validate() error {
	if err := checkBaseURL("CoinGeckoConfig.BaseURL", c.BaseURL); err != nil {
		return err
	}
	if c.Pro && c.APIKey == "" {
		return fmt.Errorf("%w: CoinGeckoConfig.APIKey: the Pro API needs a key", ErrInvalidConfig)
	}
	if strings.ContainsAny(c.APIKey, "\r\n") {
		return fmt.Errorf("%w: CoinGeckoConfig.APIKey: must be one line", ErrInvalidConfig)
	}
	for _, sym := range slices.Sorted(maps.Keys(c.IDs)) {
		id := c.IDs[sym]
		if !coinPattern.MatchString(sym) {
			return fmt.Errorf("%w: CoinGeckoConfig.IDs: %q is not a lower-case asset symbol", ErrInvalidConfig, sym)
		}
		if id == "" || strings.ContainsAny(id, ", \t\r\n") {
			return fmt.Errorf("%w: CoinGeckoConfig.IDs[%q]: %q is not a CoinGecko id", ErrInvalidConfig, sym, id)
		}
	}
	return nil
}

// CoinGecko is the provider for CoinGecko's "Coin Price by IDs" endpoint,
// GET /simple/price?ids=<ids>&vs_currencies=usd, whose answer maps each
// known id to its prices as JSON numbers:
//
//	{"bitcoin": {"usd": 67187.3358936566}, "ethereum": {"usd": 3512.1}}
//
// It serves USD coin prices only, no fiat rates. An id missing from the
// answer, or with a null or missing usd, is a coin not quoted.
type CoinGecko struct {
	cfg CoinGeckoConfig
}

// NewCoinGecko returns the provider, or an error wrapping ErrInvalidConfig.
func NewCoinGecko(cfg CoinGeckoConfig) (*CoinGecko, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.IDs = maps.Clone(cfg.IDs)
	return &CoinGecko{cfg: cfg}, nil
}

// Name returns "coingecko".
func (*CoinGecko) Name() string { return "coingecko" }

// Covers reports that CoinGecko quotes coins, not fiat rates.
func (*CoinGecko) Covers() (coins, fiat bool) { return true, false }

// Fetch asks for the USD prices of those of coins that have an id, in one
// request. With none, it returns an empty quote without asking.
func (p *CoinGecko) Fetch(ctx context.Context, coins []string) (Quote, error) {
	idOf := map[string]string{}
	var ids []string
	for _, c := range coins {
		if id, ok := p.cfg.IDs[c]; ok {
			idOf[c] = id
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return Quote{USD: map[string]decimal.Decimal{}, Time: p.cfg.Now()}, nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	header := http.Header{}
	if p.cfg.APIKey != "" {
		name := "x-cg-demo-api-key"
		if p.cfg.Pro {
			name = "x-cg-pro-api-key"
		}
		header.Set(name, p.cfg.APIKey)
	}
	query := url.Values{"ids": {strings.Join(ids, ",")}, "vs_currencies": {"usd"}}
	body, err := getJSON(ctx, p.cfg.Client, p.Name(), p.cfg.BaseURL, "/simple/price", query, header)
	if err != nil {
		return Quote{}, err
	}
	usd, err := parseCoinGecko(body, idOf)
	if err != nil {
		return Quote{}, err
	}
	return Quote{USD: usd, Time: p.cfg.Now()}, nil
}

// parseCoinGecko reads a /simple/price answer for the coins of idOf
// (symbol to id).
func parseCoinGecko(body []byte, idOf map[string]string) (map[string]decimal.Decimal, error) {
	const name = "coingecko"
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, &ProviderError{Provider: name, Err: fmt.Errorf("%w: the answer is not a JSON object", ErrBadQuote)}
	}
	out := make(map[string]decimal.Decimal, len(idOf))
	for _, sym := range slices.Sorted(maps.Keys(idOf)) {
		id := idOf[sym]
		raw, ok := top[id]
		if !ok || isNull(raw) {
			continue
		}
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entry); err != nil || entry == nil {
			return nil, &ProviderError{Provider: name, Field: id, Err: fmt.Errorf("%w: not a JSON object", ErrBadQuote)}
		}
		v, ok := entry["usd"]
		if !ok || isNull(v) {
			continue
		}
		s, err := jsonNumber(v)
		if err == nil {
			out[sym], err = parseQuoted(s)
		}
		if err != nil {
			return nil, &ProviderError{Provider: name, Field: id + ".usd", Err: err}
		}
	}
	return out, nil
}
