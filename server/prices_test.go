package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/ent/db/pricequote"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// fakeProvider serves one price provider's documented answer shape from
// a table of USD prices; down makes it answer 503.
type fakeProvider struct {
	name string
	srv  *httptest.Server
	down atomic.Bool
	mu   sync.Mutex
	usd  map[string]decimal.Decimal // by symbol
}

// newFakeProvider starts a fake of provider name (coinbase, coingecko,
// kraken, frankfurter) quoting every coin of the embedded table at its
// table price, except those of override.
func newFakeProvider(t *testing.T, name string, override map[string]string) *fakeProvider {
	t.Helper()
	f := &fakeProvider{name: name, usd: map[string]decimal.Decimal{}}
	table := price.Default()
	for sym := range price.CoinGeckoIDs() {
		if p, ok := table.USD(sym); ok {
			f.usd[sym] = p
		}
	}
	for sym, v := range override {
		f.usd[sym] = decimal.RequireFromString(v)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// spec is the --price-provider value that points payhook at the fake.
func (f *fakeProvider) spec() string {
	switch f.name {
	case "coingecko":
		return f.name + "=" + f.srv.URL + "/api/v3"
	case "frankfurter":
		return f.name + "=" + f.srv.URL + "/v1"
	}
	return f.name + "=" + f.srv.URL
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	if f.down.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	syms := slices.Sorted(func(yield func(string) bool) {
		for s := range f.usd {
			if !yield(s) {
				return
			}
		}
	})
	var parts []string
	w.Header().Set("Content-Type", "application/json")
	switch f.name {
	case "coinbase": // GET /v2/exchange-rates?currency=USD: units per USD, strings
		for _, s := range syms {
			parts = append(parts, fmt.Sprintf("%q:%q", strings.ToUpper(s), decimal.NewFromInt(1).DivRound(f.usd[s], 18).String()))
		}
		parts = append(parts, `"EUR":"0.9"`, `"USD":"1"`)
		_, _ = fmt.Fprintf(w, `{"data":{"currency":"USD","rates":{%s}}}`, strings.Join(parts, ","))
	case "coingecko": // GET /api/v3/simple/price: numbers by id
		ids := price.CoinGeckoIDs()
		for _, s := range syms {
			parts = append(parts, fmt.Sprintf(`%q:{"usd":%s}`, ids[s], f.usd[s].String()))
		}
		_, _ = fmt.Fprintf(w, `{%s}`, strings.Join(parts, ","))
	case "kraken": // GET /0/public/Ticker: last trade c[0] by the pair's full name
		pairs := price.KrakenPairs()
		for _, s := range syms {
			if p, ok := pairs[s]; ok {
				key := p.Pair
				if len(p.Keys) > 0 {
					key = p.Keys[0]
				}
				parts = append(parts, fmt.Sprintf(`%q:{"a":["1","1","1.000"],"c":[%q,"0.1"],"o":"1"}`, key, f.usd[s].String()))
			}
		}
		_, _ = fmt.Fprintf(w, `{"error":[],"result":{%s}}`, strings.Join(parts, ","))
	case "frankfurter": // GET /v1/latest?base=USD
		_, _ = io.WriteString(w, `{"amount":1.0,"base":"USD","date":"2026-03-01","rates":{"EUR":0.92,"GBP":0.79}}`)
	}
}

// TestPricesWithProvidersGoingDown takes the price providers down one by
// one against a server with live prices: the median of those that answer
// is used; with none, the last known good value, also after a restart,
// until --price-max-age; then a checkout request, /convert/ and
// /estimate/ answer 503 naming the cause, the hosted page says what the
// payer can do without a Continue button, /healthz says degraded and why,
// and the metrics show it. When the providers come back, all is well.
func TestPricesWithProvidersGoingDown(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
			coinbase := newFakeProvider(t, "coinbase", map[string]string{"ltc": "80"})
			coingecko := newFakeProvider(t, "coingecko", map[string]string{"ltc": "84"})
			kraken := newFakeProvider(t, "kraken", map[string]string{"ltc": "100"})
			frankfurter := newFakeProvider(t, "frankfurter", nil)
			all := []*fakeProvider{coinbase, coingecko, kraken, frankfurter}
			setup := func(c *server.Config) {
				c.Now = clk.Now
				c.ManualDelivery = true
				c.Chains.Prices = server.PricesLive
				c.Chains.PriceMaxAge = time.Hour
				for _, f := range all {
					c.Chains.PriceProviders = append(c.Chains.PriceProviders, f.spec())
				}
			}
			ctx := context.Background()
			in := servertest.Start(t, d, setup)
			ltcOnly := func(in *servertest.Instance) {
				t.Helper()
				if err := in.Server.DB().Client.Project.UpdateOneID(in.ProjectA).SetTickers([]string{"ltc"}).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
			ltcOnly(in)
			refresh := func(in *servertest.Instance, wantErr bool) {
				t.Helper()
				if err := in.Server.RefreshPrices(ctx); (err != nil) != wantErr {
					t.Fatalf("refresh: %v, want an error: %v", err, wantErr)
				}
			}
			// ltcPrice checks the price /ltc/convert/ uses.
			ltcPrice := func(in *servertest.Instance, want string) {
				t.Helper()
				r := in.Get(t, "/ltc/convert/", q("value", want, "from", "USD"), in.KeyA)
				wantStatus(t, r, 200)
				if r.JSON["value_coin"] != "1" || r.JSON["exchange_rate"] != want {
					t.Fatalf("ltc price: %s, want %s", r.Body, want)
				}
			}
			healthy := func(in *servertest.Instance) {
				t.Helper()
				h := in.Get(t, "/healthz", nil, "")
				if h.Code != 200 || h.JSON["health"] != "serving" || h.JSON["reason"] != nil {
					t.Fatalf("/healthz: HTTP %d %s, want serving", h.Code, h.Body)
				}
			}
			checkout := func(in *servertest.Instance) servertest.Response {
				t.Helper()
				return in.Get(t, "/checkout/request/", q("notify_url", "https://shop.example/hook", "value", "10", "currency", "USD"), in.KeyA)
			}

			refresh(in, false) // all three coin providers up: the median
			ltcPrice(in, "84")
			healthy(in)

			clk.Advance(5 * time.Minute)
			coinbase.down.Store(true)
			refresh(in, false) // two up: their mean
			ltcPrice(in, "92")

			clk.Advance(5 * time.Minute)
			coingecko.down.Store(true)
			refresh(in, false) // one up: that one
			ltcPrice(in, "100")
			row, err := in.Server.DB().Client.PriceQuote.Query().Where(pricequote.Coin("ltc"), pricequote.Currency("USD")).Only(ctx)
			if err != nil || !row.Price.Equal(decimal.NewFromInt(100)) || !slices.Equal(row.Sources, []string{"kraken"}) || !row.FetchedAt.Equal(clk.Now()) {
				t.Fatalf("last known good ltc/USD row: %+v, %v", row, err)
			}

			clk.Advance(5 * time.Minute)
			kraken.down.Store(true)
			frankfurter.down.Store(true)
			refresh(in, true) // none up: the last known good value
			ltcPrice(in, "100")
			healthy(in)
			r := checkout(in)
			wantStatus(t, r, 200)
			pagePath := strings.TrimPrefix(r.JSON["payment_url"].(string), in.BaseURL)
			paymentID := r.JSON["payment_id"].(string)
			r = in.Get(t, "/subscription/create/", q("notify_url", "https://shop.example/hook", "currency", "USD", "option", "1m:50.00"), in.KeyA)
			wantStatus(t, r, 200)
			subPath, subToken := strings.TrimPrefix(r.JSON["subscription_url"].(string), in.BaseURL), r.JSON["token"].(string)

			// A restart, still without providers: the last known good
			// values come from the database before any refresh.
			oldKey := in.KeyA // its project owns the checkout and the subscription
			if err := in.Server.Stop(); err != nil {
				t.Fatal(err)
			}
			in = servertest.Start(t, d, setup, func(c *server.Config) { c.Store.DB = in.DSN })
			ltcOnly(in)
			ltcPrice(in, "100")
			healthy(in)
			refresh(in, true)
			ltcPrice(in, "100")

			// Past --price-max-age (1h) since kraken last answered.
			clk.Advance(56 * time.Minute)
			const cause = "no fresh ltc/USD price: providers coinbase, coingecko, kraken failed; last known 1h1m ago (max age 1h)"
			for name, r := range map[string]servertest.Response{
				"checkout request":     checkout(in),
				"checkout address":     in.Get(t, "/checkout/address/", q("payment_id", paymentID, "coin", "ltc"), oldKey),
				"subscription address": in.Get(t, "/subscription/address/", q("token", subToken, "option", "1m", "coin", "ltc"), oldKey),
				"convert":              in.Get(t, "/ltc/convert/", q("value", "10", "from", "USD"), in.KeyA),
				"estimate":             in.Get(t, "/ltc/estimate/", nil, ""),
			} {
				if r.Code != http.StatusServiceUnavailable || r.JSON["status"] != "error" || r.JSON["error"] != cause {
					t.Errorf("%s: HTTP %d %s, want 503 %q", name, r.Code, r.Body, cause)
				}
			}
			if r := in.Get(t, "/btc/convert/", q("value", "10", "from", "ltc"), in.KeyA); r.Code != 503 || !strings.Contains(string(r.Body), "no fresh btc/USD price") {
				t.Errorf("btc from ltc: HTTP %d %s", r.Code, r.Body)
			}
			// Anyone sees that it is degraded; the operator sees why.
			if h := in.Get(t, "/healthz", nil, ""); h.Code != 200 || h.JSON["health"] != "degraded" || h.JSON["reason"] != nil {
				t.Errorf("anonymous /healthz: HTTP %d %s, want 200 degraded without the reason", h.Code, h.Body)
			}
			h := in.Get(t, "/healthz", nil, in.OperatorKey(t))
			reason, _ := h.JSON["reason"].(string)
			if h.Code != 200 || h.JSON["status"] != "success" || h.JSON["health"] != "degraded" ||
				!strings.HasPrefix(reason, "no fresh price for ") || !strings.Contains(reason, "ltc/USD 1h1m ago") ||
				!strings.Contains(reason, "providers coinbase, coingecko, kraken failed") || !strings.HasSuffix(reason, "(max age 1h)") {
				t.Errorf("/healthz: HTTP %d %s, want 200 degraded with the reason", h.Code, h.Body)
			}
			const tell = "Prices are unavailable right now; try again in a few minutes or contact the merchant."
			for _, path := range []string{pagePath, subPath} {
				page := in.Do(t, http.MethodGet, in.BaseURL+path, "")
				if page.Code != 200 || !strings.Contains(string(page.Body), tell) ||
					strings.Contains(string(page.Body), `id="choose"`) || strings.Contains(string(page.Body), "No coin can be used") {
					t.Errorf("hosted page %s: HTTP %d\n%s", path, page.Code, page.Body)
				}
			}
			// A payer whose page was rendered before the prices went stale.
			resp, err := http.PostForm(in.BaseURL+pagePath, url.Values{"coin": {"ltc"}})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), tell) {
				t.Errorf("choosing ltc on the page: HTTP %d\n%s", resp.StatusCode, body)
			}
			m := in.Do(t, http.MethodGet, in.BaseURL+"/metrics", in.OperatorKey(t))
			for _, want := range []string{"payhook_price_max_age_seconds 3600", `payhook_price_provider_up{provider="kraken"} 0`,
				`payhook_price_provider_failures_total{provider="kraken"} 1`, `payhook_price_age_seconds{coin="ltc"} 3660`} {
				if !strings.Contains(string(m.Body), want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
			if strings.Contains(string(m.Body), "payhook_price_stale_coins 0") || !strings.Contains(string(m.Body), "payhook_price_stale_coins ") {
				t.Errorf("/metrics does not count the stale coins")
			}

			// The providers come back.
			for _, f := range all {
				f.down.Store(false)
			}
			refresh(in, false)
			ltcPrice(in, "84")
			healthy(in)
			wantStatus(t, checkout(in), 200)
			m = in.Do(t, http.MethodGet, in.BaseURL+"/metrics", in.OperatorKey(t))
			if !strings.Contains(string(m.Body), "payhook_price_stale_coins 0") || !strings.Contains(string(m.Body), `payhook_price_provider_up{provider="kraken"} 1`) {
				t.Errorf("/metrics after the providers came back:\n%s", m.Body)
			}
		})
	}
}
