package invoice

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
)

// The rules below are the checkout reactor's, exported so that the
// renewals of subscriptions (an invoice of kind subscription, with its own
// reactor) are valued and settled exactly like checkouts.

// ValueFiat values payment p of inv's address a in inv's currency: at the
// address's held rate when detected before the quote expired, otherwise at
// the current rate; nil when no rate is known.
func ValueFiat(prices price.Source, t chains.Ticker, a *entdb.Address, inv *entdb.Invoice, p *entdb.Payment, value decimal.Decimal) *decimal.Decimal {
	return (&Reactor{prices: prices}).valueFiat(t, a, inv, p, value)
}

// StatusAfter computes inv's invoice_status at now after a change of
// payment changed to status st, from every payment of the invoice.
func StatusAfter(ctx context.Context, tx *entdb.Tx, inv *entdb.Invoice, changed *entdb.Payment, st chains.Status, now time.Time) (Status, error) {
	return (&Reactor{now: func() time.Time { return now }}).status(ctx, tx, inv, changed, st)
}

// FiatPlaces is the minor unit of currency (2 when unknown).
func FiatPlaces(prices price.Source, currency string) int32 {
	return (&Reactor{prices: prices}).fiatPlaces(currency)
}

// States returns what the status rules need of stored payments, leaving
// out those that never count (dropped, reverted).
func States(pays []*entdb.Payment) []PaymentState {
	out := make([]PaymentState, 0, len(pays))
	for _, p := range pays {
		if counts(p.Status) {
			out = append(out, stateOf(p))
		}
	}
	return out
}
