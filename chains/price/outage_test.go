package price_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/kind"
)

// memStore is a price.Store in memory, with the rule the server's keeps
// in its database: a record never replaces a newer one.
type memStore struct {
	mu   sync.Mutex
	recs map[[2]string]price.Record
	fail error
}

func (s *memStore) LoadPrices(context.Context) ([]price.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	var out []price.Record
	for _, r := range s.recs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b price.Record) int { return cmp.Compare(a.Coin+a.Currency, b.Coin+b.Currency) })
	return out, nil
}

func (s *memStore) SavePrices(_ context.Context, recs []price.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.recs == nil {
		s.recs = map[[2]string]price.Record{}
	}
	for _, r := range recs {
		k := [2]string{r.Coin, r.Currency}
		if old, ok := s.recs[k]; !ok || r.FetchedAt.After(old.FetchedAt) {
			s.recs[k] = r
		}
	}
	return nil
}

func (s *memStore) get(coin, currency string) (price.Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[[2]string{coin, currency}]
	return r, ok
}

// coinOnly and fiatOnly are fakes that say what they quote, as the real
// providers do (price.Coverer).
type coinOnly struct{ *fake }

func (coinOnly) Covers() (coins, fiat bool) { return true, false }

type fiatOnly struct{ *fake }

func (fiatOnly) Covers() (coins, fiat bool) { return false, true }

func wantRecord(t *testing.T, s *memStore, coin, currency, value string, sources ...string) {
	t.Helper()
	r, ok := s.get(coin, currency)
	if !ok {
		t.Fatalf("no %s/%s record kept", coin, currency)
	}
	if !r.Price.Equal(d(value)) || !slices.Equal(r.Sources, sources) {
		t.Errorf("%s/%s kept as %s from %v, want %s from %v", coin, currency, r.Price, r.Sources, value, sources)
	}
}

