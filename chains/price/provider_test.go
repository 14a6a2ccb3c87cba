package price_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
)

// fixedNow is the clock of provider tests.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func now() time.Time { return fixedNow }

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// request is what a fake server saw.
type request struct {
	path, query string
	header      http.Header
}

// serve starts a fake provider answering every request with status and
// body, and records the last request.
func serve(t *testing.T, status int, body string) (*httptest.Server, *request) {
	t.Helper()
	seen := &request{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.path, seen.query, seen.header = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

// wantPrices compares a quote's map with decimal strings.
func wantPrices(t *testing.T, what string, got map[string]decimal.Decimal, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d entries %v, want %d %v", what, len(got), got, len(want), want)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !g.Equal(d(w)) {
			t.Errorf("%s[%s] = %s (present %v), want %s", what, k, g, ok, w)
		}
	}
}

// wantProviderError checks err is a *ProviderError of provider about field
// wrapping target.
func wantProviderError(t *testing.T, err error, provider, field string, target error) {
	t.Helper()
	var pe *price.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *ProviderError", err, err)
	}
	if pe.Provider != provider || pe.Field != field {
		t.Errorf("error %q names provider %q field %q, want %q %q", err, pe.Provider, pe.Field, provider, field)
	}
	if !errors.Is(err, target) {
		t.Errorf("error %q does not wrap %v", err, target)
	}
}

var registryCoins = []string{"bch", "bnb", "btc", "doge", "eth", "ltc", "pol", "sol", "trx", "usdc", "usdt"}

func TestCoinGeckoDocumentedAnswer(t *testing.T) {
	t.Parallel()
	srv, seen := serve(t, 200, testdata(t, "coingecko_simple_price.json"))
	p, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL + "/api/v3", Client: srv.Client(), APIKey: "demo-key", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Fetch(t.Context(), append([]string{"xyz"}, registryCoins...))
	if err != nil {
		t.Fatal(err)
	}
	if seen.path != "/api/v3/simple/price" {
		t.Errorf("path %q", seen.path)
	}
	wantQuery := "ids=binancecoin%2Cbitcoin%2Cbitcoin-cash%2Cdogecoin%2Cethereum%2Clitecoin%2Cpolygon-ecosystem-token%2Csolana%2Ctether%2Ctron%2Cusd-coin&vs_currencies=usd"
	if seen.query != wantQuery {
		t.Errorf("query\n%s\nwant\n%s", seen.query, wantQuery)
	}
	if got := seen.header.Get("x-cg-demo-api-key"); got != "demo-key" {
		t.Errorf("x-cg-demo-api-key %q", got)
	}
	if seen.header.Get("x-cg-pro-api-key") != "" {
		t.Error("pro key header sent for a demo key")
	}
	wantPrices(t, "USD", q.USD, map[string]string{
		"btc": "67187.3358936566", "bch": "489.12", "bnb": "655.3", "doge": "0.165234", "eth": "3512.1",
		"ltc": "86.01", "pol": "0.1902", "sol": "155.27", "usdt": "1.0001", "trx": "0.28", "usdc": "0.999891",
	})
	if q.Fiat != nil {
		t.Errorf("CoinGecko quoted fiat %v", q.Fiat)
	}
	if !q.Time.Equal(fixedNow) {
		t.Errorf("time %v", q.Time)
	}
}

