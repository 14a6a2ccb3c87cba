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

// CoinbaseURL is the base URL of Coinbase's public data API.
const CoinbaseURL = "https://api.coinbase.com"

// CoinbaseConfig configures the Coinbase provider.
type CoinbaseConfig struct {
	// BaseURL is the API root, before /v2. Default CoinbaseURL.
	BaseURL string
	// Client sends the requests. Default: a client with DefaultHTTPTimeout.
	Client *http.Client
	// Symbols maps an asset symbol to its Coinbase currency code where the
	// two differ; by default a coin's code is its symbol in upper case
	// ("btc" is "BTC").
	Symbols map[string]string
	// Fiat lists the ISO 4217 codes whose rates are read from the answer.
	// Default: the currencies of the embedded table (Default). The answer
	// also lists hundreds of crypto assets under short codes; only these
	// codes, and the coins asked for, are read and validated.
	Fiat []string
	// Now stamps each quote. Default clock.Now.
	Now func() time.Time
}

// WithDefaults returns the configuration with unset fields defaulted.
func (c CoinbaseConfig) WithDefaults() CoinbaseConfig {
	if c.BaseURL == "" {
		c.BaseURL = CoinbaseURL
	}
	if c.Client == nil {
		c.Client = defaultClient()
	}
	if c.Fiat == nil {
		for _, cur := range Default().fiat {
			c.Fiat = append(c.Fiat, cur.Code)
		}
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first unusable field.
func (c CoinbaseConfig) Validate() error {
	if err := checkBaseURL("CoinbaseConfig.BaseURL", c.BaseURL); err != nil {
		return err
	}
	for _, sym := range slices.Sorted(maps.Keys(c.Symbols)) {
		if !coinPattern.MatchString(sym) {
			return fmt.Errorf("%w: CoinbaseConfig.Symbols: %q is not a lower-case asset symbol", ErrInvalidConfig, sym)
		}
		if code := c.Symbols[sym]; code == "" || len(code) > 32 {
			return fmt.Errorf("%w: CoinbaseConfig.Symbols[%q]: %q is not a currency code", ErrInvalidConfig, sym, code)
		}
	}
	for _, code := range c.Fiat {
		if !validCode(code) {
			return fmt.Errorf("%w: CoinbaseConfig.Fiat: %q is not an ISO 4217 code", ErrInvalidConfig, code)
		}
	}
	return nil
}

// Coinbase is the provider for Coinbase's exchange rates,
// GET /v2/exchange-rates?currency=USD (public, no key), whose answer gives
// the units of every currency and asset one US dollar buys, as decimal
// strings:
//
//	{"data": {"currency": "USD", "rates": {"BTC": "0.0000093", "EUR": "0.853", ...}}}
//
// It serves fiat rates (the configured codes) and coin prices: a coin's USD
// price is 1 / its rate, rounded half away from zero to MaxRatePlaces.
type Coinbase struct {
	cfg CoinbaseConfig
}

// NewCoinbase returns the provider, or an error wrapping ErrInvalidConfig.
func NewCoinbase(cfg CoinbaseConfig) (*Coinbase, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Symbols = maps.Clone(cfg.Symbols)
	cfg.Fiat = slices.Clone(cfg.Fiat)
	return &Coinbase{cfg: cfg}, nil
}

// Name returns "coinbase".
func (*Coinbase) Name() string { return "coinbase" }

// Covers reports that Coinbase quotes coins and fiat rates.
func (*Coinbase) Covers() (coins, fiat bool) { return true, true }

// Fetch reads the USD exchange rates in one request.
func (p *Coinbase) Fetch(ctx context.Context, coins []string) (Quote, error) {
	body, err := getJSON(ctx, p.cfg.Client, p.Name(), p.cfg.BaseURL, "/v2/exchange-rates", url.Values{"currency": {"USD"}}, nil)
	if err != nil {
		return Quote{}, err
	}
	codeOf := make(map[string]string, len(coins))
	for _, c := range coins {
		code, ok := p.cfg.Symbols[c]
		if !ok {
			code = strings.ToUpper(c)
		}
		codeOf[c] = code
	}
	q, err := parseCoinbase(body, codeOf, p.cfg.Fiat)
	if err != nil {
		return Quote{}, err
	}
	q.Time = p.cfg.Now()
	return q, nil
}

// parseCoinbase reads an exchange-rates answer: the coins of codeOf (symbol
// to Coinbase code) and the fiat codes.
func parseCoinbase(body []byte, codeOf map[string]string, fiat []string) (Quote, error) {
	const name = "coinbase"
	bad := func(field, format string, args ...any) error {
		return &ProviderError{Provider: name, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadQuote}, args...)...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return Quote{}, bad("", "the answer is not a JSON object")
	}
	var data map[string]json.RawMessage
	if raw, ok := top["data"]; !ok {
		return Quote{}, bad("data", "missing")
	} else if err := json.Unmarshal(raw, &data); err != nil || data == nil {
		return Quote{}, bad("data", "not a JSON object")
	}
	var base string
	if err := json.Unmarshal(data["currency"], &base); err != nil {
		return Quote{}, bad("data.currency", "missing or not a string")
	}
	if base != "USD" {
		return Quote{}, bad("data.currency", "the rates are per %s, not per USD", clip(base))
	}
	var rates map[string]json.RawMessage
	if raw, ok := data["rates"]; !ok {
		return Quote{}, bad("data.rates", "missing")
	} else if err := json.Unmarshal(raw, &rates); err != nil || rates == nil {
		return Quote{}, bad("data.rates", "not a JSON object")
	}
	// text returns the rate of code as written, "" when not listed.
	text := func(code string) (string, error) {
		raw, ok := rates[code]
		if !ok || isNull(raw) {
			return "", nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", bad("data.rates."+code, "%s is not a JSON string", clip(string(raw)))
		}
		return s, nil
	}

	q := Quote{USD: map[string]decimal.Decimal{}, Fiat: map[string]decimal.Decimal{}}
	if s, err := text("USD"); err != nil {
		return Quote{}, err
	} else if s != "" {
		if d, err := decimal.NewFromString(s); err != nil || !d.Equal(decimal.NewFromInt(1)) {
			return Quote{}, bad("data.rates.USD", "must be 1, got %q", clip(s))
		}
	}
	for _, sym := range slices.Sorted(maps.Keys(codeOf)) {
		code := codeOf[sym]
		s, err := text(code)
		if err != nil || s == "" {
			if err != nil {
				return Quote{}, err
			}
			continue
		}
		rate, err := parseDecimal(s)
		if err == nil {
			// One US dollar buys rate units: one unit is worth 1/rate.
			q.USD[sym], err = quoted(decimal.NewFromInt(1).DivRound(rate, MaxRatePlaces), "1/"+s)
		}
		if err != nil {
			return Quote{}, &ProviderError{Provider: name, Field: "data.rates." + code, Err: err}
		}
	}
	for _, code := range fiat {
		if code == "USD" {
			continue
		}
		s, err := text(code)
		if err != nil || s == "" {
			if err != nil {
				return Quote{}, err
			}
			continue
		}
		if q.Fiat[code], err = parseQuoted(s); err != nil {
			return Quote{}, &ProviderError{Provider: name, Field: "data.rates." + code, Err: err}
		}
	}
	return q, nil
}
