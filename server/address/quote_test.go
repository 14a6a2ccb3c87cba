package address

import (
	"bytes"
	"errors"
	"image/png"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
)

// Known-valid mainnet addresses.
const (
	btcAddr  = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	bchAddr  = "bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
	ethAddr  = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	trxAddr  = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
	solAddr  = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
	ltcAddr  = "ltc1qg82lqjw4z5ddwqkxgm4zeelq9f5v3kcz6ywpzj"
	dogeAddr = "DH5yaieqoZN36fDVciNyRueRGvGLR3mr7L"
)

var reg = family.DefaultRegistry()

func tk(t testing.TB, ticker string) chains.Ticker {
	t.Helper()
	x, ok := reg.Lookup(ticker)
	if !ok {
		t.Fatalf("no ticker %s", ticker)
	}
	return x
}

func lookup(s string) (chains.Ticker, error) { return reg.Get(s) }

// testPrices are fixed rates, independent of the embedded table.
var testPrices = price.Fixed(map[string]string{"btc": "50000", "usdt": "1", "eth": "2000", "trx": "0.25"}, []price.Currency{
	{Code: "EUR", PerUSD: decimal.RequireFromString("0.9"), Decimals: 2},
	{Code: "JPY", PerUSD: decimal.RequireFromString("150"), Decimals: 0},
	{Code: "USD", PerUSD: decimal.NewFromInt(1), Decimals: 2},
})

func wantInvalid(t *testing.T, err error, want string) {
	t.Helper()
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("error %v, want an *InvalidError %q", err, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to contain %q", err, want)
	}
}

func TestParseAmount(t *testing.T) {
	rows := []struct {
		name, raw string
		places    int32
		want      string
		wantErr   string
	}{
		{"integer", "12", 8, "12", ""},
		{"fraction", "0.00000001", 8, "0.00000001", ""},
		{"trailing zeros do not count", "1.500000000000", 2, "1.5", ""},
		{"leading zeros", "007.5", 8, "7.5", ""},
		{"empty", "", 8, "", "value: is required"},
		{"zero", "0", 8, "", "value: must be positive"},
		{"zero fraction", "0.000", 8, "", "value: must be positive"},
		{"negative", "-1", 8, "", "is not a decimal number"},
		{"plus", "+1", 8, "", "is not a decimal number"},
		{"exponent", "1e5", 8, "", "is not a decimal number"},
		{"comma", "1,5", 8, "", "is not a decimal number"},
		{"space", " 1", 8, "", "is not a decimal number"},
		{"bare point", ".5", 8, "", "is not a decimal number"},
		{"trailing point", "5.", 8, "", "is not a decimal number"},
		{"too precise", "0.000000001", 8, "", "more than 8 decimal places"},
		{"zero places", "1.5", 0, "", "more than 0 decimal places"},
		{"too large", strings.Repeat("9", 31), 8, "", "more than 30 digits"},
		{"largest", strings.Repeat("9", 30), 8, strings.Repeat("9", 30), ""},
		{"non-ascii digits", "١", 8, "", "is not a decimal number"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := ParseAmount("value", r.raw, r.places)
			if r.wantErr != "" {
				wantInvalid(t, err, r.wantErr)
				return
			}
			if err != nil || got.String() != r.want {
				t.Fatalf("got %s, %v; want %s", got, err, r.want)
			}
		})
	}
}