// TestLiveProvidersGoDownOneByOne takes the coin providers down one after
// the other: the median of those that answer is served, then the last
// known good value until MaxAge, then an error that says why.
func TestLiveProvidersGoDownOneByOne(t *testing.T) {
	t.Parallel()
	c := clock.NewManual(tableDate.Add(48 * time.Hour))
	a := quoting("a", c, map[string]string{"btc": "100", "eth": "10"}, nil)
	b := quoting("b", c, map[string]string{"btc": "110", "eth": "11"}, nil)
	k := quoting("k", c, map[string]string{"btc": "130", "eth": "13"}, nil)
	fx := quoting("fx", c, nil, map[string]string{"EUR": "0.9"})
	store := &memStore{}
	var logs bytes.Buffer
	l, err := price.NewLive(price.LiveConfig{
		Providers: []price.Provider{coinOnly{a}, coinOnly{b}, coinOnly{k}, fiatOnly{fx}},
		Fallback:  table(t), Coins: []string{"btc", "eth"}, MaxAge: time.Hour, Store: store, Now: c.Now,
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	refresh := func() {
		t.Helper()
		if err := l.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	down := func(f *fake) { f.set(failing(f.name).quote) }

	refresh() // three up: the middle one
	wantUSD(t, l, "btc", "110")
	wantRecord(t, store, "btc", "USD", "110", "a", "b", "k")
	wantRecord(t, store, price.USDCoin, "EUR", "0.9", "fx")

	c.Advance(5 * time.Minute)
	down(a)
	refresh() // two up: their mean
	wantUSD(t, l, "btc", "120")
	wantUSD(t, l, "eth", "12")
	wantRecord(t, store, "btc", "USD", "120", "b", "k")
	if !strings.Contains(logs.String(), "provider=a") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}

	c.Advance(5 * time.Minute)
	down(b)
	refresh() // one up: that one
	wantUSD(t, l, "btc", "130")
	wantRecord(t, store, "btc", "USD", "130", "k")
	lastGood := c.Now()

	c.Advance(5 * time.Minute)
	down(k)
	refresh() // no coin provider up (fx still answers): the last known good value
	wantUSD(t, l, "btc", "130")
	if err := price.Why(l, "btc", "EUR"); err != nil {
		t.Errorf("Why within MaxAge: %v", err)
	}
	if got := l.Ages()["btc"]; got != 5*time.Minute {
		t.Errorf("btc age %v, want 5m", got)
	}

	c.Set(lastGood.Add(time.Hour)) // exactly MaxAge old: still served
	wantUSD(t, l, "btc", "130")
	c.Advance(5 * time.Minute)
	refresh()
	wantUSD(t, l, "btc", "")
	err = price.Why(l, "btc", "EUR")
	const want = "no fresh btc/USD price: providers a, b, k failed; last known 1h5m ago (max age 1h)"
	if err == nil || err.Error() != want {
		t.Fatalf("Why = %v, want %q", err, want)
	}
	if !errors.Is(err, price.ErrStale) || kind.Of(err) != kind.Unavailable || kind.Message(err) != want {
		t.Errorf("%v: not ErrStale of kind Unavailable", err)
	}
	err = l.Stale([]string{"btc", "erc20/eth", "eth", "bep20/eth"})
	const wantAll = "no fresh price for btc/USD, eth/USD: providers a, b, k failed; last known: btc/USD 1h5m ago, eth/USD 1h5m ago (max age 1h)"
	if err == nil || err.Error() != wantAll {
		t.Errorf("Stale = %v, want %q", err, wantAll)
	}
	if got := l.Ages()["btc"]; got != time.Hour+5*time.Minute {
		t.Errorf("btc age %v: the metric reports it however old", got)
	}

	// The fiat provider goes down too: a fresh coin, a stale rate.
	down(fx)
	a.set(answer(c, map[string]string{"btc": "105", "eth": "10.5"}, nil))
	c.Advance(time.Minute)
	refresh()
	wantUSD(t, l, "btc", "105")
	if err := l.Stale([]string{"btc", "eth"}); err != nil {
		t.Errorf("Stale with a fresh price: %v", err)
	}
	if err := price.Why(l, "btc", "USD"); err != nil {
		t.Errorf("Why in USD: %v", err)
	}
	c.Advance(61 * time.Minute)
	refresh() // btc fresh again; EUR last fetched 1h2m ago
	const wantEUR = "no fresh USD/EUR price: provider fx failed; last known 1h2m ago (max age 1h)"
	if err := price.Why(l, "btc", "eur"); err == nil || err.Error() != wantEUR {
		t.Errorf("Why in EUR = %v, want %q", err, wantEUR)
	}
	if err := price.Why(l, "btc", "XAU"); err != nil {
		t.Errorf("Why in a currency the table lacks: %v (not a matter of age)", err)
	}

	st := l.Providers()
	if len(st) != 4 || st[0].Name != "a" || !st[0].Up || st[0].Failures != 4 || st[1].Up || st[1].Failures != 5 ||
		st[2].Failures != 4 || st[3].Up || st[3].Failures != 2 || !strings.Contains(st[3].LastError, "HTTP status 503") {
		t.Errorf("Providers() = %+v", st)
	}
	if l.MaxAge() != time.Hour {
		t.Errorf("MaxAge() = %v", l.MaxAge())
	}
}

// TestLiveNoneUp has every provider down from the start: the table's
// price until it ages past MaxAge, then the error.
func TestLiveNoneUp(t *testing.T) {
	t.Parallel()
	c := clock.NewManual(tableDate.Add(30 * time.Minute))
	l := newLive(t, price.LiveConfig{Providers: []price.Provider{failing("p"), failing("q")}, MaxAge: time.Hour, Now: c.Now})
	const pending = "no fresh btc/USD price: the first refresh of prices has not finished; last known 2h ago (max age 1h)"
	c.Advance(90 * time.Minute)
	if err := price.Why(l, "btc", "USD"); err == nil || err.Error() != pending {
		t.Errorf("before any refresh: %v, want %q", err, pending)
	}
	if err := l.Refresh(t.Context()); !errors.Is(err, price.ErrNoQuote) {
		t.Fatalf("refresh: %v", err)
	}
	const want = "no fresh btc/USD price: providers p, q failed; last known 2h ago (max age 1h)"
	if err := price.Why(l, "trc20/btc", "USD"); err == nil || err.Error() != want {
		t.Errorf("Why = %v, want %q", err, want)
	}
	if err := price.Why(l, "doge", "USD"); err != nil {
		t.Errorf("Why of a coin Live neither fetches nor has in its table: %v, want nil (it cannot say)", err)
	}
	l = newLive(t, price.LiveConfig{Providers: []price.Provider{failing("p")}, Coins: []string{"doge"}, MaxAge: time.Hour, Now: c.Now})
	if err := l.Refresh(t.Context()); !errors.Is(err, price.ErrNoQuote) {
		t.Fatalf("refresh: %v", err)
	}
	const never = "no fresh doge/USD price: provider p failed; none known (max age 1h)"
	if err := price.Why(l, "doge", "USD"); err == nil || err.Error() != never {
		t.Errorf("Why = %v, want %q", err, never)
	}
	if err := price.Why(price.Default(), "btc", "USD"); err != nil {
		t.Errorf("a Table cannot say why: %v", err)
	}
}

// TestLiveLastKnownGoodSurvivesRestart: what one Live saved, the next
// loads before its first refresh, with its age.
func TestLiveLastKnownGoodSurvivesRestart(t *testing.T) {
	t.Parallel()
	c := clock.NewManual(tableDate.Add(48 * time.Hour))
	store := &memStore{}
	up := quoting("up", c, map[string]string{"btc": "120000", "eth": "3000"}, map[string]string{"EUR": "0.85"})
	first := newLive(t, price.LiveConfig{Providers: []price.Provider{up}, Store: store, Now: c.Now})
	if err := first.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}

	c.Advance(20 * time.Minute) // the restart, without network access
	down := failing("up")
	second := newLive(t, price.LiveConfig{Providers: []price.Provider{down}, Store: store, Now: c.Now})
	wantUSD(t, second, "btc", "") // the table is two days old
	if err := second.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantUSD(t, second, "btc", "120000")
	if got, want := fiatOf(second), "EUR=0.85/2 USD=1/2"; got != want {
		t.Errorf("Fiat = %s, want %s", got, want)
	}
	if got := second.Ages()["btc"]; got != 20*time.Minute {
		t.Errorf("age %v, want 20m: the age survives the restart", got)
	}
	if err := second.Refresh(t.Context()); !errors.Is(err, price.ErrNoQuote) {
		t.Fatal(err)
	}
	wantUSD(t, second, "btc", "120000")
	c.Advance(41 * time.Minute)
	wantUSD(t, second, "btc", "")
	if err := price.Why(second, "btc", "USD"); err == nil || !strings.Contains(err.Error(), "last known 1h1m ago") {
		t.Errorf("Why = %v", err)
	}
}

func TestLiveLoadSkipsWhatItCannotUse(t *testing.T) {
	t.Parallel()
	c := clock.NewManual(tableDate.Add(48 * time.Hour))
	at := c.Now().Add(-time.Minute)
	rec := func(coin, currency, v string, at time.Time) price.Record {
		return price.Record{Coin: coin, Currency: currency, Price: d(v), Sources: []string{"x"}, FetchedAt: at}
	}
	store := &memStore{recs: map[[2]string]price.Record{}}
	for _, r := range []price.Record{
		rec("btc", "USD", "120000", at),
		rec("eth", "USD", "3000", c.Now().Add(time.Hour)), // from the future: counts as now
		rec("usdt", "USD", "-1", at),                      // not a price
		rec("doge", "USD", "0.2", at),                     // not a configured coin
		rec("btc", "EUR", "100000", at),                   // not how Live keeps prices
		rec(price.USDCoin, "EUR", "0.85", at),
		rec(price.USDCoin, "XAU", "0.0003", at), // not in the table
		rec(price.USDCoin, "JPY", "150", time.Time{}),
	} {
		store.recs[[2]string{r.Coin, r.Currency}] = r
	}
	l := newLive(t, price.LiveConfig{Providers: []price.Provider{failing("p")}, Store: store, Now: c.Now})
	if err := l.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantUSD(t, l, "btc", "120000")
	wantUSD(t, l, "eth", "3000")
	wantUSD(t, l, "usdt", "")
	wantUSD(t, l, "doge", "")
	if got, want := fiatOf(l), "EUR=0.85/2 USD=1/2"; got != want {
		t.Errorf("Fiat = %s, want %s", got, want)
	}
	if got := l.Ages()["eth"]; got != 0 {
		t.Errorf("eth age %v, want 0", got)
	}

	store.fail = errors.New("database down")
	if err := l.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Errorf("Load with a failing store: %v", err)
	}
	if err := newLive(t, price.LiveConfig{Providers: []price.Provider{failing("p")}}).Load(t.Context()); err != nil {
		t.Errorf("Load without a store: %v", err)
	}
}

