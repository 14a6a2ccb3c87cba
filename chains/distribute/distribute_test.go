package distribute_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/family"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func ticker(t *testing.T, name string) chains.Ticker {
	t.Helper()
	tk, err := family.DefaultRegistry().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// shares builds shares for addresses "a", "b", "c", ... in order.
func shares(ss ...string) []distribute.Share {
	out := make([]distribute.Share, len(ss))
	for i, s := range ss {
		out[i] = distribute.Share{Address: string(rune('a' + i)), Share: d(s)}
	}
	return out
}

// out is an expected output: address and amount.
type out struct{ addr, amount string }

func TestCompute(t *testing.T) {
	t.Parallel()
	btc, eth := ticker(t, "btc"), ticker(t, "eth")
	usdt, trx := ticker(t, "erc20/usdt"), ticker(t, "trx")
	// units is a whole-unit coin with no fee and no minimum, for base-unit
	// arithmetic that is easy to read.
	units := chains.Ticker{Ticker: "units", Coin: "units", Decimals: 0}
	thirds := shares("0.33333333", "0.33333333", "0.33333334")

	tests := []struct {
		name      string
		t         chains.Ticker
		value     string
		netFee    string
		shares    []distribute.Share
		fee       string
		wantNet   string
		forwarded string
		outputs   []out
	}{
		{
			name: "btc one destination", t: btc, value: "1", netFee: "0.00002", shares: shares("1"),
			fee: "0.01", wantNet: "0.00002", forwarded: "0.98998",
			outputs: []out{{"a", "0.98998"}},
		},
		{
			name: "btc fee rounded down, never above the rate", t: btc, value: "0.0001235", netFee: "0.00002", shares: shares("1"),
			// 0.0001235 x 0.01 = 0.000001235: 123.5 base units, charged 123.
			fee: "0.00000123", wantNet: "0.00002", forwarded: "0.00010227",
			outputs: []out{{"a", "0.00010227"}},
		},
		{
			name: "btc network fee rounded up to a satoshi", t: btc, value: "0.01", netFee: "0.000020001", shares: shares("1"),
			fee: "0.0001", wantNet: "0.00002001", forwarded: "0.00987999",
			outputs: []out{{"a", "0.00987999"}},
		},
		{
			name: "btc at exactly the minimum", t: btc, value: "0.0001", netFee: "0.00002", shares: shares("1"),
			fee: "0.000001", wantNet: "0.00002", forwarded: "0.000079",
			outputs: []out{{"a", "0.000079"}},
		},
		{
			name: "btc three-way split, remainder to the largest share", t: btc, value: "1", netFee: "0.00002", shares: thirds,
			fee: "0.01", wantNet: "0.00002", forwarded: "0.98998",
			outputs: []out{{"a", "0.32999333"}, {"b", "0.32999333"}, {"c", "0.32999334"}},
		},
		{
			name: "eth 18 decimals, halves", t: eth, value: "1.234567890123456789", netFee: "0.0005", shares: shares("0.5", "0.5"),
			fee: "0.012345678901234567", wantNet: "0.0005", forwarded: "1.221722211222222222",
			outputs: []out{{"a", "0.610861105611111111"}, {"b", "0.610861105611111111"}},
		},
		{
			name: "eth 18 decimals, three-way", t: eth, value: "1.234567890123456789", netFee: "0.0005", shares: thirds,
			fee: "0.012345678901234567", wantNet: "0.0005", forwarded: "1.221722211222222222",
			outputs: []out{{"a", "0.407240733001666703"}, {"b", "0.407240733001666703"}, {"c", "0.407240745218888816"}},
		},
		{
			name: "usdt 6 decimals, three-way", t: usdt, value: "100", netFee: "2", shares: thirds,
			fee: "1", wantNet: "2", forwarded: "97",
			outputs: []out{{"a", "32.333333"}, {"b", "32.333333"}, {"c", "32.333334"}},
		},
		{
			name: "trx 6 decimals, 70/30", t: trx, value: "10", netFee: "0.3", shares: shares("0.7", "0.3"),
			fee: "0.1", wantNet: "0.3", forwarded: "9.6",
			outputs: []out{{"a", "6.72"}, {"b", "2.88"}},
		},
		{
			name: "tie for the largest share goes to the first listed", t: trx, value: "123.456789", netFee: "0.3", shares: shares("0.25", "0.375", "0.375"),
			fee: "1.234567", wantNet: "0.3", forwarded: "121.922222",
			outputs: []out{{"a", "30.480555"}, {"b", "45.720834"}, {"c", "45.720833"}},
		},
		{
			name: "tiny amount: floor gives the small share nothing, it is dropped", t: btc, value: "0.0001", netFee: "0", shares: shares("0.9999", "0.0001"),
			fee: "0.000001", wantNet: "0", forwarded: "0.000099",
			outputs: []out{{"a", "0.000099"}},
		},
		{
			name: "three units among five equal shares all go to the first", t: units, value: "3", netFee: "0", shares: shares("0.2", "0.2", "0.2", "0.2", "0.2"),
			fee: "0", wantNet: "0", forwarded: "3",
			outputs: []out{{"a", "3"}},
		},
		{
			name: "smallest share listed first keeps its floor", t: units, value: "10", netFee: "0", shares: shares("0.15", "0.85"),
			// floors 1 and 8; the remainder 1 goes to b, the largest.
			fee: "0", wantNet: "0", forwarded: "10",
			outputs: []out{{"a", "1"}, {"b", "9"}},
		},
		{
			name: "fee rate zero and network fee zero forward everything", t: units, value: "7", netFee: "0", shares: shares("0.5", "0.5"),
			fee: "0", wantNet: "0", forwarded: "7",
			outputs: []out{{"a", "4"}, {"b", "3"}},
		},
		{
			name: "network fee finer than the coin rounds up to one unit", t: units, value: "7", netFee: "0.0001", shares: shares("1"),
			fee: "0", wantNet: "1", forwarded: "6",
			outputs: []out{{"a", "6"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := distribute.Compute(tt.t, d(tt.value), d(tt.netFee), tt.shares)
			if err != nil {
				t.Fatalf("Compute: %v", err)
			}
			for _, c := range []struct {
				field     string
				got, want decimal.Decimal
			}{
				{"Value", p.Value, d(tt.value)},
				{"Fee", p.Fee, d(tt.fee)},
				{"NetworkFee", p.NetworkFee, d(tt.wantNet)},
				{"Forwarded", p.Forwarded, d(tt.forwarded)},
			} {
				if !c.got.Equal(c.want) {
					t.Errorf("%s = %s, want %s", c.field, c.got, c.want)
				}
			}
			if len(p.Outputs) != len(tt.outputs) {
				t.Fatalf("Outputs = %v, want %v", p.Outputs, tt.outputs)
			}
			for i, o := range p.Outputs {
				if o.Address != tt.outputs[i].addr || !o.Amount.Equal(d(tt.outputs[i].amount)) {
					t.Errorf("Outputs[%d] = %s %s, want %s %s", i, o.Address, o.Amount, tt.outputs[i].addr, tt.outputs[i].amount)
				}
			}
			checkPlan(t, tt.t, p)
		})
	}
}

func TestComputeErrors(t *testing.T) {
	t.Parallel()
	btc := ticker(t, "btc")
	long := strings.Repeat("x", 300)
	tests := []struct {
		name    string
		t       chains.Ticker
		value   string
		netFee  string
		shares  []distribute.Share
		want    error
		mention []string // substrings the message must contain
	}{
		{name: "below minimum", t: btc, value: "0.00009999", netFee: "0.00002", shares: shares("1"),
			want: distribute.ErrBelowMinimum, mention: []string{"0.00009999", "0.0001", "btc"}},
		{name: "zero value", t: btc, value: "0", netFee: "0", shares: shares("1"),
			want: distribute.ErrBelowMinimum, mention: []string{"0.0001"}},
		{name: "fees exceed the value", t: btc, value: "0.0001", netFee: "0.0001", shares: shares("1"),
			want: distribute.ErrNothingToForward, mention: []string{"0.0001", "0.000001"}},
		{name: "fees equal the value exactly", t: btc, value: "0.0001", netFee: "0.000099", shares: shares("1"),
			want: distribute.ErrNothingToForward},
		{name: "network fee rounding up consumes the last unit", t: btc, value: "0.0001", netFee: "0.0000989901", shares: shares("1"),
			want: distribute.ErrNothingToForward},
		{name: "zero value with no minimum", t: chains.Ticker{Ticker: "units"}, value: "0", netFee: "0", shares: shares("1"),
			want: distribute.ErrNothingToForward},
		{name: "negative network fee", t: btc, value: "1", netFee: "-0.00001", shares: shares("1"),
			want: distribute.ErrInvalidAmount, mention: []string{"-0.00001"}},
		{name: "negative value", t: btc, value: "-1", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidAmount},
		{name: "value finer than a satoshi", t: btc, value: "1.000000001", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidAmount, mention: []string{"1.000000001", "8 decimal places"}},
		{name: "no shares", t: btc, value: "1", netFee: "0", shares: nil,
			want: distribute.ErrInvalidShares},
		{name: "shares sum below 1", t: btc, value: "1", netFee: "0", shares: shares("0.33333333", "0.33333333", "0.33333333"),
			want: distribute.ErrInvalidShares, mention: []string{"0.99999999"}},
		{name: "shares sum above 1", t: btc, value: "1", netFee: "0", shares: shares("0.5", "0.50000001"),
			want: distribute.ErrInvalidShares},
		{name: "zero share", t: btc, value: "1", netFee: "0", shares: shares("1", "0"),
			want: distribute.ErrInvalidShares, mention: []string{"destination 2"}},
		{name: "negative share", t: btc, value: "1", netFee: "0", shares: shares("1.5", "-0.5"),
			want: distribute.ErrInvalidShares},
		{name: "duplicate address", t: btc, value: "1", netFee: "0",
			shares: []distribute.Share{{Address: "a", Share: d("0.5")}, {Address: "a", Share: d("0.5")}},
			want:   distribute.ErrInvalidShares, mention: []string{"listed twice"}},
		{name: "empty address", t: btc, value: "1", netFee: "0",
			shares: []distribute.Share{{Address: "", Share: d("1")}},
			want:   distribute.ErrInvalidShares},
		{name: "long address is clipped in the message", t: btc, value: "1", netFee: "0",
			shares: []distribute.Share{{Address: long, Share: d("0")}, {Address: "b", Share: d("1")}},
			want:   distribute.ErrInvalidShares, mention: []string{"..."}},
		{name: "shares are checked before the minimum", t: btc, value: "0.00000001", netFee: "0", shares: nil,
			want: distribute.ErrInvalidShares},
		{name: "ticker with too many decimals", t: chains.Ticker{Ticker: "x", Decimals: 19}, value: "1", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidTicker},
		{name: "ticker with fee rate 1", t: chains.Ticker{Ticker: "x", Decimals: 8, FeeRate: d("1")}, value: "1", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidTicker},
		{name: "ticker with negative fee rate", t: chains.Ticker{Ticker: "x", Decimals: 8, FeeRate: d("-0.01")}, value: "1", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidTicker},
		{name: "ticker with negative minimum", t: chains.Ticker{Ticker: "x", Decimals: 8, MinTransaction: d("-1")}, value: "1", netFee: "0", shares: shares("1"),
			want: distribute.ErrInvalidTicker},
	}
	sentinels := []error{distribute.ErrBelowMinimum, distribute.ErrNothingToForward, distribute.ErrInvalidShares, distribute.ErrInvalidAmount, distribute.ErrInvalidTicker}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := distribute.Compute(tt.t, d(tt.value), d(tt.netFee), tt.shares)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Compute error = %v, want %v", err, tt.want)
			}
			for _, s := range sentinels {
				if s != tt.want && errors.Is(err, s) {
					t.Errorf("error %v also wraps %v", err, s)
				}
			}
			for _, m := range tt.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			if len(err.Error()) > 400 {
				t.Errorf("error message is %d bytes long", len(err.Error()))
			}
			if p.Outputs != nil || !p.Value.IsZero() {
				t.Errorf("Plan = %+v, want the zero value on error", p)
			}
		})
	}
}