func TestPaymentURI(t *testing.T) {
	amt := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	rows := []struct {
		name, ticker, addr string
		amount             *decimal.Decimal
		want               string
	}{
		{"btc", "btc", btcAddr, amt("0.01"), "bitcoin:" + btcAddr + "?amount=0.01"},
		{"btc without amount", "btc", btcAddr, nil, "bitcoin:" + btcAddr},
		{"ltc", "ltc", ltcAddr, amt("1.5"), "litecoin:" + ltcAddr + "?amount=1.5"},
		{"doge", "doge", dogeAddr, amt("100"), "dogecoin:" + dogeAddr + "?amount=100"},
		{"bch keeps its prefix", "bch", bchAddr, amt("0.2"), bchAddr + "?amount=0.2"},
		{"bch without prefix", "bch", strings.TrimPrefix(bchAddr, "bitcoincash:"), nil, bchAddr},
		{"eth in wei", "eth", ethAddr, amt("0.01"), "ethereum:" + ethAddr + "?value=10000000000000000"},
		{"erc20 transfer", "erc20/usdt", ethAddr, amt("12.5"), "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7/transfer?address=" + ethAddr + "&uint256=12500000"},
		{"erc20 without amount", "erc20/usdt", ethAddr, nil, "ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7/transfer?address=" + ethAddr},
		{"bep20 names its chain", "bep20/usdt", ethAddr, amt("1"), "ethereum:0x55d398326f99059fF775485246999027B3197955@56/transfer?address=" + ethAddr + "&uint256=1000000000000000000"},
		{"polygon native", "polygon/pol", ethAddr, amt("2"), "ethereum:" + ethAddr + "@137?value=2000000000000000000"},
		{"trx", "trx", trxAddr, amt("10"), "tron:" + trxAddr + "?amount=10"},
		{"trc20", "trc20/usdt", trxAddr, amt("12.5"), "tron:" + trxAddr + "?amount=12.5&token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		{"trc20 without amount", "trc20/usdt", trxAddr, nil, "tron:" + trxAddr + "?token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"},
		{"sol", "sol", solAddr, amt("0.5"), "solana:" + solAddr + "?amount=0.5"},
		{"spl", "sol/usdc", solAddr, amt("3"), "solana:" + solAddr + "?amount=3&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := PaymentURI(tk(t, r.ticker), r.addr, r.amount)
			if err != nil || got != r.want {
				t.Fatalf("got %q, %v\nwant %q", got, err, r.want)
			}
		})
	}
	unknown := chains.Ticker{Ticker: "base", Network: "base", Coin: "base", Family: chains.FamilyEVM, Decimals: 18}
	_, err := PaymentURI(unknown, ethAddr, nil)
	wantInvalid(t, err, "ticker: no payment URI scheme is known for network base")
}

func TestParseQRCode(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	rows := []struct {
		name, ticker, addr, value string
		size                      *int32
		wantSize                  int
		wantErr                   string
	}{
		{"defaults", "btc", btcAddr, "", nil, DefaultQRSize, ""},
		{"smallest", "btc", btcAddr, "0.1", i32(MinQRSize), MinQRSize, ""},
		{"largest", "btc", btcAddr, "0.1", i32(MaxQRSize), MaxQRSize, ""},
		{"too small", "btc", btcAddr, "", i32(63), 0, "size: must be between 64 and 1024 pixels, got 63"},
		{"too large", "btc", btcAddr, "", i32(1025), 0, "size: must be between 64 and 1024 pixels, got 1025"},
		{"negative", "btc", btcAddr, "", i32(-1), 0, "size: must be between"},
		{"missing address", "btc", "", "", nil, 0, "address: is required"},
		{"address of another network", "btc", trxAddr, "", nil, 0, "address: "},
		{"value too precise for usdt", "trc20/usdt", trxAddr, "1.0000001", nil, 0, "value: \"1.0000001\" has more than 6 decimal places"},
		{"value not a number", "btc", btcAddr, "abc", nil, 0, "value: \"abc\" is not a decimal number"},
		{"value zero", "btc", btcAddr, "0", nil, 0, "value: must be positive"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := ParseQRCode(tk(t, r.ticker), r.addr, r.value, r.size)
			if r.wantErr != "" {
				wantInvalid(t, err, r.wantErr)
				return
			}
			if err != nil || got.Size != r.wantSize {
				t.Fatalf("got %+v, %v; want size %d", got, err, r.wantSize)
			}
		})
	}
}

