package price

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/startstop"
)

// Defaults of LiveConfig.
const (
	// DefaultTTL is how often Start refreshes.
	DefaultTTL = 5 * time.Minute
	// DefaultMaxAge is how old a price or rate may be before it is omitted.
	DefaultMaxAge = time.Hour
	// DefaultFetchTimeout bounds one provider's Fetch within a Refresh.
	DefaultFetchTimeout = 10 * time.Second
	// NoMaxAge, as LiveConfig.MaxAge, disables omission: every known value
	// is served however old, and the fallback table never goes stale.
	NoMaxAge time.Duration = -1
)

// LiveConfig configures a Live source.
type LiveConfig struct {
	// Providers are all asked at every refresh; each value is the median
	// of those that answer for it. At least one; three or more let one
	// provider's wrong answer be outvoted. Their order is the order errors
	// name them in.
	Providers []Provider
	// Fallback is the table (the embedded one or the operator's) whose
	// values count, as of its as_of date, when no fresher live value is
	// known. It is also the fiat database: Fiat lists its currencies, with
	// their minor units, and only those. Required.
	Fallback *Table
	// Coins are the lower-case asset symbols to fetch. Default: the symbols
	// the fallback table prices (its entries without a "/").
	Coins []string
	// TTL is the refresh interval of Start. Default DefaultTTL.
	TTL time.Duration
	// MaxAge is how old a value may be (now minus its as-of time) before it
	// is omitted: USD reports no price, Fiat drops the currency. 0 means
	// DefaultMaxAge; NoMaxAge (any negative value) means no limit.
	MaxAge time.Duration
	// FetchTimeout bounds each provider's Fetch. Default
	// DefaultFetchTimeout.
	FetchTimeout time.Duration
	// Store keeps the last known good values across restarts: Refresh
	// saves each new median, Load reads them back. Optional.
	Store Store
	// Now is the clock. Default clock.Now.
	Now func() time.Time
	// Tick makes the ticker of Start: a channel that receives every d, and
	// a function that stops it. Default: a time.Ticker. Tests inject a
	// channel they send on.
	Tick func(d time.Duration) (<-chan time.Time, func())
}

// WithDefaults returns the configuration with unset fields defaulted.
func (c LiveConfig) WithDefaults() LiveConfig {
	if c.Coins == nil && c.Fallback != nil {
		for coin := range c.Fallback.coins {
			if !strings.Contains(coin, "/") {
				c.Coins = append(c.Coins, coin)
			}
		}
		slices.Sort(c.Coins)
	}
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.MaxAge == 0 {
		c.MaxAge = DefaultMaxAge
	}
	if c.MaxAge < 0 {
		c.MaxAge = NoMaxAge
	}
	if c.FetchTimeout == 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	if c.Now == nil {
		c.Now = clock.Now
	}
	if c.Tick == nil {
		c.Tick = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	return c
}

// Validate reports the first unusable field.
func (c LiveConfig) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: LiveConfig.%s: %s", ErrInvalidConfig, field, fmt.Sprintf(format, args...))
	}
	if len(c.Providers) == 0 {
		return bad("Providers", "at least one provider is needed (without any, use the Table itself)")
	}
	names := map[string]bool{}
	for i, p := range c.Providers {
		if p == nil {
			return bad("Providers", "entry %d is nil", i)
		}
		if names[p.Name()] {
			return bad("Providers", "%q is listed twice", p.Name())
		}
		names[p.Name()] = true
	}
	if c.Fallback == nil {
		return bad("Fallback", "required")
	}
	if len(c.Coins) == 0 {
		return bad("Coins", "empty")
	}
	seen := map[string]bool{}
	for _, coin := range c.Coins {
		if !coinPattern.MatchString(coin) {
			return bad("Coins", "%q is not a lower-case asset symbol", coin)
		}
		if seen[coin] {
			return bad("Coins", "%q is listed twice", coin)
		}
		seen[coin] = true
	}
	if c.TTL < time.Second {
		return bad("TTL", "must be at least 1s, got %s", c.TTL)
	}
	if c.MaxAge > 0 && c.MaxAge < c.TTL {
		return bad("MaxAge", "%s is shorter than the TTL (%s): prices would be omitted between refreshes", c.MaxAge, c.TTL)
	}
	if c.FetchTimeout <= 0 {
		return bad("FetchTimeout", "must be positive, got %s", c.FetchTimeout)
	}
	if c.Now == nil {
		return bad("Now", "nil (use WithDefaults)")
	}
	if c.Tick == nil {
		return bad("Tick", "nil (use WithDefaults)")
	}
	return nil
}

