package price

import (
	"errors"
	"os"
	"testing"

	"github.com/shopspring/decimal"
)

// FuzzParseAnswer feeds one body to the four providers' answer parsers
// (Coinbase, CoinGecko, Kraken, Frankfurter) and checks that none panics,
// that a refusal is a *ProviderError naming its provider, and that every
// price or rate accepted is in the table's range: greater than 0, below
// 10^15, with at most MaxRatePlaces decimal places.
func FuzzParseAnswer(f *testing.F) {
	for _, name := range []string{
		"coinbase_exchange_rates.json",
		"coingecko_simple_price.json",
		"kraken_ticker.json",
		"frankfurter_latest.json",
	} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"data":{"currency":"USD","rates":{"BTC":"1e-30","EUR":"0.9","USD":"1"}}}`,
		`{"data":{"currency":"USD","rates":{"BTC":"-2","EUR":"1e15"}}}`,
		`{"data":{"currency":"EUR","rates":{}}}`,
		`{"bitcoin":{"usd":1e400},"ethereum":{"usd":"12"},"tron":null}`,
		`{"bitcoin":{"usd":0.0000000000000000001}}`,
		`{"error":["EService:Unavailable"],"result":{}}`,
		`{"error":[],"result":{"XXBTZUSD":{"c":["-1","0"]},"XBTUSD":{"c":[]}}}`,
		`{"amount":1,"base":"USD","date":"2024-02-30","rates":{"EUR":0.9}}`,
		`{"amount":2,"base":"USD","date":"2024-11-25","rates":{"usd":1,"EUR":"0.9"}}`,
		`{"base":"USD","date":"2024-11-25","rates":{"USD":1.0,"EUR":1e-19,"JPY":999999999999999.9}}`,
		`null`, `[]`, `{}`, ``, `{"data":null}`,
	} {
		f.Add([]byte(s))
	}
	codeOf := map[string]string{"btc": "BTC", "eth": "ETH", "usdt": "USDT", "trx": "TRX"}
	idOf := map[string]string{"btc": "bitcoin", "eth": "ethereum", "trx": "tron", "usdt": "tether"}
	want := map[string]KrakenPair{
		"btc": {Pair: "XBTUSD", Keys: []string{"XXBTZUSD", "XBTUSD"}},
		"eth": {Pair: "ETHUSD", Keys: []string{"XETHZUSD"}},
		"sol": {Pair: "SOLUSD"},
	}
	fiat := []string{"USD", "EUR", "JPY", "GBP"}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := parseCoinbase(body, codeOf, fiat)
		if checkRefusal(t, "coinbase", err) {
			checkPrices(t, "coinbase USD", q.USD, codeOf)
			checkPrices(t, "coinbase fiat", q.Fiat, nil)
			for code := range q.Fiat {
				if code == "USD" || !validCode(code) {
					t.Errorf("coinbase: fiat rate of %q accepted", code)
				}
			}
		}
		usd, err := parseCoinGecko(body, idOf)
		if checkRefusal(t, "coingecko", err) {
			checkPrices(t, "coingecko", usd, idOf)
		}
		usd, err = parseKraken(body, want)
		if checkRefusal(t, "kraken", err) {
			wanted := map[string]string{}
			for sym, p := range want {
				wanted[sym] = p.Pair
			}
			checkPrices(t, "kraken", usd, wanted)
		}
		rates, err := parseFrankfurter(body)
		if checkRefusal(t, "frankfurter", err) {
			checkPrices(t, "frankfurter", rates, nil)
			for code := range rates {
				if code == "USD" || !validCode(code) {
					t.Errorf("frankfurter: rate of %q accepted", code)
				}
			}
		}
	})
}

// checkRefusal reports whether err is nil; a non-nil err must be a
// *ProviderError naming provider.
func checkRefusal(t *testing.T, provider string, err error) bool {
	t.Helper()
	if err == nil {
		return true
	}
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Provider != provider {
		t.Errorf("%s: refusal %v (%T) is not a *ProviderError of %s", provider, err, err, provider)
	}
	return false
}

// checkPrices fails t for any price of got outside the table's range and,
// when asked is not nil, for any symbol not asked for.
func checkPrices(t *testing.T, what string, got map[string]decimal.Decimal, asked map[string]string) {
	t.Helper()
	for sym, p := range got {
		if asked != nil {
			if _, ok := asked[sym]; !ok {
				t.Errorf("%s: price of %q, which was not asked for", what, sym)
			}
		}
		if p.Sign() <= 0 || p.GreaterThanOrEqual(maxRate) || !p.Equal(p.Truncate(MaxRatePlaces)) {
			t.Errorf("%s: %s accepted at %s, outside (0, 10^15) at %d places", what, sym, p, MaxRatePlaces)
		}
	}
}
