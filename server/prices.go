package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/pricequote"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/metrics"
)

// pricesMode returns Prices, defaulted: live with nodes, else the table.
func (c ChainsConfig) pricesMode() string {
	if c.Prices != "" {
		return c.Prices
	}
	if len(c.Nodes) > 0 {
		return PricesLive
	}
	return PricesTable
}

// defaultPriceProviders are the live providers when none are named: three
// for coins (Coinbase also quotes fiat), so that the median outvotes one
// wrong answer and survives two providers down, and the ECB's rates
// through Frankfurter for fiat.
var defaultPriceProviders = []string{"coinbase", "coingecko", "kraken", "frankfurter"}

// minCoinProviders is how many coin providers a median needs to outvote
// one wrong answer; fewer are accepted with a warning.
const minCoinProviders = 3

// buildLivePrices builds the live feed over table, keeping its last known
// good values in store.
func buildLivePrices(cfg ChainsConfig, table *price.Table, store price.Store, now func() time.Time, logger *slog.Logger) (*price.Live, error) {
	names := cfg.PriceProviders
	if len(names) == 0 {
		names = defaultPriceProviders
	}
	var providers []price.Provider
	coinProviders := 0
	for _, spec := range names {
		name, base, _ := strings.Cut(spec, "=")
		var (
			p   price.Provider
			err error
		)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "coinbase":
			p, err = price.NewCoinbase(price.CoinbaseConfig{BaseURL: base, Now: now})
		case "coingecko":
			p, err = price.NewCoinGecko(price.CoinGeckoConfig{BaseURL: base, Now: now})
		case "kraken":
			p, err = price.NewKraken(price.KrakenConfig{BaseURL: base, Now: now})
		case "frankfurter":
			p, err = price.NewFrankfurter(price.FrankfurterConfig{BaseURL: base, Now: now})
		default:
			err = fmt.Errorf("unknown provider %q: want coinbase, coingecko, kraken or frankfurter", name)
		}
		if err != nil {
			return nil, fmt.Errorf("--price-provider %s: %w", spec, err)
		}
		if c, ok := p.(price.Coverer); ok {
			if coins, _ := c.Covers(); coins {
				coinProviders++
			}
		}
		providers = append(providers, p)
	}
	if coinProviders < minCoinProviders {
		logger.Warn("fewer than three coin price providers: one wrong answer cannot be outvoted, and one outage leaves no median",
			"coin_providers", coinProviders)
	}
	live, err := price.NewLive(price.LiveConfig{Providers: providers, Fallback: table, Store: store,
		TTL: cfg.PriceTTL, MaxAge: cfg.PriceMaxAge, Now: now}, logger)
	if err != nil {
		return nil, fmt.Errorf("live prices: %w", err)
	}
	return live, nil
}

// loadPrices reads the last known good prices into the live feed, before
// anything is served: a restart without network access still knows them
// and their age.
func (s *Server) loadPrices(ctx context.Context) error {
	if s.livePrices == nil {
		return nil
	}
	return s.livePrices.Load(ctx)
}

// RefreshPrices asks the live price providers now (Start does so every
// --price-ttl; with ManualDelivery only this does). It returns Refresh's
// error; nil with the table.
func (s *Server) RefreshPrices(ctx context.Context) error {
	if s.livePrices == nil {
		return nil
	}
	return s.livePrices.Refresh(ctx)
}

// stalePrices returns the *price.StaleError of the coins payhook serves
// that have no fresh price (nil when all have one, or with the table).
func (s *Server) stalePrices() *price.StaleError {
	if s.livePrices == nil {
		return nil
	}
	var se *price.StaleError
	if errors.As(s.livePrices.Stale(s.pricedTickers), &se) {
		return se
	}
	return nil
}

// degraded returns why /healthz reports degraded, "" when it does not: a
// coin payhook serves has no fresh price, so checkouts in it fail.
func (s *Server) degraded() string {
	if se := s.stalePrices(); se != nil {
		return se.Error()
	}
	return ""
}

// priceAlert is what this instance knows of the operator's price alerts:
// the start of the episode of stale prices it has emailed about (zero
// while prices are fresh, or before the first email).
type priceAlert struct {
	mu    sync.Mutex
	since time.Time
}

// priceCheckInterval is how often the server looks whether prices went
// stale, to email the operator (a minute late at most).
const priceCheckInterval = time.Minute

// watchPrices checks the prices every priceCheckInterval until ctx ends.
func (s *Server) watchPrices(ctx context.Context) {
	t := time.NewTicker(priceCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.CheckPrices(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("email the operator about stale prices: trying again at the next check", "error", err)
		}
	}
}