// value is a price or rate with the time it refers to. A zero at means the
// time is unknown (a table without as_of): such a value is stale whenever
// MaxAge limits age.
type value struct {
	v  decimal.Decimal
	at time.Time
	// sources are the providers whose answers made the value (nil for
	// the table's).
	sources []string
}

// Live is a Source of live prices: the median of its providers' answers,
// cached with their fetch time and kept through the Store, the fallback
// table beneath, and anything older than MaxAge omitted. It is safe for
// concurrent use. See the package documentation for the rules.
type Live struct {
	cfg     LiveConfig
	logger  *slog.Logger
	tableAt time.Time // the fallback's as_of, midnight UTC; zero when it has none
	fiatSet map[string]bool
	coinSet map[string]bool

	refreshMu sync.Mutex // one Refresh at a time

	mu    sync.RWMutex
	coins map[string]value // by symbol, only cfg.Coins
	fiat  map[string]value // by code, only the fallback's codes, never USD
	// refreshed is true once a refresh has finished (whatever its
	// outcome); failed are the providers that failed at the last one.
	refreshed bool
	failed    map[string]bool
	providers map[string]*ProviderStatus

	startstop.Base
}

// ProviderStatus is how a provider fared, for the metrics.
type ProviderStatus struct {
	// Name is the provider's.
	Name string
	// Up is true when it answered with a valid quote at the last refresh.
	Up bool
	// Failures counts the refreshes it failed since the start.
	Failures uint64
	// LastError is its last failure ("" while it is up).
	LastError string
}

// NewLive returns a Live source with an empty cache: until Load or the
// first successful Refresh it serves the fallback table (subject to
// MaxAge). It does not start refreshing; call Refresh, Start, or both. A
// nil logger discards.
func NewLive(cfg LiveConfig, logger *slog.Logger) (*Live, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.Providers = slices.Clone(cfg.Providers)
	cfg.Coins = slices.Clone(cfg.Coins)
	l := &Live{
		cfg:       cfg,
		logger:    logger,
		fiatSet:   map[string]bool{},
		coinSet:   map[string]bool{},
		coins:     map[string]value{},
		fiat:      map[string]value{},
		failed:    map[string]bool{},
		providers: map[string]*ProviderStatus{},
	}
	if cfg.Fallback.asOf != "" {
		l.tableAt, _ = time.Parse(time.DateOnly, cfg.Fallback.asOf) // validated by Load
	}
	for _, c := range cfg.Fallback.fiat {
		l.fiatSet[c.Code] = true
	}
	for _, c := range cfg.Coins {
		l.coinSet[c] = true
	}
	for _, p := range cfg.Providers {
		l.providers[p.Name()] = &ProviderStatus{Name: p.Name()}
	}
	return l, nil
}

// answer is one provider's value of a coin or currency.
type answer struct {
	v      decimal.Decimal
	at     time.Time
	source string
}

// median returns the median of answers (at least one): the middle value,
// or for an even count the mean of the two middle ones rounded half away
// from zero to MaxRatePlaces; as of the oldest answer's time, with the
// answers' providers as its sources.
func median(answers []answer) value {
	vs := make([]decimal.Decimal, len(answers))
	out := value{at: answers[0].at}
	for i, a := range answers {
		vs[i] = a.v
		if a.at.Before(out.at) {
			out.at = a.at
		}
		out.sources = append(out.sources, a.source)
	}
	slices.SortFunc(vs, func(a, b decimal.Decimal) int { return a.Cmp(b) })
	n := len(vs)
	if n%2 == 1 {
		out.v = vs[n/2]
	} else {
		out.v = vs[n/2-1].Add(vs[n/2]).DivRound(decimal.NewFromInt(2), MaxRatePlaces)
	}
	return out
}

