package pay

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/refund"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// DefaultPollInterval is how often a page's script asks for the status.
const DefaultPollInterval = 3 * time.Second

// Config configures the hosted pages.
type Config struct {
	// DB is the database (projects, for the coins they accept).
	DB *entdb.Client
	// Invoices finds checkouts, deposits and renewals and hands out their
	// addresses.
	Invoices *invoice.Service
	// Subscriptions finds subscriptions and opens their renewals.
	Subscriptions *subscription.Service
	// Addresses knows the offered coins.
	Addresses *address.Service
	// Refunds records the refunds payers ask for; nil offers none.
	Refunds *refund.Service
	// Prices tell which coins can be quoted in an invoice's currency.
	Prices price.Source
	// Mempool tells what waits in a chain's mempool for an address, so a
	// payer sees a payment detected before its first block; nil shows
	// payments from their block.
	Mempool Mempool
	// Now is the clock (clock.UTC when nil).
	Now func() time.Time
	// PollInterval is how often the page's script polls status.json
	// (DefaultPollInterval when 0).
	PollInterval time.Duration
	// Logger logs failures that the customer sees only as "try again".
	Logger *slog.Logger
}

// Mempool is what the pages need of the chain watchers
// (payment.Service.Detected): the transfers to address of ticker that wait
// for a block. A transfer there is no payment: it is only shown.
type Mempool interface {
	Detected(ctx context.Context, ticker, address string) []chains.Transfer
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = clock.UTC
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first field that cannot serve pages.
func (c Config) Validate() error {
	switch {
	case c.DB == nil:
		return fmt.Errorf("%w: DB is required", ErrConfig)
	case c.Invoices == nil:
		return fmt.Errorf("%w: Invoices is required", ErrConfig)
	case c.Subscriptions == nil:
		return fmt.Errorf("%w: Subscriptions is required", ErrConfig)
	case c.Addresses == nil:
		return fmt.Errorf("%w: Addresses is required", ErrConfig)
	case c.PollInterval < 100*time.Millisecond:
		return fmt.Errorf("%w: PollInterval %s is below 100ms", ErrConfig, c.PollInterval)
	}
	return nil
}
