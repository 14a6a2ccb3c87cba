package payload

import (
	"testing"

	"github.com/shopspring/decimal"
)

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		places int32
		want   string
	}{
		{"trailing zeros trimmed", "0.00100000", 8, "0.001"},
		{"integer", "12.000", 2, "12"},
		{"zero", "0", 8, "0"},
		{"zero with places", "0.00000000", 8, "0"},
		{"smallest 18-decimal unit", "0.000000000000000001", 18, "0.000000000000000001"},
		{"exponent input, no exponent output", "1e-18", 18, "0.000000000000000001"},
		{"positive exponent input", "1e3", 8, "1000"},
		{"half rounds away from zero", "0.125", 2, "0.13"},
		{"below half rounds down", "0.124", 2, "0.12"},
		{"18 places half up", "1.0000000000000000005", 18, "1.000000000000000001"},
		{"below the precision", "0.0000000049", 8, "0"},
		{"zero places", "2.5", 0, "3"},
		{"large", "123456789012345678901234567890.5", 0, "123456789012345678901234567891"},
		{"many digits kept", "98765.43210987", 8, "98765.43210987"},
		{"uint256 max base units", "115792089237316195423570985008687907853269984665640564039457.584007913129639935", 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := decimal.RequireFromString(tc.in)
			if r := CheckDecimal(d); r != "" {
				t.Fatalf("CheckDecimal(%s) = %q", tc.in, r)
			}
			if got := FormatAmount(d, tc.places); got != tc.want {
				t.Errorf("FormatAmount(%s, %d) = %q, want %q", tc.in, tc.places, got, tc.want)
			}
		})
	}
}

func TestCheckDecimal(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"0", true},
		{"1e79", true},
		{"1e80", false},
		{"-0.000001", false},
		{"1e-64", true},
		{"1e-65", false},
		{"0.1000000000000000000000000000000000000000000000000000000000000000000000", true}, // 70 places, trailing zeros
	}
	for _, tc := range tests {
		if r := CheckDecimal(decimal.RequireFromString(tc.in)); (r == "") != tc.ok {
			t.Errorf("CheckDecimal(%s) = %q, want ok=%v", tc.in, r, tc.ok)
		}
	}
	// Exponents beyond what decimal parses from text, built directly.
	for _, exp := range []int32{-1_000_000_000, 1_000_000_000, -257, 81} {
		if r := CheckDecimal(decimal.New(1, exp)); r == "" {
			t.Errorf("CheckDecimal(1e%d) accepted", exp)
		}
	}
	if r := CheckDecimal(decimal.Decimal{}); r != "" {
		t.Errorf("zero Decimal rejected: %s", r)
	}
}

func TestAmountConstructors(t *testing.T) {
	var zero Amount
	if zero.Valid || zero.Null {
		t.Error("zero Amount is not absent")
	}
	if a := AmountOf(decimal.NewFromInt(2)); !a.Valid || a.Null || !a.Value.Equal(decimal.NewFromInt(2)) {
		t.Errorf("AmountOf = %+v", a)
	}
	if a := AmountNull(); a.Valid || !a.Null {
		t.Errorf("AmountNull = %+v", a)
	}
}