// fetched is one provider's outcome within a Refresh.
type fetched struct {
	q   Quote
	err error
}

// Refresh asks every provider at once for the coins and fiat rates, each
// within FetchTimeout, and caches for each coin and currency the median of
// the answers it got (see median), with the time of the oldest of them.
// A provider that fails (or answers with anything invalid: nothing of that
// answer is used) is logged and counted, and the others decide. A cached
// value is only ever replaced by a newer one; every value replaced is
// saved to the Store (a failure to save is logged). Values no provider
// quoted keep their old as-of time and age. Refresh returns an error
// wrapping ErrNoQuote, joined with every provider's error, when no
// provider answered; the cache is then unchanged. A refresh cut short by
// ctx (Stop) changes nothing and records no failure. Concurrent calls run
// one after the other.
func (l *Live) Refresh(ctx context.Context) error {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()

	results := make([]fetched, len(l.cfg.Providers))
	var wg sync.WaitGroup
	for i, p := range l.cfg.Providers {
		wg.Go(func() { results[i].q, results[i].err = l.fetch(ctx, p) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return errors.Join(ErrNoQuote, err)
	}

	coinAnswers := map[string][]answer{}
	fiatAnswers := map[string][]answer{}
	failed := map[string]bool{}
	var errs []error
	for i, p := range l.cfg.Providers {
		r := results[i]
		if r.err != nil {
			l.logger.Warn("price provider failed; the others decide", "provider", p.Name(), "error", r.err)
			failed[p.Name()] = true
			errs = append(errs, r.err)
			continue
		}
		for _, sym := range slices.Sorted(maps.Keys(r.q.USD)) {
			if l.coinSet[sym] {
				coinAnswers[sym] = append(coinAnswers[sym], answer{v: r.q.USD[sym], at: r.q.Time, source: p.Name()})
			}
		}
		for _, code := range slices.Sorted(maps.Keys(r.q.Fiat)) {
			if l.fiatSet[code] && code != "USD" {
				fiatAnswers[code] = append(fiatAnswers[code], answer{v: r.q.Fiat[code], at: r.q.Time, source: p.Name()})
			}
		}
	}
	answered := len(failed) < len(l.cfg.Providers)

	var saved []Record
	l.mu.Lock()
	l.refreshed, l.failed = true, failed
	for i, p := range l.cfg.Providers {
		st := l.providers[p.Name()]
		if err := results[i].err; err != nil {
			st.Up, st.LastError = false, err.Error()
			st.Failures++
		} else {
			st.Up, st.LastError = true, ""
		}
	}
	for _, sym := range slices.Sorted(maps.Keys(coinAnswers)) {
		if v := median(coinAnswers[sym]); l.replace(l.coins, sym, v) {
			saved = append(saved, Record{Coin: sym, Currency: "USD", Price: v.v, Sources: v.sources, FetchedAt: v.at})
		}
	}
	for _, code := range slices.Sorted(maps.Keys(fiatAnswers)) {
		if v := median(fiatAnswers[code]); l.replace(l.fiat, code, v) {
			saved = append(saved, Record{Coin: USDCoin, Currency: code, Price: v.v, Sources: v.sources, FetchedAt: v.at})
		}
	}
	l.mu.Unlock()

	if !answered {
		err := errors.Join(append([]error{ErrNoQuote}, errs...)...)
		l.logger.Error("no price provider answered; serving the last known and fallback prices", "error", err)
		return err
	}
	l.logger.Debug("prices refreshed", "coins", len(coinAnswers), "fiat", len(fiatAnswers), "failed", len(failed))
	if l.cfg.Store != nil && len(saved) > 0 {
		if err := l.cfg.Store.SavePrices(ctx, saved); err != nil {
			l.logger.Warn("could not keep the prices as last known good; a restart would not know them", "error", err)
		}
	}
	return nil
}

// replace caches v under key in m unless the cached value is as new or
// newer, and reports whether it did. Callers hold l.mu.
func (l *Live) replace(m map[string]value, key string, v value) bool {
	if old, ok := m[key]; ok && !v.at.After(old.at) {
		return false
	}
	m[key] = v
	return true
}

// Load reads the last known good values from the Store into the cache, as
// if a refresh had fetched them when they were fetched: a value replaces
// only an older one. Records of coins not configured, of currencies the
// fallback table lacks, or with a value outside the table's limits are
// skipped. Without a Store it does nothing. Call it once, before serving.
func (l *Live) Load(ctx context.Context) error {
	if l.cfg.Store == nil {
		return nil
	}
	recs, err := l.cfg.Store.LoadPrices(ctx)
	if err != nil {
		return fmt.Errorf("load the last known prices: %w", err)
	}
	now := l.cfg.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	loaded := 0
	for _, r := range recs {
		p := r.Price
		if p.Sign() <= 0 || p.GreaterThanOrEqual(maxRate) || !p.Equal(p.Truncate(MaxRatePlaces)) || r.FetchedAt.IsZero() {
			l.logger.Warn("skipping an unusable last known price", "coin", r.Coin, "currency", r.Currency, "price", p.String())
			continue
		}
		v := value{v: p, at: r.FetchedAt, sources: slices.Clone(r.Sources)}
		if v.at.After(now) {
			v.at = now // a value cannot be fresher than now
		}
		switch {
		case r.Currency == "USD" && l.coinSet[r.Coin]:
			l.replace(l.coins, r.Coin, v)
		case r.Coin == USDCoin && r.Currency != "USD" && l.fiatSet[r.Currency]:
			l.replace(l.fiat, r.Currency, v)
		default:
			continue
		}
		loaded++
	}
	l.logger.Info("loaded the last known prices", "values", loaded)
	return nil
}

// fetch asks one provider, bounded by FetchTimeout, and checks its quote
// against the table's limits whatever the provider promises.
func (l *Live) fetch(ctx context.Context, p Provider) (Quote, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.FetchTimeout)
	defer cancel()
	q, err := p.Fetch(ctx, slices.Clone(l.cfg.Coins))
	if err != nil {
		return Quote{}, err
	}
	now := l.cfg.Now()
	if q.Time.IsZero() || q.Time.After(now) {
		q.Time = now // a quote cannot be fresher than now
	}
	check := func(section, key string, v decimal.Decimal) error {
		switch {
		case v.Sign() <= 0, v.GreaterThanOrEqual(maxRate), !v.Equal(v.Truncate(MaxRatePlaces)):
			return &ProviderError{Provider: p.Name(), Field: section + "." + key,
				Err: fmt.Errorf("%w: %s is not > 0, below 10^15 with at most %d decimal places", ErrBadQuote, v, MaxRatePlaces)}
		}
		return nil
	}
	for _, sym := range slices.Sorted(maps.Keys(q.USD)) {
		if !coinPattern.MatchString(sym) {
			return Quote{}, &ProviderError{Provider: p.Name(), Field: "USD", Err: fmt.Errorf("%w: %q is not a lower-case asset symbol", ErrBadQuote, clip(sym))}
		}
		if err := check("USD", sym, q.USD[sym]); err != nil {
			return Quote{}, err
		}
	}
	for _, code := range slices.Sorted(maps.Keys(q.Fiat)) {
		if !validCode(code) {
			return Quote{}, &ProviderError{Provider: p.Name(), Field: "Fiat", Err: fmt.Errorf("%w: %q is not an ISO 4217 code", ErrBadQuote, clip(code))}
		}
		if err := check("Fiat", code, q.Fiat[code]); err != nil {
			return Quote{}, err
		}
	}
	return q, nil
}

// stale reports whether a value as of at is too old at now.
func (l *Live) stale(at, now time.Time) bool {
	if l.cfg.MaxAge < 0 {
		return false
	}
	return at.IsZero() || now.Sub(at) > l.cfg.MaxAge
}

// fresher returns the newer of a and b; a wins a tie.
func fresher(a, b value) value {
	if b.at.After(a.at) {
		return b
	}
	return a
}

// lookup returns the value USD would use for coin, stale or not: the coin
// as written, then (for a ticker path) its last segment; the first of
// these with any value, live or from the table, decides, and of its live
// and table values the newer one is used. Callers hold l.mu.
func (l *Live) lookup(coin string) (value, bool) {
	_, v, ok := l.lookupKey(coin)
	return v, ok
}

// lookupKey is lookup, also returning the key whose value it is (the
// coin's symbol when there is none). Callers hold l.mu.
func (l *Live) lookupKey(coin string) (string, value, bool) {
	key := strings.ToLower(coin)
	keys := []string{key}
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		keys = append(keys, key[i+1:])
	}
	for _, k := range keys {
		live, lok := l.coins[k]
		p, tok := l.cfg.Fallback.coins[k]
		switch {
		case lok && tok:
			return k, fresher(live, value{v: p, at: l.tableAt}), true
		case lok:
			return k, live, true
		case tok:
			return k, value{v: p, at: l.tableAt}, true
		}
	}
	return keys[len(keys)-1], value{}, false
}

