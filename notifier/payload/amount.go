package payload

import "github.com/shopspring/decimal"

// Amount is an optional money field of a payload. Its zero value is absent:
// the field is left out of the payload. AmountNull gives a field that is
// JSON null in a JSON body and left out of GET and form payloads (they have
// no way to say null; an empty string would read as a malformed number).
// AmountOf gives a field with a value.
type Amount struct {
	// Valid is true when the field carries Value.
	Valid bool
	// Null is true when the field is present but unknown (JSON null). Valid
	// and Null must not both be true.
	Null bool
	// Value is the amount in coin units; meaningful only when Valid.
	Value decimal.Decimal
}

// AmountOf returns an Amount holding d.
func AmountOf(d decimal.Decimal) Amount { return Amount{Valid: true, Value: d} }

// AmountNull returns an Amount that is present and null ("unknown").
func AmountNull() Amount { return Amount{Null: true} }

// Limits on decimal inputs. They keep rendering cheap and bounded whatever
// a caller passes (a decimal such as 1e999999999 would otherwise expand to a
// billion digits) and are far beyond any real amount: 2^256 base units of an
// 18-decimal token has 60 integer digits.
const (
	maxIntDigits  = 80 // integer digits of an amount, share or price
	maxFracDigits = 64 // decimal places of an amount, share or price before rounding
)

// MaxDecimals is the most decimal places an amount is rounded to.
const MaxDecimals = 36

// CheckDecimal reports why d cannot be rendered as an amount, share or
// price (negative, too many places, too large), or "" when it can.
func CheckDecimal(d decimal.Decimal) string {
	if d.IsNegative() {
		return "must not be negative"
	}
	exp := d.Exponent()
	if exp < -maxFracDigits && (exp < -4*maxFracDigits || !d.Truncate(maxFracDigits).Equal(d)) {
		return "has more than 64 decimal places"
	}
	if int64(d.NumDigits())+int64(exp) > maxIntDigits {
		return "is too large"
	}
	return ""
}

// FormatAmount renders d rounded to places decimal places (half away from
// zero) in minimal exact form: no exponent, no trailing zeros, no trailing
// point ("0.001", "12", "0.000000000000000001"). It is how every amount of a
// payload is written; d must have passed CheckDecimal.
func FormatAmount(d decimal.Decimal, places int32) string {
	return d.Round(places).String()
}
