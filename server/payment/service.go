package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/lifecycle"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
)

// Service applies chain observations and forwards credited payments.
type Service struct {
	db       *store.DB
	notifier *notifier.Notifier
	registry *chains.Registry
	prices   price.Source
	backends map[string]chains.Backend
	now      func() time.Time
	logger   *slog.Logger

	// afterBroadcast, when set (tests), runs between a forward's broadcast
	// and its record; an error stops there, as a crash would.
	afterBroadcast func() error
}

// New returns a Service. backends maps tickers to their chains.
func New(db *store.DB, n *notifier.Notifier, registry *chains.Registry, prices price.Source, backends map[string]chains.Backend, now func() time.Time, logger *slog.Logger) *Service {
	return &Service{db: db, notifier: n, registry: registry, prices: prices, backends: backends, now: now, logger: logger}
}

// Apply applies one observation of a transfer on ticker t. Transfers to
// addresses payhook did not create are ignored. Two instances recording the
// same new payment at once collide on its unique key; the loser applies the
// observation again, to the row the winner created.
func (s *Service) Apply(ctx context.Context, t chains.Ticker, o chains.Observation) error {
	for try := 0; ; try++ {
		err := s.apply(ctx, t, o)
		if err == nil || try == 2 || !entdb.IsConstraintError(err) {
			return err
		}
	}
}

func (s *Service) apply(ctx context.Context, t chains.Ticker, o chains.Observation) error {
	var forwardID int64
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		a, err := tx.Address.Query().Where(entaddress.AddressIn(o.To), entaddress.Ticker(t.Ticker)).Only(ctx)
		if entdb.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find address: %w", err)
		}
		q := tx.Payment.Query().Where(entpayment.AddressID(a.ID), entpayment.TxidIn(o.TxID), entpayment.OutputIndex(o.Index))
		if s.db.Dialect == store.Postgres {
			q.ForUpdate()
		}
		p, err := q.Only(ctx)
		if err != nil && !entdb.IsNotFound(err) {
			return fmt.Errorf("find payment: %w", err)
		}
		prev := chains.PaymentState{}
		if p != nil {
			prev = chains.PaymentState{Status: chains.Status(p.Status), Confirmations: p.Confirmations}
		}
		step, err := lifecycle.Evaluate(t, int64(a.RequiredConfirmations), prev, o.State)
		if err != nil {
			return err
		}
		if step.Status == chains.StatusNone {
			return nil // not reportable yet (mempool, Solana below its commitment)
		}
		now := s.now()
		note := notForwardable(t, o.Value)
		below := note != ""
		if p == nil {
			p, err = tx.Payment.Create().
				SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTicker(t.Ticker).
				SetTxidIn(o.TxID).SetOutputIndex(o.Index).SetValueCoin(o.Value).
				SetConfirmations(step.Confirmations).SetStatus(entpayment.Status(step.Status)).
				SetNote(note).SetNillableCreditedAt(when(step.Credit, now)).
				SetCreatedAt(now).SetUpdatedAt(now).
				Save(ctx)
			if err != nil {
				return fmt.Errorf("record payment: %w", err)
			}
		} else {
			note = p.Note
			const reorged = "left the chain after it was credited (reorganisation); recorded, not reversed"
			if !o.State.Present && (prev.Status == chains.StatusConfirmed || prev.Status == chains.StatusCompleted) && !strings.Contains(note, reorged) {
				note = strings.TrimPrefix(note+"; "+reorged, "; ")
			}
			if step.Status == prev.Status && step.Confirmations == prev.Confirmations && note == p.Note {
				if step.Forwardable && p.Status == entpayment.StatusConfirmed && !below {
					forwardID = p.ID
				}
				return nil
			}
			u := tx.Payment.UpdateOne(p).
				SetStatus(entpayment.Status(step.Status)).
				SetConfirmations(step.Confirmations).
				SetNote(note).
				SetUpdatedAt(now)
			if step.Credit {
				u.SetCreditedAt(now)
			}
			if p, err = u.Save(ctx); err != nil {
				return fmt.Errorf("update payment: %w", err)
			}
		}
		if step.Notify && !below && (step.Status == chains.StatusPending || step.Status == chains.StatusConfirmed) {
			if _, err := s.notifier.Enqueue(ctx, tx, s.envelope(t, a, p, nil)); err != nil {
				return err
			}
		}
		if step.Forwardable && p.Status == entpayment.StatusConfirmed && !below {
			forwardID = p.ID
		}
		return nil
	})
	if err != nil || forwardID == 0 {
		return err
	}
	// A forwarding failure (fee estimate, broadcast) must not stop the
	// watcher from applying other payments: it is logged, and the next poll
	// tries again (an intent already recorded is finished by Reconcile).
	if err := s.Forward(ctx, t, forwardID); err != nil {
		s.logger.Error("forward payment; retried at the next poll", "ticker", t.Ticker, "payment", forwardID, "error", err)
	}
	return nil
}