// fiatValue returns the value Fiat would use for code (known to the
// table, not USD), stale or not. Callers hold l.mu.
func (l *Live) fiatValue(code string) value {
	v := value{at: l.tableAt}
	if i, ok := slices.BinarySearchFunc(l.cfg.Fallback.fiat, code, func(c Currency, code string) int { return strings.Compare(c.Code, code) }); ok {
		v.v = l.cfg.Fallback.fiat[i].PerUSD
	}
	if live, ok := l.fiat[code]; ok {
		v = fresher(live, v)
	}
	return v
}

// staleValue describes the value v (ok: there is one) of coin in
// currency at now.
func staleValue(coin, currency string, v value, ok bool, now time.Time) StaleValue {
	sv := StaleValue{Coin: coin, Currency: currency}
	if ok && !v.at.IsZero() {
		sv.Known, sv.Age = true, now.Sub(v.at)
	}
	return sv
}

// Why returns nil when USD has a price of coin and Fiat a rate of
// currency (an ISO 4217 code, any case; USD and codes the fallback table
// lacks count as priced: they are not a matter of age, nor is a coin
// neither fetched nor in the table: Live cannot say), and otherwise a
// *StaleError naming the first of the two that is missing or older than
// MaxAge, the providers that failed at the last refresh and the age of the
// last known value. price.Why calls it.
func (l *Live) Why(coin, currency string) error {
	now := l.cfg.Now()
	l.mu.RLock()
	defer l.mu.RUnlock()
	key, v, ok := l.lookupKey(coin)
	if !ok && !l.coinSet[key] {
		return nil
	}
	if !ok || l.stale(v.at, now) {
		return l.staleErr([]StaleValue{staleValue(key, "USD", v, ok, now)}, true)
	}
	code := strings.ToUpper(currency)
	if code == "USD" || !l.fiatSet[code] {
		return nil
	}
	if fv := l.fiatValue(code); l.stale(fv.at, now) {
		return l.staleErr([]StaleValue{staleValue(USDCoin, code, fv, true, now)}, false)
	}
	return nil
}

