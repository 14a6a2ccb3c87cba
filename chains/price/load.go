package price

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

//go:embed data.json
var defaultJSON []byte

// Default returns the table embedded in the binary (data.json in this
// package): approximate reference rates as of Table.AsOf, for every coin of
// the default ticker registry (plus bnb) and every active ISO 4217 currency
// and fund code that has a minor unit. Each call parses the embedded file
// afresh. It panics only if the embedded file is invalid, which the package
// tests rule out.
func Default() *Table {
	t, err := Load(bytes.NewReader(defaultJSON))
	if err != nil {
		panic("price: embedded data.json is invalid: " + err.Error())
	}
	return t
}

// Fixed returns a table with the given coin prices (symbol or ticker path to
// a decimal string, e.g. {"btc": "50000"}) and currencies; nil fiat means the
// currencies of Default. Entries obey the rules of Load. It is meant for the
// devnet and tests, where the values are literals, and panics if one is
// invalid.
func Fixed(prices map[string]string, fiat []Currency) *Table {
	f := tableFile{Coins: make([]json.RawMessage, 0, len(prices))}
	for _, coin := range slices.Sorted(maps.Keys(prices)) {
		raw, _ := json.Marshal(coinEntry{Coin: &coin, USD: ptr(prices[coin])})
		f.Coins = append(f.Coins, raw)
	}
	if fiat == nil {
		fiat = Default().fiat
	}
	for _, c := range fiat {
		raw, _ := json.Marshal(fiatEntry{Code: ptr(c.Code), PerUSD: ptr(c.PerUSD.String()), Decimals: ptr(c.Decimals)})
		f.Fiat = append(f.Fiat, raw)
	}
	t, err := build(f)
	if err != nil {
		panic("price.Fixed: " + err.Error())
	}
	return t
}

func ptr[T any](v T) *T { return &v }

// tableFile is the JSON layout of a price file.
type tableFile struct {
	// Description is free text for people, e.g. where the rates come from.
	Description string `json:"description"`
	// AsOf is the date the rates refer to, YYYY-MM-DD.
	AsOf  string            `json:"as_of"`
	Coins []json.RawMessage `json:"coins"`
	Fiat  []json.RawMessage `json:"fiat"`
}

// coinEntry is one JSON coin price. Pointers tell a missing field from an
// empty one.
type coinEntry struct {
	Coin *string `json:"coin"`
	USD  *string `json:"usd"`
}

// fiatEntry is one JSON currency.
type fiatEntry struct {
	Code     *string `json:"code"`
	PerUSD   *string `json:"per_usd"`
	Decimals *int32  `json:"decimals"`
}

// coinPattern is a symbol or a ticker path, as in the ticker registry.
var coinPattern = regexp.MustCompile(`^[a-z0-9]{1,32}(/[a-z0-9]{1,32})?$`)

// Load reads a price table in the JSON format of the embedded data.json:
//
//	{"description": "...", "as_of": "2025-06-30",
//	 "coins": [{"coin": "btc", "usd": "107000"}, ...],
//	 "fiat": [{"code": "JPY", "per_usd": "144.2", "decimals": 0}, ...]}
//
// Prices and rates are JSON strings holding decimals, never converted
// through float64. description and as_of are optional (as_of must be a date
// when given); unknown fields are rejected. coins and fiat must be non-empty.
// A coin is a lower-case symbol or ticker path ("btc", "trc20/usdt"), listed
// once, with a usd price > 0. A currency has a code of three upper-case
// letters, listed once, a per_usd rate > 0 and decimals (its ISO 4217 minor
// unit) in 0..4; USD must be present with rate 1. Prices and rates have at
// most 18 decimal places and are below 10^15. Errors wrap ErrInvalidTable
// and name the entry and field (*LoadError).
func Load(r io.Reader) (*Table, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f tableFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTable, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the top-level object", ErrInvalidTable)
	}
	return build(f)
}

