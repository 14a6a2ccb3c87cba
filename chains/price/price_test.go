package price_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func cur(code, perUSD string, decimals int32) price.Currency {
	return price.Currency{Code: code, PerUSD: d(perUSD), Decimals: decimals}
}

// small is a table whose rates make rounding cases exact.
func small() *price.Table {
	return price.Fixed(map[string]string{"btc": "50000", "usdt": "1", "erc20/usdt": "0.999"}, []price.Currency{
		cur("USD", "1", 2),
		cur("JPY", "150", 0),
		cur("BHD", "0.5", 3),
		cur("CLF", "0.025", 4),
		cur("EUR", "0.9", 2),
	})
}

func TestConvert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  price.Source
		usd  string
		ok   bool
		want string
	}{
		{name: "ten dollars", src: small(), usd: "10", ok: true,
			want: `{"BHD":"5.000","CLF":"0.2500","EUR":"9.00","JPY":"1500","USD":"10.00"}`},
		{name: "fractional value", src: small(), usd: "1234.5678", ok: true,
			want: `{"BHD":"617.284","CLF":"30.8642","EUR":"1111.11","JPY":"185185","USD":"1234.57"}`},
		{name: "halves round away from zero", src: small(), usd: "0.01", ok: true,
			// JPY 1.5 -> 2, BHD 0.005, CLF 0.00025 -> 0.0003, EUR 0.009 -> 0.01.
			want: `{"BHD":"0.005","CLF":"0.0003","EUR":"0.01","JPY":"2","USD":"0.01"}`},
		{name: "just below half rounds down", src: small(), usd: "0.0029", ok: true,
			// JPY 0.435 -> 0, BHD 0.00145 -> 0.001, CLF 0.0000725 -> 0.0001, USD 0.0029 -> 0.00.
			want: `{"BHD":"0.001","CLF":"0.0001","EUR":"0.00","JPY":"0","USD":"0.00"}`},
		{name: "BHD third place half", src: small(), usd: "0.001", ok: true,
			want: `{"BHD":"0.001","CLF":"0.0000","EUR":"0.00","JPY":"0","USD":"0.00"}`},
		{name: "zero", src: small(), usd: "0", ok: true, want: "{}"},
		{name: "negative", src: small(), usd: "-10", ok: true, want: "{}"},
		{name: "no USD value", src: small(), usd: "10", ok: false, want: "{}"},
		{name: "absurdly large", src: small(), usd: "1e30", ok: true, want: "{}"},
		{name: "nil source", src: nil, usd: "10", ok: true, want: "{}"},
		{name: "nil table", src: (*price.Table)(nil), usd: "10", ok: true, want: "{}"},
		{name: "source without currencies", src: fakeSource{}, usd: "10", ok: true, want: "{}"},
		{name: "other source: sorted, first of a code, invalid entries skipped", usd: "2", ok: true,
			src: fakeSource{fiat: []price.Currency{
				cur("USD", "1", 2), cur("EUR", "0.9", 2), cur("EUR", "0.5", 2),
				cur("eur", "1", 2), cur("XX\"", "1", 2), cur("ZZZ", "0", 2), cur("YYY", "-1", 2), cur("XXX", "1", 5),
				cur("AAA", "3", 0),
			}},
			want: `{"AAA":"6","EUR":"1.80","USD":"2.00"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := price.Convert(tt.src, d(tt.usd), tt.ok)
			if got != tt.want {
				t.Errorf("Convert(%s) =\n%s\nwant\n%s", tt.usd, got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("Convert(%s) = %s is not valid JSON", tt.usd, got)
			}
		})
	}
}

// TestConvertDefault checks the shape of a conversion over the full default
// table: valid JSON, every code once, sorted keys, string values with
// exactly the currency's minor unit.
func TestConvertDefault(t *testing.T) {
	t.Parallel()
	src := price.Default()
	usd, ok := price.USDValue(src, "btc", d("0.0001"))
	if !ok {
		t.Fatal("no btc price")
	}
	got := price.Convert(src, usd, ok)

	fiat := src.Fiat()
	dec := json.NewDecoder(strings.NewReader(got))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("first token %v, %v; want {", tok, err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		v, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		code, value := k.(string), v
		s, isString := value.(string)
		if !isString {
			t.Fatalf("%s: value %v is not a JSON string", code, value)
		}
		i := slices.IndexFunc(fiat, func(c price.Currency) bool { return c.Code == code })
		if i < 0 {
			t.Fatalf("%s: not a currency of the table", code)
		}
		want := usd.Mul(fiat[i].PerUSD).Round(fiat[i].Decimals)
		if !d(s).Equal(want) {
			t.Errorf("%s = %s, want %s", code, s, want)
		}
		_, frac, hasPoint := strings.Cut(s, ".")
		if places := int32(len(frac)); places != fiat[i].Decimals || hasPoint != (fiat[i].Decimals > 0) {
			t.Errorf("%s = %q: want exactly %d decimal places", code, s, fiat[i].Decimals)
		}
		keys = append(keys, code)
	}
	if !slices.IsSorted(keys) {
		t.Error("keys are not sorted")
	}
	if len(keys) != len(fiat) {
		t.Errorf("%d keys, want one per currency (%d)", len(keys), len(fiat))
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatalf("not a JSON object of strings: %v", err)
	}
	if m["USD"] != "10.70" || m["JPY"] != "1543" || m["BHD"] != "4.023" {
		t.Errorf("USD %s JPY %s BHD %s, want 10.70, 1543, 4.023 (0.0001 btc at 107000)", m["USD"], m["JPY"], m["BHD"])
	}
}

func TestUSD(t *testing.T) {
	t.Parallel()
	src := small()
	tests := []struct {
		coin string
		want string // "" when missing
	}{
		{"btc", "50000"},
		{"BTC", "50000"},
		{"usdt", "1"},
		{"trc20/usdt", "1"},        // falls back to the symbol
		{"TRC20/USDT", "1"},        // case-insensitive
		{"erc20/usdt", "0.999"},    // priced as a path: the path wins
		{"bep20/usdt", "1"},        // not priced as a path: the symbol
		{"eth", ""},                // no price
		{"erc20/eth/btc", "50000"}, // last segment
		{"", ""},
		{"/", ""},
	}
	for _, tt := range tests {
		got, ok := src.USD(tt.coin)
		if ok != (tt.want != "") || (ok && !got.Equal(d(tt.want))) {
			t.Errorf("USD(%q) = %s, %v; want %q", tt.coin, got, ok, tt.want)
		}
	}
}

func TestUSDValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		src    price.Source
		coin   string
		value  string
		want   string
		wantOK bool
	}{
		{"btc", small(), "btc", "0.00012345", "6.1725", true},
		{"token by path", small(), "trc20/usdt", "12.5", "12.5", true},
		{"zero value", small(), "btc", "0", "0", true},
		{"missing price", small(), "doge", "1", "0", false},
		{"nil source", nil, "btc", "1", "0", false},
		{"non-positive price from another source", fakeSource{price: d("0")}, "btc", "1", "0", false},
		{"negative price from another source", fakeSource{price: d("-1")}, "btc", "1", "0", false},
	}
	for _, tt := range tests {
		got, ok := price.USDValue(tt.src, tt.coin, d(tt.value))
		if ok != tt.wantOK || !got.Equal(d(tt.want)) {
			t.Errorf("%s: USDValue = %s, %v; want %s, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
		if !ok && price.Convert(tt.src, got, ok) != "{}" {
			t.Errorf("%s: Convert of a missing value is not {}", tt.name)
		}
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	const (
		coins = `"coins":[{"coin":"btc","usd":"50000"}]`
		fiat  = `"fiat":[{"code":"USD","per_usd":"1","decimals":2}]`
	)
	file := func(parts ...string) string { return "{" + strings.Join(parts, ",") + "}" }
	tests := []struct {
		name    string
		in      string
		section string // for a *LoadError: section, entry, name, field
		entry   int
		entName string
		field   string
	}{
		{name: "minimal", in: file(coins, fiat)},
		{name: "with description and date", in: file(`"description":"x"`, `"as_of":"2026-11-01"`, coins, fiat)},
		{name: "syntax error", in: `{"coins":[`},
		{name: "not an object", in: `[]`},
		{name: "trailing data", in: file(coins, fiat) + `{}`},
		{name: "unknown top-level field", in: file(coins, fiat, `"extra":1`)},
		{name: "bad date", in: file(`"as_of":"30/06/2025"`, coins, fiat), field: "as_of"},
		{name: "no coins", in: file(fiat), field: "coins"},
		{name: "empty coins", in: file(`"coins":[]`, fiat), field: "coins"},
		{name: "no fiat", in: file(coins), field: "fiat"},
		{name: "coin not an object", in: file(`"coins":["btc"]`, fiat), section: "coins", entry: 1},
		{name: "unknown coin field", in: file(`"coins":[{"coin":"btc","usd":"1","eur":"1"}]`, fiat), section: "coins", entry: 1, entName: "btc"},
		{name: "coin missing", in: file(`"coins":[{"usd":"1"}]`, fiat), section: "coins", entry: 1, field: "coin"},
		{name: "coin upper-case", in: file(`"coins":[{"coin":"BTC","usd":"1"}]`, fiat), section: "coins", entry: 1, entName: "BTC", field: "coin"},
		{name: "coin with three segments", in: file(`"coins":[{"coin":"a/b/c","usd":"1"}]`, fiat), section: "coins", entry: 1, entName: "a/b/c", field: "coin"},
		{name: "coin twice", in: file(`"coins":[{"coin":"btc","usd":"1"},{"coin":"eth","usd":"1"},{"coin":"btc","usd":"2"}]`, fiat), section: "coins", entry: 3, entName: "btc", field: "coin"},
		{name: "price missing", in: file(`"coins":[{"coin":"btc"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price zero", in: file(`"coins":[{"coin":"btc","usd":"0"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price negative", in: file(`"coins":[{"coin":"btc","usd":"-1"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price not a decimal", in: file(`"coins":[{"coin":"btc","usd":"lots"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price as a JSON number", in: file(`"coins":[{"coin":"btc","usd":50000}]`, fiat), section: "coins", entry: 1, entName: "btc"},
		{name: "price too precise", in: file(`"coins":[{"coin":"btc","usd":"0.0000000000000000001"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price too large", in: file(`"coins":[{"coin":"btc","usd":"1e15"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "price too long", in: file(`"coins":[{"coin":"btc","usd":"`+strings.Repeat("1", 100)+`"}]`, fiat), section: "coins", entry: 1, entName: "btc", field: "usd"},
		{name: "code lower-case", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":2},{"code":"eur","per_usd":"1","decimals":2}]`), section: "fiat", entry: 2, entName: "eur", field: "code"},
		{name: "code four letters", in: file(coins, `"fiat":[{"code":"USDT","per_usd":"1","decimals":2}]`), section: "fiat", entry: 1, entName: "USDT", field: "code"},
		{name: "code missing", in: file(coins, `"fiat":[{"per_usd":"1","decimals":2}]`), section: "fiat", entry: 1, field: "code"},
		{name: "code twice", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":2},{"code":"USD","per_usd":"1","decimals":2}]`), section: "fiat", entry: 2, entName: "USD", field: "code"},
		{name: "rate zero", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":2},{"code":"EUR","per_usd":"0","decimals":2}]`), section: "fiat", entry: 2, entName: "EUR", field: "per_usd"},
		{name: "rate missing", in: file(coins, `"fiat":[{"code":"USD","decimals":2}]`), section: "fiat", entry: 1, entName: "USD", field: "per_usd"},
		{name: "USD rate not 1", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1.01","decimals":2}]`), section: "fiat", entry: 1, entName: "USD", field: "per_usd"},
		{name: "USD missing", in: file(coins, `"fiat":[{"code":"EUR","per_usd":"0.9","decimals":2}]`), field: "fiat"},
		{name: "decimals 5", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":5}]`), section: "fiat", entry: 1, entName: "USD", field: "decimals"},
		{name: "decimals negative", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":-1}]`), section: "fiat", entry: 1, entName: "USD", field: "decimals"},
		{name: "decimals missing", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1"}]`), section: "fiat", entry: 1, entName: "USD", field: "decimals"},
		{name: "decimals as a string", in: file(coins, `"fiat":[{"code":"USD","per_usd":"1","decimals":"2"}]`), section: "fiat", entry: 1, entName: "USD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tab, err := price.Load(strings.NewReader(tt.in))
			valid := tt.name == "minimal" || tt.name == "with description and date"
			if valid {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if p, ok := tab.USD("btc"); !ok || !p.Equal(d("50000")) {
					t.Errorf("USD(btc) = %s, %v", p, ok)
				}
				return
			}
			if !errors.Is(err, price.ErrInvalidTable) {
				t.Fatalf("Load error = %v, want ErrInvalidTable", err)
			}
			if tab != nil {
				t.Error("a table was returned with the error")
			}
			var le *price.LoadError
			if !errors.As(err, &le) {
				if tt.section != "" || tt.field != "" {
					t.Fatalf("error %v is not a *LoadError", err)
				}
				return
			}
			if le.Section != tt.section || le.Entry != tt.entry || le.Name != tt.entName || le.Field != tt.field {
				t.Errorf("LoadError{%q, %d, %q, %q}, want {%q, %d, %q, %q}: %v",
					le.Section, le.Entry, le.Name, le.Field, tt.section, tt.entry, tt.entName, tt.field, err)
			}
			if len(err.Error()) > 300 {
				t.Errorf("message is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestLoadErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := price.Load(strings.NewReader(`{"coins":[{"coin":"btc","usd":"1"}],"fiat":[{"code":"USD","per_usd":"1","decimals":2},{"code":"JPY","per_usd":"150","decimals":7}]}`))
	const want = `price table fiat entry 2 ("JPY"): field decimals: must be between 0 and 4, got 7`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

// TestDefault checks the embedded table: it loads, prices every coin of the
// default registry by symbol and by ticker, and covers the ISO 4217 codes
// with their minor units.
func TestDefault(t *testing.T) {
	t.Parallel()
	tab := price.Default()
	if tab.AsOf() == "" {
		t.Error("the embedded table has no as_of date")
	}
	for _, tk := range family.DefaultRegistry().All() {
		for _, key := range []string{tk.Ticker, tk.Coin} {
			if p, ok := tab.USD(key); !ok || p.Sign() <= 0 {
				t.Errorf("no USD price for %q (ticker %s)", key, tk.Ticker)
			}
		}
	}
	for _, stable := range []string{"usdt", "usdc"} {
		if p, _ := tab.USD(stable); p.Sub(d("1")).Abs().GreaterThan(d("0.05")) {
			t.Errorf("%s priced at %s", stable, p)
		}
	}

	fiat := tab.Fiat()
	if len(fiat) < 150 {
		t.Errorf("%d currencies, want at least 150", len(fiat))
	}
	byCode := map[string]price.Currency{}
	for _, c := range fiat {
		byCode[c.Code] = c
	}
	for code, minor := range map[string]int32{
		"USD": 2, "EUR": 2, "GBP": 2, "JPY": 0, "CNY": 2, "BRL": 2, "INR": 2, "NGN": 2,
		"KWD": 3, "BHD": 3, "CLF": 4, "KRW": 0, "CHF": 2, "AUD": 2, "CAD": 2, "MXN": 2, "ZAR": 2,
		"TRY": 2, "RUB": 2, "IDR": 2, "VND": 0, "XOF": 0, "XAF": 0, "AED": 2, "SAR": 2,
	} {
		c, ok := byCode[code]
		switch {
		case !ok:
			t.Errorf("%s is missing", code)
		case c.Decimals != minor:
			t.Errorf("%s has %d decimals, want %d", code, c.Decimals, minor)
		}
	}
	// ISO 4217 minor units: every code not listed here has 2.
	notTwo := map[string]int32{
		"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
		"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
		"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
		"CLF": 4, "UYW": 4,
	}
	for _, c := range fiat {
		want, ok := notTwo[c.Code]
		if !ok {
			want = 2
		}
		if c.Decimals != want {
			t.Errorf("%s has %d decimals, ISO 4217 says %d", c.Code, c.Decimals, want)
		}
	}
	// Fixed pegs, to catch a slipped digit in the file.
	for code, rate := range map[string]string{"USD": "1", "AED": "3.6725", "SAR": "3.75", "HKD": "7.85", "BHD": "0.376", "XCD": "2.7", "PAB": "1"} {
		if !byCode[code].PerUSD.Equal(d(rate)) {
			t.Errorf("%s rate %s, want %s", code, byCode[code].PerUSD, rate)
		}
	}
	if eur, bgn := byCode["EUR"].PerUSD, byCode["BGN"].PerUSD; bgn.Div(eur).Sub(d("1.95583")).Abs().GreaterThan(d("0.01")) {
		t.Errorf("BGN/EUR = %s, want about 1.95583", bgn.Div(eur))
	}
}

func TestFiatIsACopy(t *testing.T) {
	t.Parallel()
	tab := small()
	f := tab.Fiat()
	f[0].PerUSD = d("1000")
	f[0].Code = "ZZZ"
	if got := tab.Fiat()[0]; got.Code != "BHD" || !got.PerUSD.Equal(d("0.5")) {
		t.Errorf("modifying Fiat's result changed the table: %+v", got)
	}
}

func TestFixed(t *testing.T) {
	t.Parallel()
	tab := price.Fixed(map[string]string{"btc": "1"}, nil)
	if len(tab.Fiat()) != len(price.Default().Fiat()) {
		t.Error("nil fiat does not give the default currencies")
	}
	for name, f := range map[string]func(){
		"bad price":      func() { price.Fixed(map[string]string{"btc": "x"}, nil) },
		"no prices":      func() { price.Fixed(nil, nil) },
		"no USD":         func() { price.Fixed(map[string]string{"btc": "1"}, []price.Currency{cur("EUR", "1", 2)}) },
		"bad minor unit": func() { price.Fixed(map[string]string{"btc": "1"}, []price.Currency{cur("USD", "1", 9)}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Fixed did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestDataFileIsLoadable reads data.json through Load, as an operator file
// would be, so the published format and the embedded copy cannot drift.
func TestDataFileIsLoadable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("data.json")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := price.Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := price.Convert(tab, d("10"), true), price.Convert(price.Default(), d("10"), true); got != want {
		t.Error("data.json and the embedded table differ")
	}
}

// fakeSource is a Source other than *Table.
type fakeSource struct {
	price decimal.Decimal
	fiat  []price.Currency
}

func (f fakeSource) USD(string) (decimal.Decimal, bool) { return f.price, true }
func (f fakeSource) Fiat() []price.Currency             { return f.fiat }

func ExampleConvert() {
	src := price.Fixed(map[string]string{"btc": "60000"}, []price.Currency{
		{Code: "USD", PerUSD: decimal.NewFromInt(1), Decimals: 2},
		{Code: "JPY", PerUSD: decimal.RequireFromString("150.25"), Decimals: 0},
		{Code: "KWD", PerUSD: decimal.RequireFromString("0.3071"), Decimals: 3},
	})
	usd, ok := price.USDValue(src, "btc", decimal.RequireFromString("0.0005"))
	fmt.Println(price.Convert(src, usd, ok))
	fmt.Println(price.Convert(src, decimal.Zero, false))
	// Output:
	// {"JPY":"4508","KWD":"9.213","USD":"30.00"}
	// {}
}

func BenchmarkConvert(b *testing.B) {
	src := price.Default()
	usd, ok := price.USDValue(src, "btc", d("0.01234567"))
	b.ReportAllocs()
	for b.Loop() {
		_ = price.Convert(src, usd, ok)
	}
}

func BenchmarkConvertOtherSource(b *testing.B) {
	src := fakeSource{price: d("1"), fiat: price.Default().Fiat()}
	usd := d("1234.56")
	b.ReportAllocs()
	for b.Loop() {
		_ = price.Convert(src, usd, true)
	}
}
