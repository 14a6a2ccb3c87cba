package subscription

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entsub "github.com/payhook/payhook/ent/db/subscription"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// ServiceLabel is the notifier label (Subject.Service) of renewal webhooks.
const ServiceLabel = "subscription"

// Hooks are the renewals' part of the invoice reactor (invoice.Reactor),
// which values, settles and locks renewals as it does checkouts: when a
// renewal is paid the first time its subscription is extended (once), and
// its webhooks are subscription.payment.<status>, signed per attempt with
// the project's IPN secret.
type Hooks struct {
	prices price.Source
	scheme string
}

// NewHooks returns the renewals' hooks; scheme names the notifier's
// per-attempt signer of merchant webhooks.
func NewHooks(prices price.Source, scheme string) Hooks {
	return Hooks{prices: prices, scheme: scheme}
}

// Load implements invoice.Hooks: the subscriptions of renewals invs, in one
// query.
func (h Hooks) Load(ctx context.Context, tx *entdb.Tx, invs []*entdb.Invoice) (invoice.Batch, error) {
	ids := make([]int64, 0, len(invs))
	for _, inv := range invs {
		if inv.SubscriptionID == nil {
			return nil, fmt.Errorf("renewal %s has no subscription", inv.PublicID)
		}
		ids = append(ids, *inv.SubscriptionID)
	}
	subs, err := tx.Subscription.Query().Where(entsub.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("subscriptions of %d renewals: %w", len(invs), err)
	}
	b := batch{h: h, subs: make(map[int64]*entdb.Subscription, len(subs))}
	for _, s := range subs {
		b.subs[s.ID] = s
	}
	return b, nil
}

// batch is the renewals of one transaction with their subscriptions.
type batch struct {
	h    Hooks
	subs map[int64]*entdb.Subscription
}

// Paid implements invoice.Batch: the subscription is extended by the
// renewal's period.
func (b batch) Paid(ctx context.Context, tx *entdb.Tx, inv *entdb.Invoice, now time.Time) error {
	sub := b.subs[*inv.SubscriptionID]
	ext, err := extend(ctx, tx, sub, inv, now)
	if err != nil {
		return err
	}
	b.subs[sub.ID] = ext
	return nil
}

// Message implements invoice.Batch.
func (b batch) Message(c payment.Change, inv *entdb.Invoice, st invoice.Settlement) (notifier.Message, bool, error) {
	sub := b.subs[*inv.SubscriptionID]
	// Without a notify_url the message has no destination of its own: the
	// project's endpoints and event log still get its event (Fanout).
	m, err := b.h.message(c, sub, inv, st.Status)
	return m, err == nil, err
}

// extend moves the subscription's end by the renewal's period from the
// later of now and its current end, and returns it as extended. The update
// is conditional on the end it read, so a concurrent extension (another
// coin's watcher) is never lost: the loser reads again and extends from the
// new end.
func extend(ctx context.Context, tx *entdb.Tx, sub *entdb.Subscription, inv *entdb.Invoice, now time.Time) (*entdb.Subscription, error) {
	per, err := ParsePeriod(inv.Option)
	if err != nil {
		return nil, fmt.Errorf("renewal %s: %w", inv.PublicID, err)
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
		until := AddPeriod(from, per)
		n, err := tx.Subscription.Update().Where(entsub.ID(sub.ID), cond).
			SetExpiresAt(until).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("extend subscription %s: %w", sub.Token, err)
		}
		if n == 1 {
			ext := *sub
			ext.ExpiresAt, ext.UpdatedAt = &until, now
			return &ext, nil
		}
		if sub, err = tx.Subscription.Get(ctx, sub.ID); err != nil {
			return nil, fmt.Errorf("extend subscription: %w", err)
		}
	}
	return nil, fmt.Errorf("extend subscription %s: concurrent extensions did not settle", sub.Token)
}

// message builds the webhook of c.
func (h Hooks) message(c payment.Change, sub *entdb.Subscription, inv *entdb.Invoice, status invoice.Status) (notifier.Message, error) {
	t, p := c.Ticker, c.Payment
	id := uuid.NewString()
	st := Stage{
		UUID: id, Token: sub.Token, PaymentID: inv.PublicID, Option: inv.Option,
		PaymentStatus: c.Status, InvoiceStatus: status, OptionValue: inv.Value,
		Currency: inv.Currency, FiatPlaces: invoice.FiatPlaces(h.prices, inv.Currency),
		Ticker: t, PaidCoin: c.ValueCoin, PaidFiat: p.ValueFiat, TxidIn: p.TxidIn, Confirmations: c.Confirmations,
	}
	if c.Forward != nil {
		st.ReceivedCoin = &c.Forward.ValueForwardedCoin
		st.TxidOut = c.Forward.TxidOut
	}
	fields := Fields(st)
	req, err := payload.EncodeOptional(sub.NotifyURL, payload.TransportFor(sub.Post, sub.JSON), fields, nil)
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
			// A payment recorded by this transaction has had no webhook.
			FirstOfSequence: c.First,
		},
		Request: req,
		Signing: notifier.Signing{Scheme: h.scheme, Key: project.KeyRef(sub.ProjectID)},
		Payload: fields,
	}, nil
}
