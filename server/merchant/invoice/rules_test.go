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
		if got := Compute(c.value, c.expired, c.payments); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
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