// NotForwardedPrefix starts the note of a payment that is recorded but never
// forwarded and causes no callbacks; the watcher stops re-reading it.
const NotForwardedPrefix = "not forwarded: "

// notForwardable says why a payment of value cannot be forwarded (below the
// ticker's minimum, or consumed by the service and estimated network fees),
// or "" when it can. Decided before any callback is stored, so a merchant is
// never told of funds it will not receive.
func notForwardable(t chains.Ticker, value decimal.Decimal) string {
	if value.LessThan(t.MinTransaction) {
		return fmt.Sprintf("%sbelow the minimum transaction of %s %s; no callbacks", NotForwardedPrefix, t.MinTransaction, t.Coin)
	}
	_, err := distribute.Compute(t, value, t.NetworkFeeEstimate, []distribute.Share{{Address: "-", Share: decimal.NewFromInt(1)}})
	if errors.Is(err, distribute.ErrNothingToForward) || errors.Is(err, distribute.ErrBelowMinimum) {
		return fmt.Sprintf("%sthe fees (%s %s rate and about %s %s network fee) would consume it; no callbacks", NotForwardedPrefix, t.FeeRate, "service", t.NetworkFeeEstimate, t.Coin)
	}
	return ""
}

func when(ok bool, t time.Time) *time.Time {
	if !ok {
		return nil
	}
	return &t
}

// envelope builds a payment's callback. f is the forward for completed.
func (s *Service) envelope(t chains.Ticker, a *entdb.Address, p *entdb.Payment, f *entdb.Forward) notifier.Envelope {
	shares := make([]payload.Share, len(a.Destinations))
	for i, d := range a.Destinations {
		shares[i] = payload.Share{Address: d.Address, Share: d.Share}
	}
	params := make([]payload.Param, len(a.CustomParams))
	for i, c := range a.CustomParams {
		params[i] = payload.Param{Key: c.Key, Value: c.Value}
	}
	confs, required := p.Confirmations, int64(a.RequiredConfirmations)
	if t.Family == chains.FamilySolana {
		confs, required = 1, 1
	}
	cb := payload.Callback{
		AddressIn:             a.AddressIn,
		AddressOut:            shares,
		TxidIn:                p.TxidIn,
		Confirmations:         confs,
		RequiredConfirmations: required,
		PaymentStatus:         string(p.Status),
		Coin:                  t.Coin,
		Decimals:              t.Decimals,
		ValueCoin:             p.ValueCoin,
		Params:                params,
	}
	if usd, ok := s.prices.USD(t.Coin); ok {
		cb.Price = &usd
	}
	if a.Convert {
		usd, ok := price.USDValue(s.prices, t.Coin, p.ValueCoin)
		conv := price.Convert(s.prices, usd, ok)
		cb.ValueCoinConvert = &conv
	}
	if f != nil {
		cb.PaymentStatus = payload.StatusCompleted
		cb.TxidOut = f.TxidOut
		cb.ValueForwardedCoin = payload.AmountOf(f.ValueForwardedCoin)
		cb.FeeCoin = payload.AmountOf(f.FeeCoin)
		cb.NetworkFee = payload.AmountOf(f.NetworkFee)
		if a.Convert {
			usd, ok := price.USDValue(s.prices, t.Coin, f.ValueForwardedCoin)
			conv := price.Convert(s.prices, usd, ok)
			cb.ValueForwardedCoinConvert = &conv
		}
	}
	return notifier.Envelope{
		AddressID:   a.ID,
		APIKeyID:    a.APIKeyID,
		PaymentID:   &p.ID,
		Ticker:      t.Ticker,
		AddressIn:   a.AddressIn,
		CallbackURL: a.CallbackURL,
		Transport:   payload.TransportFor(a.Post, a.JSON),
		Callback:    cb,
	}
}