// TestComputeProperties checks the package guarantees on random inputs.
func TestComputeProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20261121, 1))
	decimalsChoices := []int32{0, 2, 6, 8, 9, 18}
	rates := []string{"0", "0.01", "0.005", "0.0125", "0.333333", "0.99"}
	const runs = 20000
	forwardedRuns := 0
	for i := range runs {
		dec := decimalsChoices[r.IntN(len(decimalsChoices))]
		tk := chains.Ticker{Ticker: "rand", Coin: "rand", Decimals: dec, FeeRate: d(rates[r.IntN(len(rates))])}
		var value decimal.Decimal
		switch r.IntN(3) {
		case 0: // a few base units
			value = decimal.NewFromInt(r.Int64N(50)).Shift(-dec)
		case 1:
			value = decimal.NewFromInt(r.Int64N(1_000_000_000)).Shift(-dec)
		default: // large, up to ~10^36 base units
			value = decimal.NewFromInt(r.Int64N(1 << 62)).Mul(decimal.NewFromInt(r.Int64N(1<<62) + 1)).Shift(-dec)
		}
		// The estimate may be finer than the coin, to exercise rounding up.
		netFee := decimal.NewFromInt(r.Int64N(1000)).Shift(-dec - int32(r.IntN(4)))
		sh := randomShares(r)

		p, err := distribute.Compute(tk, value, netFee, sh)
		if errors.Is(err, distribute.ErrNothingToForward) {
			unit := decimal.New(1, -dec)
			fee := value.Mul(tk.FeeRate).RoundFloor(dec)
			if value.Sub(fee).Sub(netFee).GreaterThanOrEqual(unit) {
				t.Fatalf("run %d: %s value %s fee rate %s net fee %s: ErrNothingToForward, but at least one unit is left", i, tk.Ticker, value, tk.FeeRate, netFee)
			}
			continue
		}
		if err != nil {
			t.Fatalf("run %d: Compute(%d decimals, %s, %s, %v): %v", i, dec, value, netFee, sh, err)
		}
		forwardedRuns++
		checkPlan(t, tk, p)

		unit := decimal.New(1, -dec)
		exactFee := value.Mul(tk.FeeRate)
		if p.Fee.GreaterThan(exactFee) || !p.Fee.GreaterThan(exactFee.Sub(unit)) {
			t.Fatalf("run %d: fee %s is not value x rate %s rounded down", i, p.Fee, exactFee)
		}
		if p.NetworkFee.LessThan(netFee) || !p.NetworkFee.LessThan(netFee.Add(unit)) {
			t.Fatalf("run %d: network fee %s is not %s rounded up", i, p.NetworkFee, netFee)
		}
		// Everyone gets at least their rounded-down share, and the outputs
		// keep the order of the shares.
		next := 0
		for _, o := range p.Outputs {
			for next < len(sh) && sh[next].Address != o.Address {
				floor := p.Forwarded.Mul(sh[next].Share).RoundFloor(dec)
				if floor.Sign() != 0 {
					t.Fatalf("run %d: destination %s with floor %s was dropped", i, sh[next].Address, floor)
				}
				next++
			}
			if next == len(sh) {
				t.Fatalf("run %d: outputs %v are not in the order of shares %v", i, p.Outputs, sh)
			}
			floor := p.Forwarded.Mul(sh[next].Share).RoundFloor(dec)
			if o.Amount.LessThan(floor) {
				t.Fatalf("run %d: %s got %s, below its floor %s", i, o.Address, o.Amount, floor)
			}
			if extra := o.Amount.Sub(floor); extra.GreaterThanOrEqual(unit.Mul(decimal.NewFromInt(int64(len(sh))))) {
				t.Fatalf("run %d: %s got %s over its floor, more than the remainder can be", i, o.Address, extra)
			}
			next++
		}
	}
	if forwardedRuns < runs/2 {
		t.Fatalf("only %d of %d runs produced a plan; the generator is too weak", forwardedRuns, runs)
	}
}

