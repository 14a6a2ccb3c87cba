package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestPriceStoreKeepsTheNewest: the last known good values survive in
// price_quotes, one row per coin and currency, and an older value (another
// instance's, saved late) never replaces a newer one.
func TestPriceStoreKeepsTheNewest(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		s := priceStore{db.Client}
		at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		rec := func(coin, currency, v string, at time.Time, sources ...string) price.Record {
			return price.Record{Coin: coin, Currency: currency, Price: decimal.RequireFromString(v), Sources: sources, FetchedAt: at}
		}
		for _, batch := range [][]price.Record{
			{rec("ltc", "USD", "84", at, "coinbase", "coingecko", "kraken"), rec(price.USDCoin, "EUR", "0.902915", at, "coinbase", "frankfurter")},
			{rec("ltc", "USD", "92", at.Add(5*time.Minute), "coingecko", "kraken")},
			{rec("ltc", "USD", "1", at.Add(time.Minute), "stale"), rec("btc", "USD", "67189.9", at.In(time.FixedZone("X", 3600)), "kraken")},
		} {
			if err := s.SavePrices(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.LoadPrices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b price.Record) int { return strings.Compare(a.Coin+a.Currency, b.Coin+b.Currency) })
		want := []price.Record{
			rec("btc", "USD", "67189.9", at, "kraken"),
			rec("ltc", "USD", "92", at.Add(5*time.Minute), "coingecko", "kraken"),
			rec(price.USDCoin, "EUR", "0.902915", at, "coinbase", "frankfurter"),
		}
		if len(got) != len(want) {
			t.Fatalf("records %+v, want %+v", got, want)
		}
		for i := range want {
			g, w := got[i], want[i]
			if g.Coin != w.Coin || g.Currency != w.Currency || !g.Price.Equal(w.Price) || !slices.Equal(g.Sources, w.Sources) || !g.FetchedAt.Equal(w.FetchedAt) {
				t.Errorf("record %d: %+v, want %+v", i, g, w)
			}
		}
	})
}