func TestLiveSaveFailureIsNotFatal(t *testing.T) {
	t.Parallel()
	c := clock.NewManual(tableDate)
	store := &memStore{fail: errors.New("database down")}
	var logs bytes.Buffer
	l, err := price.NewLive(price.LiveConfig{Providers: []price.Provider{quoting("p", c, map[string]string{"btc": "1"}, nil)},
		Fallback: table(t), Store: store, Now: c.Now}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantUSD(t, l, "btc", "1")
	if !strings.Contains(logs.String(), "could not keep the prices") || !strings.Contains(logs.String(), "database down") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func TestLiveMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answers []string
		want    string
	}{
		{"one", []string{"7"}, "7"},
		{"odd, unsorted", []string{"3", "1", "2"}, "2"},
		{"even: the mean of the middle two", []string{"4", "1", "3", "2"}, "2.5"},
		{"an outlier is outvoted", []string{"67000", "1", "67100"}, "67000"},
		{"the mean rounds half away from zero at 18 places", []string{"0.000000000000000001", "0.000000000000000002"}, "0.000000000000000002"},
		{"five", []string{"5", "1", "4", "2", "3"}, "3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := clock.NewManual(tableDate)
			var ps []price.Provider
			for i, v := range tt.answers {
				ps = append(ps, quoting(string(rune('a'+i)), c, map[string]string{"btc": v}, nil))
			}
			l := newLive(t, price.LiveConfig{Providers: ps, Now: c.Now})
			if err := l.Refresh(t.Context()); err != nil {
				t.Fatal(err)
			}
			wantUSD(t, l, "btc", tt.want)
		})
	}

	t.Run("as of the oldest answer", func(t *testing.T) {
		t.Parallel()
		c := clock.NewManual(tableDate.Add(time.Hour))
		old := &fake{name: "old"}
		old.set(func(context.Context) (price.Quote, error) {
			return price.Quote{USD: map[string]decimal.Decimal{"btc": d("2")}, Time: c.Now().Add(-10 * time.Minute)}, nil
		})
		l := newLive(t, price.LiveConfig{Providers: []price.Provider{old, quoting("new", c, map[string]string{"btc": "4"}, nil)}, Now: c.Now})
		if err := l.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		wantUSD(t, l, "btc", "3")
		if got := l.Ages()["btc"]; got != 10*time.Minute {
			t.Errorf("age %v, want 10m", got)
		}
	})
}

