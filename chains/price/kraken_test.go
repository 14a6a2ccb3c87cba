package price_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/price"
)

func TestKrakenDocumentedAnswer(t *testing.T) {
	t.Parallel()
	srv, seen := serve(t, 200, testdata(t, "kraken_ticker.json"))
	p, err := price.NewKraken(price.KrakenConfig{BaseURL: srv.URL, Client: srv.Client(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Fetch(t.Context(), append([]string{"xyz"}, registryCoins...))
	if err != nil {
		t.Fatal(err)
	}
	if seen.path != "/0/public/Ticker" {
		t.Errorf("path %q", seen.path)
	}
	// bnb has no pair: asking for one Kraken does not list would fail the
	// whole request.
	wantQuery := "pair=BCHUSD%2CETHUSD%2CLTCUSD%2CPOLUSD%2CSOLUSD%2CTRXUSD%2CUSDCUSD%2CUSDTZUSD%2CXBTUSD%2CXDGUSD"
	if seen.query != wantQuery {
		t.Errorf("query\n%s\nwant\n%s", seen.query, wantQuery)
	}
	// The last trade prices, found under the names Kraken answers with
	// (XXBTZUSD for XBTUSD).
	wantPrices(t, "USD", q.USD, map[string]string{
		"btc": "67189.9", "bch": "489.45", "doge": "0.1653", "eth": "3512.45", "ltc": "86.03",
		"pol": "0.1904", "sol": "155.3", "trx": "0.28005", "usdc": "0.9999", "usdt": "1.0001",
	})
	if q.Fiat != nil {
		t.Errorf("Kraken quoted fiat %v", q.Fiat)
	}
	if !q.Time.Equal(fixedNow) {
		t.Errorf("time %v", q.Time)
	}
	if coins, fiat := p.Covers(); !coins || fiat {
		t.Errorf("Covers() = %v, %v", coins, fiat)
	}
}

func TestKrakenRequest(t *testing.T) {
	t.Parallel()
	t.Run("no known coin asks nothing", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 500, "")
		p, _ := price.NewKraken(price.KrakenConfig{BaseURL: srv.URL, Client: srv.Client(), Now: now})
		q, err := p.Fetch(t.Context(), []string{"bnb", "xyz"})
		if err != nil || len(q.USD) != 0 || seen.path != "" {
			t.Errorf("quote %v, error %v, request %q", q, err, seen.path)
		}
	})
	t.Run("own pairs", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 200, `{"error":[],"result":{"WBTCUSD":{"c":["66000.1","0.1"]}}}`)
		p, _ := price.NewKraken(price.KrakenConfig{BaseURL: srv.URL + "/", Client: srv.Client(),
			Pairs: map[string]price.KrakenPair{"wbtc": {Pair: "WBTCUSD"}}})
		q, err := p.Fetch(t.Context(), []string{"btc", "wbtc"})
		if err != nil {
			t.Fatal(err)
		}
		if seen.query != "pair=WBTCUSD" {
			t.Errorf("query %q", seen.query)
		}
		wantPrices(t, "USD", q.USD, map[string]string{"wbtc": "66000.1"})
	})
}

