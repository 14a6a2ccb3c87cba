package price

import (
	"context"
	"time"

	"github.com/shopspring/decimal"
)

// Store keeps Live's last known good values across restarts: every median
// a refresh makes is saved, and Live.Load reads them back at start, so a
// server restarted without network access still knows its prices and how
// old they are. The server implements it over its database; this package
// knows no database.
type Store interface {
	// LoadPrices returns every record kept.
	LoadPrices(ctx context.Context) ([]Record, error)
	// SavePrices keeps records, each replacing the record of its coin and
	// currency unless that one is newer (several instances may save).
	SavePrices(ctx context.Context, records []Record) error
}

// USDCoin is the Coin of a Record that holds a fiat rate: the price of one
// US dollar in the record's Currency.
const USDCoin = "usd"

// Record is one last known good value: the price of one unit of Coin in
// Currency. A coin's price is kept as (symbol, "USD"), a fiat rate as
// (USDCoin, code): what Live caches, the USD price of each coin and the
// units of each currency one US dollar buys.
type Record struct {
	// Coin is a lower-case asset symbol, or USDCoin.
	Coin string
	// Currency is an ISO 4217 code: "USD" for a coin's price.
	Currency string
	// Price is > 0, below 10^15, with at most MaxRatePlaces places.
	Price decimal.Decimal
	// Sources are the providers whose answers made the median, sorted.
	Sources []string
	// FetchedAt is the value's as-of time: the oldest of those answers.
	FetchedAt time.Time
}
