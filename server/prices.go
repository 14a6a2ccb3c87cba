package server

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/payhook/payhook/chains/price"
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

// defaultPriceProviders are the live providers when none are named: two
// for coins (Coinbase also quotes fiat), and the ECB's rates through
// Frankfurter for fiat.
var defaultPriceProviders = []string{"coinbase", "coingecko", "frankfurter"}

// buildLivePrices builds the live feed over table.
func buildLivePrices(cfg ChainsConfig, table *price.Table, now func() time.Time, logger *slog.Logger) (*price.Live, error) {
	names := cfg.PriceProviders
	if len(names) == 0 {
		names = defaultPriceProviders
	}
	var providers []price.Provider
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
		case "frankfurter":
			p, err = price.NewFrankfurter(price.FrankfurterConfig{BaseURL: base, Now: now})
		default:
			err = fmt.Errorf("unknown provider %q: want coinbase, coingecko or frankfurter", name)
		}
		if err != nil {
			return nil, fmt.Errorf("--price-provider %s: %w", spec, err)
		}
		providers = append(providers, p)
	}
	live, err := price.NewLive(price.LiveConfig{Providers: providers, Fallback: table, TTL: cfg.PriceTTL, MaxAge: cfg.PriceMaxAge, Now: now}, logger)
	if err != nil {
		return nil, fmt.Errorf("live prices: %w", err)
	}
	return live, nil
}
