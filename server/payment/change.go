package payment

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
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

// Change is what happened to one payment, published to the reactor that
// owns its address inside the transaction that records it: whatever a
// reactor stores (its notifications) commits or rolls back with the
// payment's new state.
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
	// First is set when the transaction that publishes the change recorded
	// the payment: nothing was ever published of it before.
	First bool
}

// Reactor turns payment changes into what one service owes its merchants:
// the low-level callback of an address, the webhooks of checkouts,
// deposits and subscriptions. React runs inside the transaction that
// records the changes, once per transaction and service with the changes
// of the addresses of that service, in the order they happened, and must use tx for
// everything it stores; an error rolls the changes back (the watcher
// applies them again at its next poll). React must not send anything
// itself: what it stores is sent after commit.
type Reactor interface {
	React(ctx context.Context, tx *entdb.Tx, changes []Change) error
}

// ReactorFunc adapts a function to a Reactor.
type ReactorFunc func(ctx context.Context, tx *entdb.Tx, changes []Change) error

// React implements Reactor.
func (f ReactorFunc) React(ctx context.Context, tx *entdb.Tx, changes []Change) error {
	return f(ctx, tx, changes)
}

// WrongAssetService is the Reactors key of the reactor that owns the
// changes of payments held as wrong_asset, whatever their address's
// service.
const WrongAssetService = "wrong_asset"

// Reactors routes a change to the reactor that owns its address: the key is
// the address's service (Address.service: address, custom, checkout,
// deposit, subscription). A change of a service no reactor owns fails its
// transaction: nothing is recorded that nobody would notify.
type Reactors map[string]Reactor

// changes collects what one transaction publishes; react hands them over
// before the transaction commits.
type changes []Change

// publish adds c to what the transaction publishes.
func (cs *changes) publish(c Change) { *cs = append(*cs, c) }

// react hands the transaction's changes to the reactors that own their
// addresses: once per service, with that service's changes in order, the
// services in the order of their first change.
func (s *Service) react(ctx context.Context, tx *entdb.Tx, cs changes) error {
	if len(cs) == 0 {
		return nil
	}
	var order []string
	byService := map[string][]Change{}
	for _, c := range cs {
		svc := c.Address.Service
		if c.Payment != nil && c.Payment.HoldReason == entpayment.HoldReasonWrongAsset {
			// Another asset than the address takes: the merchant hears of
			// it once, by a wrong_asset webhook, not by its service's.
			svc = WrongAssetService
		}
		if _, ok := s.reactors[svc]; !ok {
			return fmt.Errorf("no reactor owns the %s address %s", svc, c.Address.AddressIn)
		}
		if byService[svc] == nil {
			order = append(order, svc)
		}
		byService[svc] = append(byService[svc], c)
	}
	for _, svc := range order {
		if err := s.reactors[svc].React(ctx, tx, byService[svc]); err != nil {
			return err
		}
	}
	return nil
}