// Forward distributes a credited payment: intent, broadcast, record. It is
// safe to call any number of times and from several instances: the intent is
// unique per payment, the broadcast idempotent on its id.
func (s *Service) Forward(ctx context.Context, t chains.Ticker, paymentID int64) error {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return fmt.Errorf("forward payment %d: no backend for %s", paymentID, t.Ticker)
	}
	netFee, err := backend.NetworkFee(ctx)
	if err != nil {
		return fmt.Errorf("estimate network fee: %w", err)
	}
	var fwd *entdb.Forward
	var from string
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		q := tx.Payment.Query().Where(entpayment.ID(paymentID)).WithAddress().WithForward()
		if s.db.Dialect == store.Postgres {
			q.ForUpdate() // a second instance waits, then sees the intent
		}
		p, err := q.Only(ctx)
		if err != nil {
			return fmt.Errorf("load payment: %w", err)
		}
		if p.Status != entpayment.StatusConfirmed || p.Edges.Forward != nil {
			return nil // completed, or an intent exists: Reconcile finishes it
		}
		a := p.Edges.Address
		shares := make([]distribute.Share, len(a.Destinations))
		for i, d := range a.Destinations {
			shares[i] = distribute.Share{Address: d.Address, Share: d.Share}
		}
		plan, err := distribute.Compute(t, p.ValueCoin, netFee, shares)
		if errors.Is(err, distribute.ErrBelowMinimum) || errors.Is(err, distribute.ErrNothingToForward) {
			// The network fee rose since the callbacks were stored: the
			// payment stays credited and is not forwarded; the logs say why.
			return tx.Payment.UpdateOne(p).SetNote(NotForwardedPrefix + err.Error()).SetUpdatedAt(s.now()).Exec(ctx)
		}
		if err != nil {
			return fmt.Errorf("plan forward: %w", err)
		}
		outs := make([]schema.Output, len(plan.Outputs))
		for i, o := range plan.Outputs {
			outs[i] = schema.Output{Address: o.Address, Amount: o.Amount}
		}
		now := s.now()
		fwd, err = tx.Forward.Create().
			SetPaymentID(p.ID).
			SetIntentID(fmt.Sprintf("fwd-%d-%s", p.ID, p.TxidIn)).
			SetOutputs(outs).
			SetFeeCoin(plan.Fee).
			SetNetworkFee(plan.NetworkFee).
			SetValueForwardedCoin(plan.Forwarded).
			SetCreatedAt(now).SetUpdatedAt(now).
			Save(ctx)
		from = a.AddressIn
		return err
	})
	if err != nil || fwd == nil {
		return err
	}
	txid, err := backend.Broadcast(ctx, intent(fwd, from))
	if err != nil {
		return fmt.Errorf("broadcast forward %s: %w", fwd.IntentID, err)
	}
	if s.afterBroadcast != nil {
		if err := s.afterBroadcast(); err != nil {
			return err
		}
	}
	return s.complete(ctx, t, fwd.ID, txid)
}

func intent(f *entdb.Forward, from string) chains.Forward {
	outs := make([]chains.Output, len(f.Outputs))
	for i, o := range f.Outputs {
		outs[i] = chains.Output{Address: o.Address, Amount: o.Amount}
	}
	return chains.Forward{ID: f.IntentID, From: from, Outputs: outs}
}

// complete records a broadcast forward: the forward done, the payment
// completed, and the completed callback stored, in one transaction.
func (s *Service) complete(ctx context.Context, t chains.Ticker, forwardID int64, txid string) error {
	return store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		f, err := tx.Forward.Query().Where(entforward.ID(forwardID)).WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).Only(ctx)
		if err != nil {
			return fmt.Errorf("load forward: %w", err)
		}
		if f.Status == entforward.StatusDone {
			return nil
		}
		changed, err := tx.Forward.Update().
			Where(entforward.ID(f.ID), entforward.StatusEQ(entforward.StatusIntent)).
			SetStatus(entforward.StatusDone).SetTxidOut(txid).SetUpdatedAt(s.now()).
			Save(ctx)
		if err != nil || changed == 0 {
			return err // another instance completed it
		}
		f.TxidOut = txid
		now := s.now()
		p, err := tx.Payment.UpdateOneID(f.PaymentID).
			SetStatus(entpayment.StatusCompleted).
			SetTxidOut(txid).
			SetValueForwardedCoin(f.ValueForwardedCoin).
			SetFeeCoin(f.FeeCoin).
			SetNetworkFee(f.NetworkFee).
			SetForwardedAt(now).
			SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("complete payment: %w", err)
		}
		_, err = s.notifier.Enqueue(ctx, tx, s.envelope(t, f.Edges.Payment.Edges.Address, p, f))
		return err
	})
}

// Reconcile finishes forwarding intents of ticker t left by a crash or a
// failed broadcast: it asks the backend whether each was broadcast, and
// broadcasts (idempotently) those that were not, then records them.
func (s *Service) Reconcile(ctx context.Context, t chains.Ticker) error {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return nil
	}
	open, err := s.db.Client.Forward.Query().
		Where(entforward.StatusEQ(entforward.StatusIntent), entforward.HasPaymentWith(entpayment.Ticker(t.Ticker))).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		All(ctx)
	if err != nil {
		return fmt.Errorf("open forwards: %w", err)
	}
	var errs []error
	for _, f := range open {
		txid, found, err := backend.LookupForward(ctx, f.IntentID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !found {
			if txid, err = backend.Broadcast(ctx, intent(f, f.Edges.Payment.Edges.Address.AddressIn)); err != nil {
				errs = append(errs, fmt.Errorf("broadcast forward %s: %w", f.IntentID, err))
				continue
			}
		}
		if err := s.complete(ctx, t, f.ID, txid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
