package price

import (
	"cmp"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Source supplies USD prices of coins and the fiat currencies to convert
// into. The payment code consumes it; Table is the implementation shipped
// here, and a live rate feed may be another.
type Source interface {
	// USD returns the USD price of one unit of coin, given as an asset symbol
	// ("btc", "usdt") or a ticker path ("trc20/usdt"), case-insensitively;
	// false when the coin has no price.
	USD(coin string) (decimal.Decimal, bool)
	// Fiat returns every currency to convert into, with its units per USD,
	// sorted by code. Callers must not modify the result.
	Fiat() []Currency
}

// Currency is one fiat currency and its rate.
type Currency struct {
	// Code is the ISO 4217 alphabetic code, three upper-case letters.
	Code string
	// PerUSD is the number of units of the currency one US dollar buys; > 0.
	PerUSD decimal.Decimal
	// Decimals is the ISO 4217 minor unit: the number of decimal places
	// amounts in the currency are rounded to (JPY 0, USD 2, BHD 3, CLF 4).
	Decimals int32
}

// Limits on rates and prices, so that no entry can blow a conversion up into
// an unbounded string.
const (
	// MaxDecimals is the largest minor unit a currency may declare.
	MaxDecimals = 4
	// MaxRatePlaces is the most decimal places a price or rate may have.
	MaxRatePlaces = 18
)

var (
	// maxRate bounds prices and rates: below 10^15.
	maxRate = decimal.New(1, 15)
	// maxUSD bounds the USD value Convert accepts: below 10^30, far above
	// any real payment. A larger value is treated as invalid.
	maxUSD = decimal.New(1, 30)
)

// Table is a fixed set of coin prices and fiat rates. It implements Source,
// is immutable once built, and is safe for concurrent use. Build one with
// Default, Load or Fixed.
type Table struct {
	asOf  string
	coins map[string]decimal.Decimal
	fiat  []Currency // valid, sorted by Code, codes unique
}

// USD returns the USD price of one unit of coin. coin is an asset symbol
// ("btc") or a ticker path ("trc20/usdt"), compared case-insensitively. A
// ticker path is looked up as written first and then by its last segment,
// the asset symbol, so tokens share their symbol's price unless the table
// prices the path itself.
func (t *Table) USD(coin string) (decimal.Decimal, bool) {
	if t == nil {
		return decimal.Zero, false
	}
	key := strings.ToLower(coin)
	if p, ok := t.coins[key]; ok {
		return p, true
	}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		if p, ok := t.coins[key[i+1:]]; ok {
			return p, true
		}
	}
	return decimal.Zero, false
}

// Fiat returns a copy of the table's currencies, sorted by code.
func (t *Table) Fiat() []Currency {
	if t == nil {
		return nil
	}
	return slices.Clone(t.fiat)
}

// AsOf returns the date the table's rates refer to (YYYY-MM-DD), as the file
// states it; "" when it does not.
func (t *Table) AsOf() string {
	if t == nil {
		return ""
	}
	return t.asOf
}

// Currencies returns the currency codes src knows, with their minor units,
// whether or not it has a current rate for them: a Live source's fallback
// table, or src.Fiat() for a source without that distinction.
func Currencies(src Source) []Currency {
	if src == nil {
		return nil
	}
	if d, ok := src.(interface{ Currencies() []Currency }); ok {
		return d.Currencies()
	}
	return src.Fiat()
}

// USDValue returns value x the USD price of coin (a symbol or ticker path, as
// for Source.USD), unrounded. ok is false when src is nil or has no positive
// price for coin.
func USDValue(src Source, coin string, value decimal.Decimal) (usd decimal.Decimal, ok bool) {
	if src == nil {
		return decimal.Zero, false
	}
	p, ok := src.USD(coin)
	if !ok || p.Sign() <= 0 {
		return decimal.Zero, false
	}
	return value.Mul(p), true
}

// Convert renders the value_coin_convert (or value_forwarded_coin_convert)
// field: the JSON text of an object from every currency code of src.Fiat()
// to usd x PerUSD, as a JSON string rounded half away from zero to the
// currency's minor unit and written with exactly that many decimal places:
//
//	{"AED":"36.73","AFN":"700.00",...,"JPY":"1442",...,"USD":"10.00",...}
//
// Keys are sorted, there is no whitespace, and a code appears once. usd is
// the USD value (USDValue). When ok is false, src is nil, usd <= 0 or usd is
// 10^30 or more, the result is exactly "{}". Entries of a Source other than
// *Table that Load would reject (bad code, rate <= 0, minor unit outside
// 0..4) are skipped, and of repeated codes the first is used.
func Convert(src Source, usd decimal.Decimal, ok bool) string {
	if !ok || src == nil || usd.Sign() <= 0 || usd.GreaterThanOrEqual(maxUSD) {
		return "{}"
	}
	var list []Currency
	if t, isTable := src.(*Table); isTable {
		if t == nil {
			return "{}"
		}
		list = t.fiat // already valid and sorted; no copy
	} else {
		list = usable(src.Fiat())
	}
	if len(list) == 0 {
		return "{}"
	}
	var b strings.Builder
	b.Grow(len(list) * 20)
	b.WriteByte('{')
	for i, c := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(c.Code) // three upper-case letters: nothing to escape
		b.WriteString(`":"`)
		b.WriteString(usd.Mul(c.PerUSD).StringFixed(c.Decimals))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// usable returns the valid currencies of list, sorted by code, first of
// each code kept. list is not modified.
func usable(list []Currency) []Currency {
	out := make([]Currency, 0, len(list))
	for _, c := range list {
		if validCode(c.Code) && c.PerUSD.Sign() > 0 && c.PerUSD.LessThan(maxRate) && c.Decimals >= 0 && c.Decimals <= MaxDecimals {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Currency) int { return cmp.Compare(a.Code, b.Code) })
	return slices.CompactFunc(out, func(a, b Currency) bool { return a.Code == b.Code })
}

// validCode reports whether code is three upper-case ASCII letters.
func validCode(code string) bool {
	if len(code) != 3 {
		return false
	}
	for i := range 3 {
		if code[i] < 'A' || code[i] > 'Z' {
			return false
		}
	}
	return true
}