// randomShares returns 1..12 positive shares summing to exactly 1, made of
// whole numbers of 10^-p.
func randomShares(r *rand.Rand) []distribute.Share {
	n := 1 + r.IntN(12)
	p := int32(2 + r.IntN(10))
	total := decimal.New(1, p).IntPart() // 10^p >= 100 >= n
	// n-1 distinct cut points in (0, total) give n positive parts.
	cuts := map[int64]bool{}
	for len(cuts) < n-1 {
		cuts[1+r.Int64N(total-1)] = true
	}
	points := []int64{0}
	for c := range cuts {
		points = append(points, c)
	}
	points = append(points, total)
	slices.Sort(points)
	out := make([]distribute.Share, n)
	for i := range n {
		out[i] = distribute.Share{Address: fmt.Sprintf("addr%d", i), Share: decimal.New(points[i+1]-points[i], -p)}
	}
	return out
}

// checkPlan asserts the invariants every Plan satisfies.
func checkPlan(t *testing.T, tk chains.Ticker, p distribute.Plan) {
	t.Helper()
	if !p.Fee.Add(p.NetworkFee).Add(p.Forwarded).Equal(p.Value) {
		t.Fatalf("fee %s + network fee %s + forwarded %s != value %s", p.Fee, p.NetworkFee, p.Forwarded, p.Value)
	}
	if p.Forwarded.Sign() <= 0 {
		t.Fatalf("forwarded %s is not positive", p.Forwarded)
	}
	if len(p.Outputs) == 0 {
		t.Fatal("no outputs")
	}
	sum := decimal.Zero
	for _, a := range []decimal.Decimal{p.Fee, p.NetworkFee, p.Forwarded} {
		if a.Sign() < 0 || !a.Equal(a.Truncate(tk.Decimals)) {
			t.Fatalf("amount %s is negative or has more than %d decimal places", a, tk.Decimals)
		}
	}
	for _, o := range p.Outputs {
		if o.Amount.Sign() <= 0 {
			t.Fatalf("output %s has amount %s", o.Address, o.Amount)
		}
		if !o.Amount.Equal(o.Amount.Truncate(tk.Decimals)) {
			t.Fatalf("output %s amount %s has more than %d decimal places", o.Address, o.Amount, tk.Decimals)
		}
		sum = sum.Add(o.Amount)
	}
	if !sum.Equal(p.Forwarded) {
		t.Fatalf("outputs sum to %s, forwarded is %s", sum, p.Forwarded)
	}
}