func TestDrawQRCode(t *testing.T) {
	for _, size := range []int{MinQRSize, DefaultQRSize, MaxQRSize} {
		// The longest URI: an EIP-681 token transfer with the largest amount.
		uri, err := PaymentURI(tk(t, "bep20/usdt"), ethAddr, ptr(decimal.RequireFromString(strings.Repeat("9", 30)+".123456789012345678")))
		if err != nil {
			t.Fatal(err)
		}
		b, err := DrawQRCode(QRRequest{URI: uri, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if w, h := img.Bounds().Dx(), img.Bounds().Dy(); w != h || w < size {
			t.Errorf("size %d: image is %dx%d", size, w, h)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestEstimateFee(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	rows := []struct {
		name, ticker string
		addresses    *int32
		priority     string
		wantCost     string
		wantFiat     map[string]string
		wantErr      string
	}{
		{"btc", "btc", nil, "", "0.00002", map[string]string{"EUR": "0.90", "JPY": "150", "USD": "1.00"}, ""},
		{"several destinations, fast: 10 blocks", "btc", i32(20), "FAST", "0.00005", map[string]string{"EUR": "2.25", "JPY": "375", "USD": "2.50"}, ""},
		{"btc economic: 75 blocks", "btc", nil, "economic", "0.00000667", map[string]string{"EUR": "0.30", "JPY": "50", "USD": "0.33"}, ""},
		{"eth economic: 95% of the gas price", "eth", nil, "economic", "0.000475", map[string]string{"EUR": "0.86", "JPY": "143", "USD": "0.95"}, ""},
		{"token", "trc20/usdt", i32(1), "economic", "3", map[string]string{"EUR": "2.70", "JPY": "450", "USD": "3.00"}, ""},
		{"no price: no fiat", "doge", nil, "default", "0.02", map[string]string{}, ""},
		{"zero addresses", "btc", i32(0), "", "", nil, "addresses: must be between 1 and 20, got 0"},
		{"too many addresses", "btc", i32(21), "", "", nil, "addresses: must be between 1 and 20, got 21"},
		{"unknown priority", "btc", nil, "warp", "", nil, `priority: must be one of fast, default, economic, x-economic, xx-economic, xxx-economic, xxxx-economic, xxxxx-economic for btc, got "warp"`},
		{"a level another coin has", "ltc", nil, "x-economic", "", nil, `priority: must be one of fast, default, economic for ltc, got "x-economic"`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := EstimateFee(tk(t, r.ticker), testPrices, r.addresses, r.priority)
			if r.wantErr != "" {
				wantInvalid(t, err, r.wantErr)
				return
			}
			if err != nil || got.Cost.String() != r.wantCost {
				t.Fatalf("got %+v, %v; want cost %s", got, err, r.wantCost)
			}
			if len(got.Fiat) != len(r.wantFiat) {
				t.Fatalf("fiat %v, want %v", got.Fiat, r.wantFiat)
			}
			for k, v := range r.wantFiat {
				if got.Fiat[k] != v {
					t.Errorf("fiat %s = %q, want %q", k, got.Fiat[k], v)
				}
			}
		})
	}
}

func TestConvert(t *testing.T) {
	rows := []struct {
		name, ticker, value, from string
		wantCoin, wantRate        string
		wantErr                   string
	}{
		{"usd to btc", "btc", "100", "USD", "0.002", "50000", ""},
		{"lower-case code", "btc", "100", "usd", "0.002", "50000", ""},
		{"eur to btc", "btc", "90", "EUR", "0.002", "45000", ""},
		{"jpy to usdt, rounded to 6 places", "trc20/usdt", "1000", "jpy", "6.666667", "150", ""},
		{"btc to usdt", "erc20/usdt", "0.001", "btc", "50", "0.00002", ""},
		{"ticker with underscore", "btc", "1", "trc20_usdt", "0.00002", "50000", ""},
		{"ticker with slash", "btc", "1", "trc20/usdt", "0.00002", "50000", ""},
		{"coin to itself", "trx", "7.5", "trx", "7.5", "1", ""},
		{"too small rounds to zero", "btc", "0.0000005", "usd", "0", "50000", ""},
		{"unknown from", "btc", "1", "XYZ", "", "", `from: "XYZ" is neither a fiat currency code`},
		{"unknown network", "btc", "1", "foo_usdt", "", "", `from: "foo_usdt" is neither`},
		{"unpriced coin", "btc", "1", "doge", "", "", `from: "doge" is neither`},
		{"empty from", "btc", "1", "", "", "", "from: is required"},
		{"unpriced ticker", "doge", "1", "usd", "", "", "ticker: doge has no price"},
		{"negative value", "btc", "-1", "usd", "", "", "value: \"-1\" is not a decimal number"},
		{"too precise", "btc", "0." + strings.Repeat("1", 19), "usd", "", "", "more than 18 decimal places"},
		{"missing value", "btc", "", "usd", "", "", "value: is required"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, err := Convert(tk(t, r.ticker), lookup, testPrices, r.value, r.from)
			if r.wantErr != "" {
				wantInvalid(t, err, r.wantErr)
				return
			}
			if err != nil || got.ValueCoin.String() != r.wantCoin || got.ExchangeRate.String() != r.wantRate {
				t.Fatalf("got %s at %s, %v; want %s at %s", got.ValueCoin, got.ExchangeRate, err, r.wantCoin, r.wantRate)
			}
		})
	}
}

// FuzzParseQRCode checks that the QR code parameters never panic, refuse
// only with an *InvalidError, and accept only a positive value within the
// coin's precision, a size within bounds, and a URI that starts with the
// family's scheme and carries the amount exactly.
func FuzzParseQRCode(f *testing.F) {
	for _, s := range []struct {
		ticker, addr, value string
		size                int32
	}{
		{"btc", btcAddr, "0.01", 300},
		{"trc20/usdt", trxAddr, "12.5", 64},
		{"erc20/usdt", ethAddr, "", 1024},
		{"sol/usdc", solAddr, "1e5", 1025},
		{"bch", bchAddr, "0.000000001", 0},
		{"eth", ethAddr, "-1", -5},
		{"btc", "", "00.10", 63},
	} {
		f.Add(s.ticker, s.addr, s.value, s.size)
	}
	f.Fuzz(func(t *testing.T, ticker, addr, value string, size int32) {
		x, ok := reg.Lookup(ticker)
		if !ok {
			return
		}
		got, err := ParseQRCode(x, addr, value, &size)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("error %v is not an *InvalidError", err)
			}
			return
		}
		if got.Size < MinQRSize || got.Size > MaxQRSize {
			t.Fatalf("size %d accepted", got.Size)
		}
		if value != "" {
			v, err := decimal.NewFromString(value)
			if err != nil || !v.IsPositive() || !v.Equal(v.Truncate(x.Decimals)) {
				t.Fatalf("value %q accepted for %s", value, x.Ticker)
			}
		}
		if !strings.Contains(got.URI, ":") || strings.ContainsAny(got.URI, " #\n") {
			t.Fatalf("URI %q", got.URI)
		}
	})
}

// FuzzEstimateFee checks that estimate parameters never panic and refuse
// only with an *InvalidError naming addresses or priority.
func FuzzEstimateFee(f *testing.F) {
	f.Add("btc", int32(1), "default")
	f.Add("trc20/usdt", int32(21), "FAST")
	f.Add("doge", int32(0), "warp")
	f.Fuzz(func(t *testing.T, ticker string, addresses int32, priority string) {
		x, ok := reg.Lookup(ticker)
		if !ok {
			return
		}
		got, err := EstimateFee(x, testPrices, &addresses, priority)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || (inv.Param != "addresses" && inv.Param != "priority") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if addresses < 1 || addresses > MaxDestinations || got.Cost.IsNegative() {
			t.Fatalf("accepted %d addresses, cost %s", addresses, got.Cost)
		}
	})
}

// FuzzConvert checks that conversions never panic, refuse only with an
// *InvalidError naming value, from or ticker, and give a non-negative value
// within the coin's precision and a positive rate.
func FuzzConvert(f *testing.F) {
	for _, s := range [][3]string{
		{"btc", "100", "USD"}, {"trc20/usdt", "0.001", "btc"}, {"btc", "1", "trc20_usdt"},
		{"btc", "1e3", "usd"}, {"btc", "1", "XYZ"}, {"doge", "1", "usd"}, {"btc", "9" + strings.Repeat("9", 40), "jpy"},
		{"btc", "1", "sol_sol"}, {"btc", "1", "_"}, {"btc", "1", "/"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, ticker, value, from string) {
		x, ok := reg.Lookup(ticker)
		if !ok {
			return
		}
		got, err := Convert(x, lookup, testPrices, value, from)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || (inv.Param != "value" && inv.Param != "from" && inv.Param != "ticker") {
				t.Fatalf("error %v", err)
			}
			return
		}
		if got.ValueCoin.IsNegative() || !got.ValueCoin.Equal(got.ValueCoin.Truncate(x.Decimals)) || !got.ExchangeRate.IsPositive() {
			t.Fatalf("got %s at %s", got.ValueCoin, got.ExchangeRate)
		}
	})
}