// build validates a decoded file and makes the table.
func build(f tableFile) (*Table, error) {
	t := &Table{asOf: f.AsOf, coins: make(map[string]decimal.Decimal, len(f.Coins))}
	if f.AsOf != "" {
		if _, err := time.Parse(time.DateOnly, f.AsOf); err != nil {
			return nil, &LoadError{Field: "as_of", Reason: fmt.Sprintf("%q is not a date YYYY-MM-DD", f.AsOf)}
		}
	}
	if len(f.Coins) == 0 {
		return nil, &LoadError{Field: "coins", Reason: "missing or empty"}
	}
	if len(f.Fiat) == 0 {
		return nil, &LoadError{Field: "fiat", Reason: "missing or empty"}
	}

	for i, raw := range f.Coins {
		fail := func(name, field, format string, args ...any) error {
			return &LoadError{Section: "coins", Entry: i + 1, Name: name, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
		var e coinEntry
		if err := decodeEntry(raw, &e); err != nil {
			return nil, fail(probe(raw, "coin"), "", "%v", err)
		}
		if e.Coin == nil {
			return nil, fail("", "coin", "missing")
		}
		name := *e.Coin
		if !coinPattern.MatchString(name) {
			return nil, fail(name, "coin", "must be a lower-case symbol or ticker path, like \"btc\" or \"trc20/usdt\"")
		}
		if _, dup := t.coins[name]; dup {
			return nil, fail(name, "coin", "listed twice")
		}
		p, err := parseRate(e.USD)
		if err != nil {
			return nil, fail(name, "usd", "%v", err)
		}
		t.coins[name] = p
	}

	seen := make(map[string]bool, len(f.Fiat))
	for i, raw := range f.Fiat {
		fail := func(name, field, format string, args ...any) error {
			return &LoadError{Section: "fiat", Entry: i + 1, Name: name, Field: field, Reason: fmt.Sprintf(format, args...)}
		}
		var e fiatEntry
		if err := decodeEntry(raw, &e); err != nil {
			return nil, fail(probe(raw, "code"), "", "%v", err)
		}
		if e.Code == nil {
			return nil, fail("", "code", "missing")
		}
		code := *e.Code
		if !validCode(code) {
			return nil, fail(code, "code", "must be an ISO 4217 code of three upper-case letters")
		}
		if seen[code] {
			return nil, fail(code, "code", "listed twice")
		}
		seen[code] = true
		rate, err := parseRate(e.PerUSD)
		if err != nil {
			return nil, fail(code, "per_usd", "%v", err)
		}
		if code == "USD" && !rate.Equal(decimal.NewFromInt(1)) {
			return nil, fail(code, "per_usd", "must be 1 for USD, got %s", rate)
		}
		if e.Decimals == nil {
			return nil, fail(code, "decimals", "missing")
		}
		if *e.Decimals < 0 || *e.Decimals > MaxDecimals {
			return nil, fail(code, "decimals", "must be between 0 and %d, got %d", MaxDecimals, *e.Decimals)
		}
		t.fiat = append(t.fiat, Currency{Code: code, PerUSD: rate, Decimals: *e.Decimals})
	}
	if !seen["USD"] {
		return nil, &LoadError{Field: "fiat", Reason: "USD is missing"}
	}
	slices.SortFunc(t.fiat, func(a, b Currency) int { return cmp.Compare(a.Code, b.Code) })
	return t, nil
}

// decodeEntry decodes one array element strictly.
func decodeEntry(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// probe returns the entry's name field, best effort, so an entry with a
// malformed field is still named in the error.
func probe(raw json.RawMessage, field string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m[field], &s) != nil || len(s) > 64 {
		return ""
	}
	return s
}

// parseRate parses a price or rate: a decimal string, > 0, below 10^15, with
// at most MaxRatePlaces decimal places.
func parseRate(s *string) (decimal.Decimal, error) {
	if s == nil {
		return decimal.Zero, errors.New("missing")
	}
	if len(*s) > 64 {
		return decimal.Zero, fmt.Errorf("%.64q... is too long", *s)
	}
	d, err := decimal.NewFromString(*s)
	if err != nil {
		return decimal.Zero, fmt.Errorf("%q is not a decimal number", *s)
	}
	switch {
	case d.Sign() <= 0:
		return decimal.Zero, fmt.Errorf("must be greater than 0, got %s", d)
	case d.GreaterThanOrEqual(maxRate):
		return decimal.Zero, fmt.Errorf("must be below 10^15, got %s", *s)
	case !d.Equal(d.Truncate(MaxRatePlaces)):
		return decimal.Zero, fmt.Errorf("%s has more than %d decimal places", *s, MaxRatePlaces)
	}
	return d, nil
}
