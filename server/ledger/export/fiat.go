package export

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
)

// usdCoin is the coin of a stored fiat rate: one US dollar in a currency
// (chains/price.USDCoin; chains/price is not imported for one constant).
const usdCoin = "usd"

// quote is one stored price.
type quote struct {
	price   decimal.Decimal
	sources []string
	at      time.Time
}

// priceBook is price_quotes, read once per export: the last known price of
// each coin in USD and of one US dollar in each currency. The table holds
// one row per coin and currency, so it is small.
type priceBook struct {
	coins  map[string]quote // by lower-case symbol or ticker
	fiat   map[string]quote // by currency code
	maxAge time.Duration
}

func loadPrices(ctx context.Context, db *entdb.Client, maxAge time.Duration) (*priceBook, error) {
	qs, err := db.PriceQuote.Query().All(ctx)
	if err != nil {
		return nil, fmt.Errorf("export: stored prices: %w", err)
	}
	b := &priceBook{coins: map[string]quote{}, fiat: map[string]quote{}, maxAge: maxAge}
	for _, q := range qs {
		v := quote{price: q.Price, sources: q.Sources, at: q.FetchedAt}
		switch {
		case q.Coin == usdCoin:
			b.fiat[q.Currency] = v
		case q.Currency == "USD":
			b.coins[strings.ToLower(q.Coin)] = v
		}
	}
	return b, nil
}

// at is the rate of t in currency at time when, and its source
// ("price:" and the providers), when a stored price of the coin (and of
// the currency, unless USD) was fetched within maxAge of when.
func (b *priceBook) at(t chains.Ticker, currency string, when time.Time) (decimal.Decimal, string, bool) {
	q, ok := b.coins[strings.ToLower(t.Ticker)]
	if !ok {
		q, ok = b.coins[strings.ToLower(t.Coin)]
	}
	if !ok || !b.near(q.at, when) || !q.price.IsPositive() {
		return decimal.Zero, "", false
	}
	rate, sources := q.price, slices.Clone(q.sources)
	if currency != "USD" {
		f, ok := b.fiat[currency]
		if !ok || !b.near(f.at, when) || !f.price.IsPositive() {
			return decimal.Zero, "", false
		}
		rate = rate.Mul(f.price)
		for _, s := range f.sources {
			if !slices.Contains(sources, s) {
				sources = append(sources, s)
			}
		}
	}
	slices.Sort(sources)
	return rate, "price:" + strings.Join(sources, "+"), true
}

func (b *priceBook) near(fetched, when time.Time) bool {
	d := fetched.Sub(when)
	return d <= b.maxAge && d >= -b.maxAge
}
