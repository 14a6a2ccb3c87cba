package subscription

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
)

// Unit is the unit of a plan period.
type Unit byte

// Units of a period.
const (
	Day   Unit = 'd'
	Week  Unit = 'w'
	Month Unit = 'm'
	Year  Unit = 'y'
)

// MaxOptions is the most plan options a subscription has.
const MaxOptions = 20

// maxCount bounds a period's count so that no period exceeds ten years
// (and period arithmetic never overflows).
var maxCount = map[Unit]int{Day: 3660, Week: 522, Month: 120, Year: 10}

// Period is a plan period: a positive count of a unit.
type Period struct {
	// Count is how many units, at least 1.
	Count int
	// Unit is d, w, m or y.
	Unit Unit
}

// String renders p as it is written in an option ("1m", "12m").
func (p Period) String() string { return strconv.Itoa(p.Count) + string(p.Unit) }

// ParsePeriod parses a period: a count without sign or leading zero, then
// one of d, w, m, y (lower case), at most ten years.
func ParsePeriod(raw string) (Period, error) {
	bad := func() (Period, error) {
		return Period{}, fmt.Errorf("period %s is not a count and a unit d, w, m or y such as 1m or 12m", quote(raw))
	}
	if len(raw) < 2 || len(raw) > 5 {
		return bad()
	}
	u := Unit(raw[len(raw)-1])
	limit, ok := maxCount[u]
	if !ok {
		return bad()
	}
	digits := raw[:len(raw)-1]
	if digits[0] < '1' || digits[0] > '9' {
		return bad()
	}
	for i := 1; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return bad()
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return bad()
	}
	if n > limit {
		return Period{}, fmt.Errorf("period %s is longer than ten years (at most %d%c)", quote(raw), limit, u)
	}
	return Period{Count: n, Unit: u}, nil
}

// AddPeriod returns t plus p, by calendar: days and weeks as 24-hour days
// of t's location, months and years with time.AddDate, which normalises an
// overflowing day of month the way Go does (Jan 31 + 1m is Mar 3, or Mar 2
// in a leap year).
func AddPeriod(t time.Time, p Period) time.Time {
	switch p.Unit {
	case Day:
		return t.AddDate(0, 0, p.Count)
	case Week:
		return t.AddDate(0, 0, 7*p.Count)
	case Month:
		return t.AddDate(0, p.Count, 0)
	case Year:
		return t.AddDate(p.Count, 0, 0)
	}
	return t
}

// Option is a parsed plan option.
type Option struct {
	// Period is the option's period.
	Period Period
	// Value is its price in the subscription's currency, positive.
	Value decimal.Decimal
}

// ParseOption parses one option, PERIOD:VALUE, whose value has at most
// places decimal places (the currency's minor unit).
func ParseOption(raw string, places int32) (Option, error) {
	per, val, ok := strings.Cut(raw, ":")
	if !ok {
		return Option{}, invalid("option", "%s is not PERIOD:VALUE such as 1m:10.00", quote(raw))
	}
	p, err := ParsePeriod(per)
	if err != nil {
		return Option{}, invalid("option", "%s: %v", quote(raw), err)
	}
	v, err := address.ParseAmount("value", val, places)
	var ae *address.InvalidError
	if errors.As(err, &ae) {
		return Option{}, invalid("option", "%s: value %s", quote(raw), ae.Reason)
	}
	if err != nil {
		return Option{}, err
	}
	if v.GreaterThanOrEqual(invoice.MaxValue) {
		return Option{}, invalid("option", "%s: value must be below %s", quote(raw), invoice.MaxValue)
	}
	return Option{Period: p, Value: v}, nil
}

// ParseOptions parses a subscription's options: at least one, at most
// MaxOptions, each period once.
func ParseOptions(raw []string, places int32) ([]Option, error) {
	if len(raw) == 0 {
		return nil, invalid("option", "at least one option PERIOD:VALUE is required, e.g. option=1m:10.00")
	}
	if len(raw) > MaxOptions {
		return nil, invalid("option", "%d options given; at most %d are allowed", len(raw), MaxOptions)
	}
	out := make([]Option, 0, len(raw))
	seen := map[Period]bool{}
	for _, r := range raw {
		o, err := ParseOption(r, places)
		if err != nil {
			return nil, err
		}
		if seen[o.Period] {
			return nil, invalid("option", "period %s is given twice", o.Period)
		}
		seen[o.Period] = true
		out = append(out, o)
	}
	return out, nil
}

func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if !utf8.ValidString(s) {
		return fmt.Sprintf("%+q", s)
	}
	return strconv.Quote(s)
}