func TestCoinGeckoRequest(t *testing.T) {
	t.Parallel()
	t.Run("pro key", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 200, `{}`)
		p, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL, Client: srv.Client(), APIKey: "pro-key", Pro: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Fetch(t.Context(), []string{"btc"}); err != nil {
			t.Fatal(err)
		}
		if seen.header.Get("x-cg-pro-api-key") != "pro-key" || seen.header.Get("x-cg-demo-api-key") != "" {
			t.Errorf("headers %v", seen.header)
		}
		if strings.Contains(seen.query, "key") {
			t.Errorf("the key is in the query %q", seen.query)
		}
	})
	t.Run("keyless", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 200, `{}`)
		p, _ := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL, Client: srv.Client()})
		if _, err := p.Fetch(t.Context(), []string{"btc"}); err != nil {
			t.Fatal(err)
		}
		if seen.header.Get("x-cg-demo-api-key") != "" || seen.header.Get("x-cg-pro-api-key") != "" {
			t.Errorf("headers %v", seen.header)
		}
	})
	t.Run("no known coin asks nothing", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 500, ``)
		p, _ := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL, Client: srv.Client()})
		q, err := p.Fetch(t.Context(), []string{"xyz"})
		if err != nil || len(q.USD) != 0 || seen.path != "" {
			t.Errorf("quote %v, error %v, request %q", q, err, seen.path)
		}
	})
	t.Run("own ids", func(t *testing.T) {
		t.Parallel()
		srv, seen := serve(t, 200, `{"wrapped-bitcoin":{"usd":66000}}`)
		p, _ := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL, Client: srv.Client(), IDs: map[string]string{"wbtc": "wrapped-bitcoin"}})
		q, err := p.Fetch(t.Context(), []string{"btc", "wbtc"})
		if err != nil {
			t.Fatal(err)
		}
		if seen.query != "ids=wrapped-bitcoin&vs_currencies=usd" {
			t.Errorf("query %q", seen.query)
		}
		wantPrices(t, "USD", q.USD, map[string]string{"wbtc": "66000"})
	})
}

func TestCoinGeckoAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		want  map[string]string // on success
		field string            // on error
	}{
		{name: "id missing is not quoted", body: `{"ethereum":{"usd":3500}}`, want: map[string]string{"eth": "3500"}},
		{name: "usd missing or null is not quoted", body: `{"bitcoin":{"eur":1},"ethereum":{"usd":null},"tether":null}`, want: map[string]string{}},
		{name: "unasked ids and other fields ignored", body: `{"bitcoin":{"usd":1,"usd_24h_change":null,"eur":"x"},"monero":{"usd":"garbage"}}`, want: map[string]string{"btc": "1"}},
		{name: "exponent", body: `{"bitcoin":{"usd":6.7E4}}`, want: map[string]string{"btc": "67000"}},
		{name: "rounded to 18 places", body: `{"bitcoin":{"usd":0.12345678901234567891}}`, want: map[string]string{"btc": "0.123456789012345679"}},
		{name: "empty object", body: `{}`, want: map[string]string{}},
		{name: "not JSON", body: `<html>rate limited</html>`, field: ""},
		{name: "array", body: `[{"bitcoin":{"usd":1}}]`, field: ""},
		{name: "null", body: `null`, field: ""},
		{name: "entry not an object", body: `{"bitcoin":67000}`, field: "bitcoin"},
		{name: "price as a string", body: `{"bitcoin":{"usd":"67000"}}`, field: "bitcoin.usd"},
		{name: "price as a bool", body: `{"bitcoin":{"usd":true}}`, field: "bitcoin.usd"},
		{name: "zero", body: `{"bitcoin":{"usd":0}}`, field: "bitcoin.usd"},
		{name: "negative", body: `{"bitcoin":{"usd":-67000}}`, field: "bitcoin.usd"},
		{name: "zero at 18 places", body: `{"bitcoin":{"usd":1e-19}}`, field: "bitcoin.usd"},
		{name: "too large", body: `{"bitcoin":{"usd":1e15}}`, field: "bitcoin.usd"},
		{name: "absurd exponent", body: `{"bitcoin":{"usd":1e999999999}}`, field: "bitcoin.usd"},
		{name: "one bad value fails the whole answer", body: `{"ethereum":{"usd":3500},"bitcoin":{"usd":-1}}`, field: "bitcoin.usd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, 200, tt.body)
			p, _ := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: srv.URL, Client: srv.Client()})
			q, err := p.Fetch(t.Context(), []string{"btc", "eth", "usdt"})
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				wantPrices(t, "USD", q.USD, tt.want)
				return
			}
			wantProviderError(t, err, "coingecko", tt.field, price.ErrBadQuote)
			if q.USD != nil {
				t.Errorf("failed fetch returned prices %v", q.USD)
			}
		})
	}
}

