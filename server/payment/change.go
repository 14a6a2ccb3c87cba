package payment

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
)

// ChangeKind says what happened to a payment.
type ChangeKind string

// Kinds of Change, in the order a payment goes through them. A payment is
// Detected once (pending, or confirmed at once when one confirmation is
// enough), reports Depth while pending and its count grows, is Confirmed
// (credited) once and Distributed (forwarded) once.
const (
	// Detected: the payment was seen in a block for the first time.
	Detected ChangeKind = "detected"
	// Depth: a pending payment's confirmation count grew.
	Depth ChangeKind = "depth"
	// Confirmed: the payment reached its required confirmations and is
	// credited; this happens exactly once.
	Confirmed ChangeKind = "confirmed"
	// Distributed: the payment's funds were forwarded; this happens exactly
	// once, after Confirmed.
	Distributed ChangeKind = "distributed"
)

// Change is what happened to one payment, published to the reactors inside
// the transaction that records it: whatever a reactor stores (its
// notifications) commits or rolls back with the payment's new state.
//
// Only changes a merchant is told of are published: a low-level payment
// below the minimum, or one the fees would consume, publishes none; neither
// does a payment that was dropped or reverted. A merchant address's payment
// below the minimum is published as any other: it is held for the minimum
// and, with its address's next payments, Distributed once.
type Change struct {
	// Kind is what happened.
	Kind ChangeKind
	// Ticker is the payment's coin and network.
	Ticker chains.Ticker
	// Address is the payment address the funds arrived on.
	Address *entdb.Address
	// Payment is the payment as recorded after the change.
	Payment *entdb.Payment
	// Status is the payment status to report: pending, confirmed or
	// completed (chains.StatusPending, ...).
	Status chains.Status
	// Confirmations is the depth recorded (never lower than before).
	Confirmations int64
	// ValueCoin is the amount received, in coin units.
	ValueCoin decimal.Decimal
	// Forward is the distribution, set only for Distributed: the amounts
	// forwarded, the fees and the forwarding transaction's hash.
	Forward *entdb.Forward
}

// Reactor turns payment changes into what one service owes its merchants:
// the low-level callback of an address, and later the webhooks of checkouts,
// deposits and subscriptions. React runs inside the transaction that
// records the change and must use tx for everything it stores; an error
// rolls the change back (the watcher applies it again at its next poll).
// React must not send anything itself: what it stores is sent after commit.
type Reactor interface {
	React(ctx context.Context, tx *entdb.Tx, c Change) error
}

// ReactorFunc adapts a function to a Reactor.
type ReactorFunc func(ctx context.Context, tx *entdb.Tx, c Change) error

// React implements Reactor.
func (f ReactorFunc) React(ctx context.Context, tx *entdb.Tx, c Change) error { return f(ctx, tx, c) }

// publish tells every reactor of c, in registration order, within tx.
func (s *Service) publish(ctx context.Context, tx *entdb.Tx, c Change) error {
	for _, r := range s.reactors {
		if err := r.React(ctx, tx, c); err != nil {
			return err
		}
	}
	return nil
}