// CheckPrices emails the operator (--operator-email) when a coin payhook
// serves has no fresh price (what /healthz reports as degraded): once per
// episode, from the first check that finds the prices stale until one
// finds them fresh again. The episode's start, which names the email
// (its dedupe key), is when the freshest stored price of a stale coin
// became too old (price_quotes, which every instance writes), so the
// instances on one database, and this one after a restart, send one
// email per episode; with no stored price at all it is this check's time.
// Before the first refresh of prices has finished nothing is sent. The
// server checks every minute (priceCheckInterval); with ManualDelivery
// only this does. It does nothing when email is off or prices are the
// table.
func (s *Server) CheckPrices(ctx context.Context) error {
	if s.mail == nil || s.livePrices == nil {
		return nil
	}
	se := s.stalePrices()
	s.priceAlert.mu.Lock()
	defer s.priceAlert.mu.Unlock()
	switch {
	case se == nil:
		s.priceAlert.since = time.Time{} // the episode is over
		return nil
	case se.Pending || !s.priceAlert.since.IsZero():
		return nil
	}
	since, err := s.staleSince(ctx, se)
	if err != nil {
		return err
	}
	if err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		return s.mail.PriceDegraded(ctx, tx, since, se.Error())
	}); err != nil {
		return err
	}
	s.priceAlert.since = since
	s.logger.Warn("prices stale: the operator is emailed", "since", since, "reason", se.Error())
	return nil
}

// staleSince is when the episode of se began: the earliest time a stale
// coin's freshest stored price passed the maximum age; now when none of
// them has a stored price.
func (s *Server) staleSince(ctx context.Context, se *price.StaleError) (time.Time, error) {
	var coins []string
	for _, v := range se.Values {
		if v.Currency == "USD" {
			coins = append(coins, v.Coin)
		}
	}
	since := s.cfg.Now()
	if len(coins) == 0 {
		return since, nil
	}
	rows, err := s.db.Client.PriceQuote.Query().
		Where(pricequote.CurrencyEQ("USD"), pricequote.CoinIn(coins...)).
		Select(pricequote.FieldFetchedAt).All(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored prices of %v: %w", coins, err)
	}
	for i, r := range rows {
		if at := r.FetchedAt.Add(s.livePrices.MaxAge()); i == 0 || at.Before(since) {
			since = at
		}
	}
	return since.UTC(), nil
}

// priceStats feeds the price metrics.
func (s *Server) priceStats() metrics.PriceStats {
	st := metrics.PriceStats{Ages: s.livePrices.Ages(), MaxAge: s.livePrices.MaxAge()}
	if se := s.stalePrices(); se != nil {
		st.Stale = len(se.Values)
	}
	for _, p := range s.livePrices.Providers() {
		st.Providers = append(st.Providers, metrics.PriceProvider{Name: p.Name, Up: p.Up, Failures: p.Failures})
	}
	return st
}

// priceStore keeps the live feed's last known good values in price_quotes.
type priceStore struct{ db *entdb.Client }

// LoadPrices implements price.Store.
func (s priceStore) LoadPrices(ctx context.Context) ([]price.Record, error) {
	rows, err := s.db.PriceQuote.Query().All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]price.Record, len(rows))
	for i, r := range rows {
		out[i] = price.Record{Coin: r.Coin, Currency: r.Currency, Price: r.Price, Sources: r.Sources, FetchedAt: r.FetchedAt}
	}
	return out, nil
}

// SavePrices implements price.Store: one upsert, which leaves a row alone
// when another instance saved a newer value.
func (s priceStore) SavePrices(ctx context.Context, recs []price.Record) error {
	creates := make([]*entdb.PriceQuoteCreate, len(recs))
	for i, r := range recs {
		creates[i] = s.db.PriceQuote.Create().SetCoin(r.Coin).SetCurrency(r.Currency).SetPrice(r.Price).
			SetSources(r.Sources).SetFetchedAt(r.FetchedAt.UTC())
	}
	// Plain identifiers (lower case, not reserved) read the same in both
	// dialects; ent's column helpers would qualify "excluded" on PostgreSQL.
	newer := sql.ExprP("excluded." + pricequote.FieldFetchedAt + " > " + pricequote.Table + "." + pricequote.FieldFetchedAt)
	return s.db.PriceQuote.CreateBulk(creates...).
		OnConflict(sql.ConflictColumns(pricequote.FieldCoin, pricequote.FieldCurrency), sql.ResolveWithNewValues(), sql.UpdateWhere(newer)).
		Exec(ctx)
}