func TestCoinbaseDocumentedAnswer(t *testing.T) {
	t.Parallel()
	srv, seen := serve(t, 200, testdata(t, "coinbase_exchange_rates.json"))
	p, err := price.NewCoinbase(price.CoinbaseConfig{BaseURL: srv.URL, Client: srv.Client(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Fetch(t.Context(), append([]string{"xyz"}, registryCoins...))
	if err != nil {
		t.Fatal(err)
	}
	if seen.path != "/v2/exchange-rates" || seen.query != "currency=USD" {
		t.Errorf("request %s?%s", seen.path, seen.query)
	}
	// Prices are 1/rate rounded half away from zero to 18 places
	// (computed independently).
	wantPrices(t, "USD", q.USD, map[string]string{
		"btc":  "107000.000000267500000001",
		"bch":  "500",
		"doge": "0.165",
		"eth":  "2500",
		"ltc":  "86.956521739130434783",
		"pol":  "0.19",
		"sol":  "156.25",
		"trx":  "0.280000000000000002",
		"usdc": "1.0002000400080016",
		"usdt": "0.9998000399920016",
	})
	// Fiat: the embedded table's codes only (not XAU, not the crypto codes).
	wantPrices(t, "Fiat", q.Fiat, map[string]string{
		"AED": "3.6725", "AFN": "70", "BHD": "0.376", "EUR": "0.853", "GBP": "0.729", "JPY": "144.2", "KWD": "0.3055", "ZAR": "17.75",
	})
	if !q.Time.Equal(fixedNow) {
		t.Errorf("time %v", q.Time)
	}
}

func TestCoinbaseConfig(t *testing.T) {
	t.Parallel()
	body := `{"data":{"currency":"USD","rates":{"EUR":"0.9","JPY":"150","MATIC":"2","POL":"garbage"}}}`
	srv, _ := serve(t, 200, body)
	p, err := price.NewCoinbase(price.CoinbaseConfig{BaseURL: srv.URL + "/", Client: srv.Client(), Fiat: []string{"EUR"}, Symbols: map[string]string{"pol": "MATIC"}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Fetch(t.Context(), []string{"pol"})
	if err != nil {
		t.Fatal(err)
	}
	wantPrices(t, "USD", q.USD, map[string]string{"pol": "0.5"})
	wantPrices(t, "Fiat", q.Fiat, map[string]string{"EUR": "0.9"})
}

func TestCoinbaseAnswers(t *testing.T) {
	t.Parallel()
	wrap := func(rates string) string { return `{"data":{"currency":"USD","rates":{` + rates + `}}}` }
	tests := []struct {
		name     string
		body     string
		wantUSD  map[string]string
		wantFiat map[string]string
		field    string
	}{
		{name: "minimal", body: wrap(`"BTC":"0.00001","EUR":"0.9"`), wantUSD: map[string]string{"btc": "100000"}, wantFiat: map[string]string{"EUR": "0.9"}},
		{name: "nothing listed", body: wrap(``), wantUSD: map[string]string{}, wantFiat: map[string]string{}},
		{name: "null rate is not quoted", body: wrap(`"BTC":null,"EUR":null`), wantUSD: map[string]string{}, wantFiat: map[string]string{}},
		{name: "extra fields tolerated", body: `{"data":{"currency":"USD","rates":{"EUR":"0.9"},"new":1},"warnings":[]}`, wantUSD: map[string]string{}, wantFiat: map[string]string{"EUR": "0.9"}},
		{name: "fiat rate rounded to 18 places", body: wrap(`"EUR":"0.1234567890123456789"`), wantUSD: map[string]string{}, wantFiat: map[string]string{"EUR": "0.123456789012345679"}},
		{name: "not JSON", body: `Service Unavailable`, field: ""},
		{name: "data missing", body: `{"errors":[{"id":"not_found","message":"Not found"}]}`, field: "data"},
		{name: "data not an object", body: `{"data":[]}`, field: "data"},
		{name: "currency missing", body: `{"data":{"rates":{}}}`, field: "data.currency"},
		{name: "rates per another currency", body: `{"data":{"currency":"BTC","rates":{"USD":"67000"}}}`, field: "data.currency"},
		{name: "rates missing", body: `{"data":{"currency":"USD"}}`, field: "data.rates"},
		{name: "rates not an object", body: `{"data":{"currency":"USD","rates":"x"}}`, field: "data.rates"},
		{name: "USD not 1", body: wrap(`"USD":"1.1"`), field: "data.rates.USD"},
		{name: "coin rate as a number", body: wrap(`"BTC":0.00001`), field: "data.rates.BTC"},
		{name: "coin rate zero", body: wrap(`"BTC":"0"`), field: "data.rates.BTC"},
		{name: "coin rate negative", body: wrap(`"BTC":"-0.00001"`), field: "data.rates.BTC"},
		{name: "coin rate not a number", body: wrap(`"BTC":"n/a"`), field: "data.rates.BTC"},
		{name: "coin price too large", body: wrap(`"BTC":"0.000000000000001"`), field: "data.rates.BTC"},
		{name: "coin price zero at 18 places", body: wrap(`"BTC":"1e19"`), field: "data.rates.BTC"},
		{name: "fiat rate not a string", body: wrap(`"EUR":{}`), field: "data.rates.EUR"},
		{name: "fiat rate zero", body: wrap(`"EUR":"0.0"`), field: "data.rates.EUR"},
		{name: "fiat rate too large", body: wrap(`"EUR":"1000000000000000"`), field: "data.rates.EUR"},
		{name: "fiat rate too long", body: wrap(`"EUR":"` + strings.Repeat("1", 65) + `"`), field: "data.rates.EUR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, 200, tt.body)
			p, _ := price.NewCoinbase(price.CoinbaseConfig{BaseURL: srv.URL, Client: srv.Client(), Fiat: []string{"EUR", "USD"}})
			q, err := p.Fetch(t.Context(), []string{"btc"})
			if tt.wantUSD != nil {
				if err != nil {
					t.Fatal(err)
				}
				wantPrices(t, "USD", q.USD, tt.wantUSD)
				wantPrices(t, "Fiat", q.Fiat, tt.wantFiat)
				return
			}
			wantProviderError(t, err, "coinbase", tt.field, price.ErrBadQuote)
			if q.USD != nil || q.Fiat != nil {
				t.Errorf("failed fetch returned values %v", q)
			}
		})
	}
}

func TestFrankfurterDocumentedAnswer(t *testing.T) {
	t.Parallel()
	srv, seen := serve(t, 200, testdata(t, "frankfurter_latest.json"))
	p, err := price.NewFrankfurter(price.FrankfurterConfig{BaseURL: srv.URL + "/v1", Client: srv.Client(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	q, err := p.Fetch(t.Context(), registryCoins)
	if err != nil {
		t.Fatal(err)
	}
	if seen.path != "/v1/latest" || seen.query != "base=USD" {
		t.Errorf("request %s?%s", seen.path, seen.query)
	}
	if len(q.USD) != 0 {
		t.Errorf("Frankfurter quoted coins %v", q.USD)
	}
	if len(q.Fiat) != 30 || !q.Fiat["EUR"].Equal(d("0.95283")) || !q.Fiat["IDR"].Equal(d("15866")) || !q.Fiat["JPY"].Equal(d("154.03")) {
		t.Errorf("fiat %v", q.Fiat)
	}
	if !q.Time.Equal(fixedNow) {
		t.Errorf("time %v", q.Time)
	}
}

func TestFrankfurterAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		want  map[string]string
		field string
	}{
		{name: "without amount", body: `{"base":"USD","date":"2024-11-25","rates":{"EUR":0.95}}`, want: map[string]string{"EUR": "0.95"}},
		{name: "USD listed at 1 is dropped", body: `{"base":"USD","date":"2024-11-25","rates":{"EUR":0.95,"USD":1}}`, want: map[string]string{"EUR": "0.95"}},
		{name: "no rates", body: `{"base":"USD","date":"2024-11-25","rates":{}}`, want: map[string]string{}},
		{name: "not JSON", body: `{`, field: ""},
		{name: "base missing", body: `{"date":"2024-11-25","rates":{}}`, field: "base"},
		{name: "base EUR", body: `{"amount":1.0,"base":"EUR","date":"2024-11-25","rates":{"USD":1.05}}`, field: "base"},
		{name: "amount not 1", body: `{"amount":10,"base":"USD","date":"2024-11-25","rates":{"EUR":9.5}}`, field: "amount"},
		{name: "amount a string", body: `{"amount":"1","base":"USD","date":"2024-11-25","rates":{}}`, field: "amount"},
		{name: "date missing", body: `{"base":"USD","rates":{}}`, field: "date"},
		{name: "date malformed", body: `{"base":"USD","date":"25/11/2024","rates":{}}`, field: "date"},
		{name: "rates missing", body: `{"base":"USD","date":"2024-11-25"}`, field: "rates"},
		{name: "rates an array", body: `{"base":"USD","date":"2024-11-25","rates":[0.95]}`, field: "rates"},
		{name: "lower-case code", body: `{"base":"USD","date":"2024-11-25","rates":{"eur":0.95}}`, field: "rates"},
		{name: "rate a string", body: `{"base":"USD","date":"2024-11-25","rates":{"EUR":"0.95"}}`, field: "rates.EUR"},
		{name: "rate negative", body: `{"base":"USD","date":"2024-11-25","rates":{"EUR":-0.95}}`, field: "rates.EUR"},
		{name: "rate too large", body: `{"base":"USD","date":"2024-11-25","rates":{"EUR":1e16}}`, field: "rates.EUR"},
		{name: "USD not 1", body: `{"base":"USD","date":"2024-11-25","rates":{"USD":1.01}}`, field: "rates.USD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, 200, tt.body)
			p, _ := price.NewFrankfurter(price.FrankfurterConfig{BaseURL: srv.URL, Client: srv.Client()})
			q, err := p.Fetch(t.Context(), nil)
			if tt.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				wantPrices(t, "Fiat", q.Fiat, tt.want)
				return
			}
			wantProviderError(t, err, "frankfurter", tt.field, price.ErrBadQuote)
			if q.Fiat != nil {
				t.Errorf("failed fetch returned rates %v", q.Fiat)
			}
		})
	}
}

// providers returns one of each provider against base.
func providers(t *testing.T, base string, client *http.Client) []price.Provider {
	t.Helper()
	cg, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: base, Client: client, APIKey: "secret-key"})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := price.NewCoinbase(price.CoinbaseConfig{BaseURL: base, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	kr, err := price.NewKraken(price.KrakenConfig{BaseURL: base, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	ff, err := price.NewFrankfurter(price.FrankfurterConfig{BaseURL: base, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return []price.Provider{cg, cb, kr, ff}
}

func TestProviderHTTPFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		target error
	}{
		{name: "rate limited", status: http.StatusTooManyRequests, body: `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit"}}`, target: price.ErrUnavailable},
		{name: "unauthorized", status: http.StatusUnauthorized, body: `{"error":"invalid key secret-key"}`, target: price.ErrUnavailable},
		{name: "server error", status: http.StatusInternalServerError, body: ``, target: price.ErrUnavailable},
		{name: "no content", status: http.StatusNoContent, body: ``, target: price.ErrUnavailable},
		{name: "too large", status: http.StatusOK, body: `{"x":"` + strings.Repeat("a", 1<<20) + `"}`, target: price.ErrBadQuote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := serve(t, tt.status, tt.body)
			for _, p := range providers(t, srv.URL, srv.Client()) {
				_, err := p.Fetch(t.Context(), []string{"btc"})
				wantProviderError(t, err, p.Name(), "", tt.target)
				if err != nil && strings.Contains(err.Error(), "secret-key") {
					t.Errorf("%s: error %q holds the API key", p.Name(), err)
				}
			}
		})
	}
}

func TestProviderTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	for _, p := range providers(t, srv.URL, srv.Client()) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_, err := p.Fetch(ctx, []string{"btc"})
		cancel()
		wantProviderError(t, err, p.Name(), "", price.ErrUnavailable)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v does not wrap the deadline", p.Name(), err)
		}
	}
}

func TestProviderConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		new  func() error
	}{
		{"coingecko bad scheme", func() error { _, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: "ftp://x"}); return err }},
		{"coingecko user info", func() error {
			_, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: "https://user:pw@x"})
			return err
		}},
		{"coingecko query", func() error {
			_, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: "https://x/?k=v"})
			return err
		}},
		{"coingecko no host", func() error { _, err := price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: "https:///api"}); return err }},
		{"coingecko pro without key", func() error { _, err := price.NewCoinGecko(price.CoinGeckoConfig{Pro: true}); return err }},
		{"coingecko key with newline", func() error { _, err := price.NewCoinGecko(price.CoinGeckoConfig{APIKey: "a\nb"}); return err }},
		{"coingecko bad symbol", func() error {
			_, err := price.NewCoinGecko(price.CoinGeckoConfig{IDs: map[string]string{"BTC": "bitcoin"}})
			return err
		}},
		{"coingecko bad id", func() error {
			_, err := price.NewCoinGecko(price.CoinGeckoConfig{IDs: map[string]string{"btc": "bitcoin,ethereum"}})
			return err
		}},
		{"coinbase bad URL", func() error {
			_, err := price.NewCoinbase(price.CoinbaseConfig{BaseURL: "api.coinbase.com"})
			return err
		}},
		{"coinbase bad fiat", func() error { _, err := price.NewCoinbase(price.CoinbaseConfig{Fiat: []string{"eur"}}); return err }},
		{"coinbase bad symbol", func() error {
			_, err := price.NewCoinbase(price.CoinbaseConfig{Symbols: map[string]string{"pol": ""}})
			return err
		}},
		{"frankfurter bad URL", func() error {
			_, err := price.NewFrankfurter(price.FrankfurterConfig{BaseURL: "https://x#frag"})
			return err
		}},
	}
	for _, tt := range tests {
		if err := tt.new(); !errors.Is(err, price.ErrInvalidConfig) {
			t.Errorf("%s: error %v, want ErrInvalidConfig", tt.name, err)
		}
	}
	for name, cfg := range map[string]price.CoinGeckoConfig{"public": {}, "pro": {Pro: true, APIKey: "k"}} {
		if _, err := price.NewCoinGecko(cfg); err != nil {
			t.Errorf("coingecko %s defaults: %v", name, err)
		}
	}
	if _, err := price.NewCoinbase(price.CoinbaseConfig{}); err != nil {
		t.Errorf("coinbase defaults: %v", err)
	}
	if _, err := price.NewFrankfurter(price.FrankfurterConfig{}); err != nil {
		t.Errorf("frankfurter defaults: %v", err)
	}
	if got := price.CoinGeckoIDs(); len(got) != 11 || got["pol"] != "polygon-ecosystem-token" {
		t.Errorf("CoinGeckoIDs() = %v", got)
	}
}

// TestCoinGeckoIDsCoverTheTable keeps the id map and the embedded table's
// coins in step.
func TestCoinGeckoIDsCoverTheTable(t *testing.T) {
	t.Parallel()
	ids := price.CoinGeckoIDs()
	for _, coin := range registryCoins {
		if _, ok := price.Default().USD(coin); !ok {
			t.Errorf("%s: not in the embedded table", coin)
		}
		if ids[coin] == "" {
			t.Errorf("%s: no CoinGecko id", coin)
		}
	}
}