func TestStaleErrorText(t *testing.T) {
	t.Parallel()
	btc := price.StaleValue{Coin: "btc", Currency: "USD", Known: true, Age: 3 * time.Hour}
	ltc := price.StaleValue{Coin: "ltc", Currency: "USD"}
	tests := []struct {
		err  *price.StaleError
		want string
	}{
		{&price.StaleError{Values: []price.StaleValue{btc}, Failed: []string{"kraken"}, MaxAge: time.Hour},
			"no fresh btc/USD price: provider kraken failed; last known 3h ago (max age 1h)"},
		{&price.StaleError{Values: []price.StaleValue{btc}, MaxAge: price.NoMaxAge},
			"no fresh btc/USD price: no provider quotes it; last known 3h ago"},
		{&price.StaleError{Values: []price.StaleValue{btc, ltc}, Pending: true, MaxAge: 90 * time.Minute},
			"no fresh price for btc/USD, ltc/USD: the first refresh of prices has not finished; last known: btc/USD 3h ago, ltc/USD never (max age 1h30m)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got  %q\nwant %q", got, tt.want)
		}
	}

	merged := price.MergeStale(errors.New("other"),
		&price.StaleError{Values: []price.StaleValue{btc}, Failed: []string{"a"}, MaxAge: time.Hour},
		&price.StaleError{Values: []price.StaleValue{btc, ltc}, Failed: []string{"a", "b"}, MaxAge: time.Hour})
	const want = "no fresh price for btc/USD, ltc/USD: providers a, b failed; last known: btc/USD 3h ago, ltc/USD never (max age 1h)"
	if merged == nil || merged.Error() != want {
		t.Errorf("MergeStale = %v, want %q", merged, want)
	}
	if price.MergeStale(errors.New("other"), nil) != nil {
		t.Error("MergeStale without a StaleError is not nil")
	}

	for d, want := range map[time.Duration]string{
		0: "0s", 44*time.Second + 600*time.Millisecond: "45s", 2 * time.Minute: "2m", 90 * time.Minute: "1h30m",
		3*time.Hour + 20*time.Second: "3h", 49 * time.Hour: "49h", 61*time.Minute + 31*time.Second: "1h2m",
	} {
		if got := price.FormatAge(d); got != want {
			t.Errorf("FormatAge(%v) = %q, want %q", d, got, want)
		}
	}
}
