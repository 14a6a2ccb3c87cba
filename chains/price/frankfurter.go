package price

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/clock"
)

// FrankfurterURL is the base URL of Frankfurter's v1 API.
const FrankfurterURL = "https://api.frankfurter.dev/v1"

// FrankfurterConfig configures the Frankfurter provider.
type FrankfurterConfig struct {
	// BaseURL is the API root, including /v1. Default FrankfurterURL. A
	// self-hosted Frankfurter works the same.
	BaseURL string
	// Client sends the requests. Default: a client with DefaultHTTPTimeout.
	Client *http.Client
	// Now stamps each quote. Default clock.Now.
	Now func() time.Time
}

// WithDefaults returns the configuration with unset fields defaulted.
func (c FrankfurterConfig) WithDefaults() FrankfurterConfig {
	if c.BaseURL == "" {
		c.BaseURL = FrankfurterURL
	}
	if c.Client == nil {
		c.Client = defaultClient()
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first unusable field.
func (c FrankfurterConfig) Validate() error {
	return checkBaseURL("FrankfurterConfig.BaseURL", c.BaseURL)
}

// Frankfurter is a fiat-only provider for Frankfurter's latest reference
// rates (published by the European Central Bank on working days),
// GET /latest?base=USD, whose answer gives units per USD as JSON numbers:
//
//	{"amount": 1.0, "base": "USD", "date": "2024-11-25", "rates": {"AUD": 1.5351, "EUR": 0.9521, ...}}
//
// It quotes no coins. Every rate of the answer is validated.
type Frankfurter struct {
	cfg FrankfurterConfig
}

// NewFrankfurter returns the provider, or an error wrapping
// ErrInvalidConfig.
func NewFrankfurter(cfg FrankfurterConfig) (*Frankfurter, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Frankfurter{cfg: cfg}, nil
}

// Name returns "frankfurter".
func (*Frankfurter) Name() string { return "frankfurter" }

// Covers reports that Frankfurter quotes fiat rates, not coins.
func (*Frankfurter) Covers() (coins, fiat bool) { return false, true }

// Fetch reads the latest USD rates in one request; coins is ignored.
func (p *Frankfurter) Fetch(ctx context.Context, _ []string) (Quote, error) {
	body, err := getJSON(ctx, p.cfg.Client, p.Name(), p.cfg.BaseURL, "/latest", url.Values{"base": {"USD"}}, nil)
	if err != nil {
		return Quote{}, err
	}
	fiat, err := parseFrankfurter(body)
	if err != nil {
		return Quote{}, err
	}
	return Quote{USD: map[string]decimal.Decimal{}, Fiat: fiat, Time: p.cfg.Now()}, nil
}

// parseFrankfurter reads a /latest answer.
func parseFrankfurter(body []byte) (map[string]decimal.Decimal, error) {
	const name = "frankfurter"
	bad := func(field, format string, args ...any) error {
		return &ProviderError{Provider: name, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrBadQuote}, args...)...)}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		return nil, bad("", "the answer is not a JSON object")
	}
	var base string
	if err := json.Unmarshal(top["base"], &base); err != nil {
		return nil, bad("base", "missing or not a string")
	}
	if base != "USD" {
		return nil, bad("base", "the rates are per %s, not per USD", clip(base))
	}
	if raw, ok := top["amount"]; ok {
		s, err := jsonNumber(raw)
		if d, perr := decimal.NewFromString(s); err != nil || perr != nil || !d.Equal(decimal.NewFromInt(1)) {
			return nil, bad("amount", "must be 1, got %s", clip(string(raw)))
		}
	}
	var date string
	if err := json.Unmarshal(top["date"], &date); err != nil {
		return nil, bad("date", "missing or not a string")
	}
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return nil, bad("date", "%q is not a date YYYY-MM-DD", clip(date))
	}
	var rates map[string]json.RawMessage
	if err := json.Unmarshal(top["rates"], &rates); err != nil || rates == nil {
		return nil, bad("rates", "missing or not a JSON object")
	}
	out := make(map[string]decimal.Decimal, len(rates))
	for _, code := range slices.Sorted(maps.Keys(rates)) {
		if !validCode(code) {
			return nil, bad("rates", "%q is not an ISO 4217 code", clip(code))
		}
		s, err := jsonNumber(rates[code])
		var d decimal.Decimal
		if err == nil {
			d, err = parseQuoted(s)
		}
		if err == nil && code == "USD" && !d.Equal(decimal.NewFromInt(1)) {
			err = fmt.Errorf("%w: must be 1, got %s", ErrBadQuote, s)
		}
		if err != nil {
			return nil, &ProviderError{Provider: name, Field: "rates." + code, Err: err}
		}
		if code != "USD" {
			out[code] = d
		}
	}
	return out, nil
}
