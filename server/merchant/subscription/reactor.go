package subscription

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entsub "github.com/payhook/payhook/ent/db/subscription"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// ServiceLabel is the notifier label (Subject.Service) of renewal webhooks.
const ServiceLabel = "subscription"

// Reactor is the reactor of renewals: for every change of a payment to a
// renewal's address it values the payment in the subscription's currency
// (once, when detected), updates the renewal's invoice_status, extends the
// subscription when the renewal becomes paid (once) and stores the webhook
// subscription.payment.<status>, signed per attempt with the project's IPN
// secret.
type Reactor struct {
	queue  address.Enqueuer
	prices price.Source
	scheme string
	now    func() time.Time
}

// NewReactor returns the reactor; scheme names the notifier's per-attempt
// signer of merchant webhooks.
func NewReactor(q address.Enqueuer, prices price.Source, scheme string, now func() time.Time) *Reactor {
	return &Reactor{queue: q, prices: prices, scheme: scheme, now: now}
}

// React implements payment.Reactor.
func (r *Reactor) React(ctx context.Context, tx *entdb.Tx, c payment.Change) error {
	a := c.Address
	if a.InvoiceID == nil {
		return nil
	}
	inv, err := tx.Invoice.Get(ctx, *a.InvoiceID)
	if err != nil {
		return fmt.Errorf("invoice of %s: %w", a.AddressIn, err)
	}
	if inv.Kind != entinvoice.KindSubscription || inv.SubscriptionID == nil {
		return nil // checkouts and deposits have their own reactor
	}
	// Take turns with other watchers' transactions on this renewal (see
	// invoice.Lock), so it is paid, and the subscription extended, once.
	if inv, err = invoice.Lock(ctx, tx, inv.ID, r.now()); err != nil {
		return fmt.Errorf("renewal of %s: %w", a.AddressIn, err)
	}
	if inv.SubscriptionID == nil {
		return nil // checkouts and deposits have their own reactor
	}
	sub, err := tx.Subscription.Get(ctx, *inv.SubscriptionID)
	if err != nil {
		return fmt.Errorf("subscription of renewal %s: %w", inv.PublicID, err)
	}
	p := c.Payment
	if p.ValueFiat == nil {
		if f := invoice.ValueFiat(r.prices, c.Ticker, a, inv, p, c.ValueCoin); f != nil {
			if err := tx.Payment.UpdateOneID(p.ID).SetValueFiat(*f).Exec(ctx); err != nil {
				return fmt.Errorf("value payment %d: %w", p.ID, err)
			}
			p.ValueFiat = f
		}
	}
	now := r.now()
	status, err := invoice.StatusAfter(ctx, tx, inv, p, c.Status, now)
	if err != nil {
		return err
	}
	if status != invoice.Status(inv.Status) {
		u := tx.Invoice.UpdateOneID(inv.ID).SetStatus(entinvoice.Status(status)).SetUpdatedAt(now)
		first := status == invoice.Paid && inv.PaidAt == nil
		if first {
			u.SetPaidAt(now)
		}
		if err := u.Exec(ctx); err != nil {
			return fmt.Errorf("update renewal %s: %w", inv.PublicID, err)
		}
		if first {
			if err := r.extend(ctx, tx, sub, inv, now); err != nil {
				return err
			}
		}
	}
	if sub.NotifyURL == "" {
		return nil
	}
	m, err := r.message(c, sub, inv, status)
	if err != nil {
		return err
	}
	_, err = r.queue.Enqueue(ctx, tx, m)
	return err
}

// extend moves the subscription's end by the renewal's period from the
// later of now and its current end. The update is conditional on the end
// it read, so a concurrent extension (another coin's watcher) is never
// lost: the loser reads again and extends from the new end.
func (r *Reactor) extend(ctx context.Context, tx *entdb.Tx, sub *entdb.Subscription, inv *entdb.Invoice, now time.Time) error {
	per, err := ParsePeriod(inv.Option)
	if err != nil {
		return fmt.Errorf("renewal %s: %w", inv.PublicID, err)
	}
	for range 8 {
		from := now
		cond := entsub.ExpiresAtIsNil()
		if sub.ExpiresAt != nil {
			cond = entsub.ExpiresAtEQ(*sub.ExpiresAt)
			if sub.ExpiresAt.After(now) {
				from = *sub.ExpiresAt
			}
		}
		n, err := tx.Subscription.Update().Where(entsub.ID(sub.ID), cond).
			SetExpiresAt(AddPeriod(from, per)).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("extend subscription %s: %w", sub.Token, err)
		}
		if n == 1 {
			return nil
		}
		if sub, err = tx.Subscription.Get(ctx, sub.ID); err != nil {
			return fmt.Errorf("extend subscription: %w", err)
		}
	}
	return fmt.Errorf("extend subscription %s: concurrent extensions did not settle", sub.Token)
}

// message builds the webhook of c.
func (r *Reactor) message(c payment.Change, sub *entdb.Subscription, inv *entdb.Invoice, status invoice.Status) (notifier.Message, error) {
	t, p := c.Ticker, c.Payment
	id := uuid.NewString()
	st := Stage{
		UUID: id, Token: sub.Token, PaymentID: inv.PublicID, Option: inv.Option,
		PaymentStatus: c.Status, InvoiceStatus: status, OptionValue: inv.Value,
		Currency: inv.Currency, FiatPlaces: invoice.FiatPlaces(r.prices, inv.Currency),
		Ticker: t, PaidCoin: c.ValueCoin, PaidFiat: p.ValueFiat, TxidIn: p.TxidIn, Confirmations: c.Confirmations,
	}
	if c.Forward != nil {
		st.ReceivedCoin = &c.Forward.ValueForwardedCoin
		st.TxidOut = c.Forward.TxidOut
	}
	req, err := payload.Encode(sub.NotifyURL, payload.TransportFor(sub.Post, sub.JSON), Fields(st), nil)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("encode webhook of %s: %w", inv.PublicID, err)
	}
	return notifier.Message{
		UUID:  id,
		Owner: sub.ProjectID,
		Subject: notifier.Subject{
			Service:  ServiceLabel,
			Event:    EventType(c.Status),
			Ref:      sub.Token,
			Topic:    t.Ticker,
			Sequence: invoice.Sequence(p.ID),
		},
		Request: req,
		Signing: notifier.Signing{Scheme: r.scheme, Key: project.KeyRef(sub.ProjectID)},
	}, nil
}
