package invoice

import (
	"testing"

	"github.com/shopspring/decimal"
)

func dp(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

func TestCompute(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		value    *decimal.Decimal
		expired  bool
		payments []PaymentState
		want     Status
	}{
		{"nothing yet", dp("100"), false, nil, Waiting},
		{"nothing and expired", dp("100"), true, nil, Expired},
		{"seen, unconfirmed", dp("100"), false, []PaymentState{{Fiat: dp("100")}}, Pending},
		{"confirmed below the value", dp("100"), false, []PaymentState{{Confirmed: true, Fiat: dp("99.99")}}, Partial},
		{"confirmed parts reach the value", dp("100"), false, []PaymentState{{Confirmed: true, Fiat: dp("60")}, {Confirmed: true, Fiat: dp("40")}}, Paid},
		{"overpaid", dp("100"), false, []PaymentState{{Confirmed: true, Fiat: dp("130")}}, Paid},
		{"pending beside a partial", dp("100"), false, []PaymentState{{Confirmed: true, Fiat: dp("50")}, {Fiat: dp("50")}}, Partial},
		{"unknown fiat counts as zero", dp("100"), false, []PaymentState{{Confirmed: true}}, Partial},
		{"paid after expiry is paid", dp("100"), true, []PaymentState{{Confirmed: true, Fiat: dp("100")}}, Paid},
		{"partial after expiry is expired", dp("100"), true, []PaymentState{{Confirmed: true, Fiat: dp("10")}}, Expired},
		{"open amount: any confirmed payment", nil, false, []PaymentState{{Confirmed: true}}, Paid},
		{"open amount: seen", nil, false, []PaymentState{{}}, Pending},
	} {
		if got := Compute(c.value, decimal.Zero, c.expired, c.payments); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestSettleExceptions: the underpaid tolerance makes paid what is within
// it of the value (exactly, at the boundary too), a partial invoice owes
// exactly the rest of its value, and a paid one reports exactly what it
// received above it.
func TestSettleExceptions(t *testing.T) {
	t.Parallel()
	str := func(d *decimal.Decimal) string {
		if d == nil {
			return "nil"
		}
		return d.String()
	}
	paid := func(fiats ...string) []PaymentState {
		var out []PaymentState
		for _, f := range fiats {
			out = append(out, PaymentState{Confirmed: true, Fiat: dp(f)})
		}
		return out
	}
	for _, c := range []struct {
		name              string
		value             *decimal.Decimal
		tolerance         string
		expired           bool
		payments          []PaymentState
		want              Status
		wantDue, wantOver string
	}{
		{"no tolerance: a cent short is partial", dp("100"), "0", false, paid("99.99"), Partial, "0.01", "nil"},
		{"1% tolerance: exactly 99 is paid", dp("100"), "1", false, paid("99"), Paid, "nil", "nil"},
		{"1% tolerance: just below 99 is partial", dp("100"), "1", false, paid("98.999999999"), Partial, "1.000000001", "nil"},
		{"0.25% tolerance of 19.99", dp("19.99"), "0.25", false, paid("19.940025"), Paid, "nil", "nil"},
		{"0.25% tolerance of 19.99, a hair short", dp("19.99"), "0.25", false, paid("19.940024"), Partial, "0.049976", "nil"},
		{"100% tolerance: any confirmed payment", dp("100"), "100", false, paid("0"), Paid, "nil", "nil"},
		{"tolerance never makes pending paid", dp("100"), "5", false, []PaymentState{{Fiat: dp("100")}}, Pending, "nil", "nil"},
		{"overpaid by parts", dp("100"), "0", false, paid("60", "40.5"), Paid, "nil", "0.5"},
		{"exactly paid is not overpaid", dp("100"), "0", false, paid("100"), Paid, "nil", "nil"},
		{"expired partial owes nothing (expired)", dp("100"), "0", true, paid("10"), Expired, "nil", "nil"},
		{"open amount is never overpaid", nil, "0", false, paid("1000"), Paid, "nil", "nil"},
	} {
		s := Settle(c.value, decimal.RequireFromString(c.tolerance), c.expired, c.payments)
		if s.Status != c.want || str(s.Due) != c.wantDue || str(s.Overpaid) != c.wantOver {
			t.Errorf("%s: %s due %s overpaid %s, want %s due %s overpaid %s", c.name, s.Status, str(s.Due), str(s.Overpaid), c.want, c.wantDue, c.wantOver)
		}
	}
}

// TestInCoin: amounts due round up (paying them covers the fiat), overpaid
// amounts round down, both exactly at the coin's decimals.
func TestInCoin(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fiat, rate string
		decimals   int32
		up         bool
		want       string
	}{
		{"10", "3", 8, true, "3.33333334"},
		{"10", "3", 8, false, "3.33333333"},
		{"30", "3", 8, true, "10"},
		{"0.01", "87000", 8, true, "0.00000012"},
		{"0.01", "87000", 8, false, "0.00000011"},
		{"1", "3000", 18, true, "0.000333333333333334"},
		{"1", "3000", 18, false, "0.000333333333333333"},
	} {
		got := InCoin(decimal.RequireFromString(c.fiat), decimal.RequireFromString(c.rate), c.decimals, c.up)
		if got.String() != c.want {
			t.Errorf("%s at %s (%d places, up %v): %s, want %s", c.fiat, c.rate, c.decimals, c.up, got, c.want)
		}
	}
}

// TestFallback is the spec's fallback rules 1-3 and its example: a
// customer pays 10 in fiat, total fees are 0.20: the completed webhook's
// net fiat is 9.8.
func TestFallback(t *testing.T) {
	t.Parallel()
	str := func(d *decimal.Decimal) string {
		if d == nil {
			return "null"
		}
		return d.String()
	}
	net := NetFiat(dp("10"), decimal.RequireFromString("0.001"), decimal.RequireFromString("0.00098"))
	for _, c := range []struct {
		name                   string
		in, value, net         *decimal.Decimal
		wantPaid, wantReceived string
	}{
		{"known: the spec's example", dp("10"), dp("10"), net, "10", "9.8"},
		{"rule 1: incoming falls back to the value", nil, dp("25"), nil, "25", "25"},
		{"rule 2: net falls back to incoming", dp("12"), nil, nil, "12", "12"},
		{"rule 3: both null", nil, nil, nil, "null", "null"},
	} {
		f := Fallback(c.in, c.value, c.net)
		if str(f.Paid) != c.wantPaid || str(f.Received) != c.wantReceived {
			t.Errorf("%s: paid %s received %s, want %s %s", c.name, str(f.Paid), str(f.Received), c.wantPaid, c.wantReceived)
		}
	}
	if NetFiat(nil, decimal.NewFromInt(1), decimal.NewFromInt(1)) != nil || NetFiat(dp("1"), decimal.Zero, decimal.NewFromInt(1)) != nil {
		t.Error("NetFiat without a valuation must be unknown")
	}
}

func TestQuoteCoinCoversTheValue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ value, rate string }{{"100", "87123.45"}, {"0.01", "3000"}, {"19.99", "0.9998"}, {"1", "3"}} {
		v, r := decimal.RequireFromString(c.value), decimal.RequireFromString(c.rate)
		q := QuoteCoin(v, r, 8)
		if q.Mul(r).LessThan(v) || -q.Exponent() > 8 {
			t.Errorf("quote of %s at %s: %s coin is worth %s", c.value, c.rate, q, q.Mul(r))
		}
		if q.Sub(decimal.New(1, -8)).Mul(r).GreaterThanOrEqual(v) {
			t.Errorf("quote of %s at %s: %s is more than one unit above the value", c.value, c.rate, q)
		}
	}
}
