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
	// Providers are asked in this order, the first that quotes a value
	// winning; at least one.
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
}

// Live is a Source of live prices: values fetched from providers, cached
// with their fetch time, the fallback table beneath, and anything older
// than MaxAge omitted. It is safe for concurrent use. See the package
// documentation for the rules.
type Live struct {
	cfg     LiveConfig
	logger  *slog.Logger
	tableAt time.Time // the fallback's as_of, midnight UTC; zero when it has none
	fiatSet map[string]bool

	refreshMu sync.Mutex // one Refresh at a time

	mu    sync.RWMutex
	coins map[string]value // by symbol, only cfg.Coins
	fiat  map[string]value // by code, only the fallback's codes, never USD

	startstop.Base
}

// NewLive returns a Live source with an empty cache: until the first
// successful Refresh it serves the fallback table (subject to MaxAge). It
// does not start refreshing; call Refresh, Start, or both. A nil logger
// discards.
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
		cfg:     cfg,
		logger:  logger,
		fiatSet: map[string]bool{},
		coins:   map[string]value{},
		fiat:    map[string]value{},
	}
	if cfg.Fallback.asOf != "" {
		l.tableAt, _ = time.Parse(time.DateOnly, cfg.Fallback.asOf) // validated by Load
	}
	for _, c := range cfg.Fallback.fiat {
		l.fiatSet[c.Code] = true
	}
	return l, nil
}

// Refresh asks the providers in order for the coins and fiat rates, and
// caches what they quote with each quote's fetch time. The first provider
// that quotes a coin or currency wins; a provider that fails (or answers
// with anything invalid: nothing of that answer is used) is logged and the
// next one is asked. Asking stops once every coin and every currency of
// the fallback table is quoted. A cached value is only ever replaced by a
// newer one. Values no provider quoted keep their old as-of time and age.
// Refresh returns an error wrapping ErrNoQuote, joined with every
// provider's error, when no provider answered; the cache is then
// unchanged. Concurrent calls run one after the other.
func (l *Live) Refresh(ctx context.Context) error {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()

	needCoins := make(map[string]bool, len(l.cfg.Coins))
	for _, c := range l.cfg.Coins {
		needCoins[c] = true
	}
	needFiat := make(map[string]bool, len(l.fiatSet))
	for code := range l.fiatSet {
		if code != "USD" {
			needFiat[code] = true
		}
	}
	coins := map[string]value{}
	fiat := map[string]value{}
	var errs []error
	answered := false
	for _, p := range l.cfg.Providers {
		if len(needCoins) == 0 && len(needFiat) == 0 {
			break
		}
		if ctx.Err() != nil {
			errs = append(errs, ctx.Err())
			break
		}
		q, err := l.fetch(ctx, p)
		if err != nil {
			if ctx.Err() == nil { // not a Stop
				l.logger.Warn("price provider failed; asking the next", "provider", p.Name(), "error", err)
			}
			errs = append(errs, err)
			continue
		}
		answered = true
		for sym, v := range q.USD {
			if needCoins[sym] {
				coins[sym] = value{v: v, at: q.Time}
				delete(needCoins, sym)
			}
		}
		for code, v := range q.Fiat {
			if needFiat[code] {
				fiat[code] = value{v: v, at: q.Time}
				delete(needFiat, code)
			}
		}
	}
	if !answered {
		err := errors.Join(append([]error{ErrNoQuote}, errs...)...)
		if ctx.Err() == nil {
			l.logger.Error("no price provider answered; serving cached and fallback prices", "error", err)
		}
		return err
	}
	l.logger.Debug("prices refreshed", "coins", len(coins), "fiat", len(fiat),
		"coins_unquoted", len(needCoins), "fiat_unquoted", len(needFiat))

	l.mu.Lock()
	defer l.mu.Unlock()
	for sym, v := range coins {
		if old, ok := l.coins[sym]; !ok || v.at.After(old.at) {
			l.coins[sym] = v
		}
	}
	for code, v := range fiat {
		if old, ok := l.fiat[code]; !ok || v.at.After(old.at) {
			l.fiat[code] = v
		}
	}
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
			return fresher(live, value{v: p, at: l.tableAt}), true
		case lok:
			return live, true
		case tok:
			return value{v: p, at: l.tableAt}, true
		}
	}
	return value{}, false
}

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

// Fiat returns the fallback table's currencies, sorted by code, each with
// the newer of its live and table rates; a currency whose rate is older
// than MaxAge is left out. USD is always present at 1. The result is a new
// slice on every call.
// Currencies returns the fiat database: the fallback table's currencies,
// whatever the age of their rates. Use it to tell a known currency code
// (and its minor unit) from an unknown one; use Fiat for rates.
func (l *Live) Currencies() []Currency { return l.cfg.Fallback.Fiat() }

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