func TestKrakenAnswers(t *testing.T) {
	t.Parallel()
	wrap := func(result string) string { return `{"error":[],"result":{` + result + `}}` }
	tests := []struct {
		name   string
		body   string
		want   map[string]string
		field  string
		target error
	}{
		{name: "pair missing is not quoted", body: wrap(`"XETHZUSD":{"c":["3500.1","1"]}`), want: map[string]string{"eth": "3500.1"}},
		{name: "the name asked for is accepted too", body: wrap(`"XBTUSD":{"c":["67000","1"]}`), want: map[string]string{"btc": "67000"}},
		{name: "null pair is not quoted", body: wrap(`"XXBTZUSD":null`), want: map[string]string{}},
		{name: "unasked pairs and other fields ignored", body: wrap(`"XXBTZUSD":{"c":["1","1"],"o":"x","new":[1]},"XMRUSD":{"c":["garbage"]}`), want: map[string]string{"btc": "1"}},
		{name: "error null", body: `{"error":null,"result":{"XXBTZUSD":{"c":["2","1"]}}}`, want: map[string]string{"btc": "2"}},
		{name: "rounded to 18 places", body: wrap(`"XXBTZUSD":{"c":["0.12345678901234567891","1"]}`), want: map[string]string{"btc": "0.123456789012345679"}},

		{name: "Kraken's error", body: `{"error":["EQuery:Unknown asset pair"]}`, field: "error", target: price.ErrUnavailable},
		{name: "rate limited", body: `{"error":["EAPI:Rate limit exceeded"],"result":{}}`, field: "error", target: price.ErrUnavailable},
		{name: "not an object", body: `[1]`, field: "", target: price.ErrBadQuote},
		{name: "error not strings", body: `{"error":[1],"result":{}}`, field: "error", target: price.ErrBadQuote},
		{name: "result missing", body: `{"error":[]}`, field: "result", target: price.ErrBadQuote},
		{name: "result an array", body: `{"error":[],"result":[]}`, field: "result", target: price.ErrBadQuote},
		{name: "pair not an object", body: wrap(`"XXBTZUSD":"67000"`), field: "result.XXBTZUSD", target: price.ErrBadQuote},
		{name: "last trade missing", body: wrap(`"XXBTZUSD":{"a":["1","1","1"]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "last trade empty", body: wrap(`"XXBTZUSD":{"c":[]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "last trade a number", body: wrap(`"XXBTZUSD":{"c":[67000,1]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "zero", body: wrap(`"XXBTZUSD":{"c":["0.00000","1"]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "negative", body: wrap(`"XXBTZUSD":{"c":["-1","1"]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "too large", body: wrap(`"XXBTZUSD":{"c":["1e15","1"]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
		{name: "one bad value fails the whole answer", body: wrap(`"XETHZUSD":{"c":["3500","1"]},"XXBTZUSD":{"c":["x","1"]}`), field: "result.XXBTZUSD.c", target: price.ErrBadQuote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, 200, tt.body)
			p, _ := price.NewKraken(price.KrakenConfig{BaseURL: srv.URL, Client: srv.Client(), Now: now})
			q, err := p.Fetch(t.Context(), []string{"btc", "eth"})
			if tt.target != nil {
				wantProviderError(t, err, "kraken", tt.field, tt.target)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPrices(t, "USD", q.USD, tt.want)
		})
	}
}

func TestKrakenConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]price.KrakenConfig{
		"bad URL":    {BaseURL: "api.kraken.com"},
		"query":      {BaseURL: "https://api.kraken.com/?x=1"},
		"bad symbol": {Pairs: map[string]price.KrakenPair{"BTC": {Pair: "XBTUSD"}}},
		"bad pair":   {Pairs: map[string]price.KrakenPair{"btc": {Pair: "XBT,USD"}}},
		"empty pair": {Pairs: map[string]price.KrakenPair{"btc": {}}},
		"bad key":    {Pairs: map[string]price.KrakenPair{"btc": {Pair: "XBTUSD", Keys: []string{"xxbtzusd"}}}},
	} {
		if _, err := price.NewKraken(cfg); !errors.Is(err, price.ErrInvalidConfig) || !strings.Contains(err.Error(), "KrakenConfig.") {
			t.Errorf("%s: error %v, want ErrInvalidConfig naming the field", name, err)
		}
	}
	if _, err := price.NewKraken(price.KrakenConfig{}); err != nil {
		t.Errorf("defaults: %v", err)
	}
	pairs := price.KrakenPairs()
	for _, coin := range registryCoins {
		if _, ok := pairs[coin]; !ok && coin != "bnb" {
			t.Errorf("%s: no Kraken pair", coin)
		}
	}
}