// Stale returns a *StaleError listing those of coins (symbols or ticker
// paths, as for USD; each value once, sorted) whose USD price is missing
// or older than MaxAge, and nil when every one has a fresh price: the
// server's health reports it for the coins it serves.
func (l *Live) Stale(coins []string) error {
	now := l.cfg.Now()
	l.mu.RLock()
	defer l.mu.RUnlock()
	seen := map[string]bool{}
	var values []StaleValue
	for _, c := range coins {
		key, v, ok := l.lookupKey(c)
		if seen[key] {
			continue
		}
		seen[key] = true
		if !ok || l.stale(v.at, now) {
			values = append(values, staleValue(key, "USD", v, ok, now))
		}
	}
	if len(values) == 0 {
		return nil
	}
	slices.SortFunc(values, func(a, b StaleValue) int { return strings.Compare(a.Coin, b.Coin) })
	return l.staleErr(values, true)
}

// Providers returns how each provider fared, in configuration order.
func (l *Live) Providers() []ProviderStatus {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]ProviderStatus, len(l.cfg.Providers))
	for i, p := range l.cfg.Providers {
		out[i] = *l.providers[p.Name()]
	}
	return out
}

// MaxAge returns the age limit: NoMaxAge (negative) when there is none.
func (l *Live) MaxAge() time.Duration { return l.cfg.MaxAge }

// USD returns the USD price of one unit of coin (a symbol or ticker path,
// case-insensitively, as for Table.USD): the newer of the live and table
// values; false when there is none or it is older than MaxAge.
func (l *Live) USD(coin string) (decimal.Decimal, bool) {
	now := l.cfg.Now()
	l.mu.RLock()
	v, ok := l.lookup(coin)
	l.mu.RUnlock()
	if !ok || l.stale(v.at, now) {
		return decimal.Zero, false
	}
	return v.v, true
}

// Currencies returns the fiat database: the fallback table's currencies,
// whatever the age of their rates. Use it to tell a known currency code
// (and its minor unit) from an unknown one; use Fiat for rates.
func (l *Live) Currencies() []Currency { return l.cfg.Fallback.Fiat() }

// Fiat returns the fallback table's currencies, sorted by code, each with
// the newer of its live and table rates; a currency whose rate is older
// than MaxAge is left out. USD is always present at 1. The result is a new
// slice on every call.
func (l *Live) Fiat() []Currency {
	now := l.cfg.Now()
	out := make([]Currency, 0, len(l.cfg.Fallback.fiat))
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, c := range l.cfg.Fallback.fiat {
		if c.Code == "USD" {
			out = append(out, c)
			continue
		}
		v := value{v: c.PerUSD, at: l.tableAt}
		if live, ok := l.fiat[c.Code]; ok {
			v = fresher(live, v)
		}
		if l.stale(v.at, now) {
			continue
		}
		out = append(out, Currency{Code: c.Code, PerUSD: v.v, Decimals: c.Decimals})
	}
	return out
}

// Ages returns, for every configured coin, how old the price USD would use
// is (now minus its as-of time), also when it is too old to be served: the
// "price age per coin" metric. A coin with no price, or only a table price
// of unknown date, is absent.
func (l *Live) Ages() map[string]time.Duration {
	now := l.cfg.Now()
	out := make(map[string]time.Duration, len(l.cfg.Coins))
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, coin := range l.cfg.Coins {
		if v, ok := l.lookup(coin); ok && !v.at.IsZero() {
			out[coin] = now.Sub(v.at)
		}
	}
	return out
}

// Coins returns the symbols Live fetches, sorted.
func (l *Live) Coins() []string {
	out := slices.Clone(l.cfg.Coins)
	slices.Sort(out)
	return out
}

// Start refreshes at once and then every TTL in one background goroutine
// until Stop; it returns once that goroutine runs. Failed refreshes are
// logged and retried at the next tick. ctx's values reach the providers,
// its cancellation does not: Stop ends the loop. A Live starts once: a
// second Start, or a Start after Stop, returns startstop.ErrStarted.
func (l *Live) Start(ctx context.Context) error {
	ctx, err := l.StartInit(ctx)
	if err != nil {
		return err
	}
	tick, stopTick := l.cfg.Tick(l.cfg.TTL)
	if !l.Go(func() {
		defer stopTick()
		for {
			_ = l.Refresh(ctx) // logged by Refresh
			select {
			case <-ctx.Done():
				return
			case <-tick:
			}
		}
	}) {
		stopTick() // stopped while starting
	}
	return nil
}

// Stop ends background refreshing and waits for a Refresh in flight to
// return (its requests are cancelled). It is idempotent; Refresh may still
// be called afterwards.
func (l *Live) Stop() { l.Base.Stop() }
