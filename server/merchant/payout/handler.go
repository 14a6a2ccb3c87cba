package payout

import (
	"context"
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// handler completes payouts when the outbound engine's payout transactions
// change state (outbound.Handler), in the engine's database transaction.
type handler struct{ s *Service }

var _ outbound.Handler = handler{}

// payoutsOf returns the payouts whose transaction is o (a batch has
// several), in id order; the first records the transaction's inputs.
func payoutsOf(ctx context.Context, tx *entdb.Tx, o *entdb.Outbound) ([]*entdb.Payout, error) {
	ps, err := tx.Payout.Query().Where(entpayout.OutboundID(o.ID)).Order(entdb.Asc(entpayout.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("the payouts of transaction %s: %w", o.Key, err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("the payouts of transaction %s: none", o.Key)
	}
	return ps, nil
}

// Sent: the payouts are done; the journal moves what their transaction
// spent to the destinations, the fees and the change (one entry per
// transaction).
func (h handler) Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, sent []*entdb.Outbound) error {
	now := h.s.cfg.Now()
	for _, o := range sent {
		ps, err := payoutsOf(ctx, tx, o)
		if err != nil {
			return err
		}
		spent, paid, fee, networkFee := decimal.Zero, decimal.Zero, decimal.Zero, decimal.Zero
		var done []*entdb.Payout
		for _, p := range ps {
			for _, in := range p.Inputs {
				spent = spent.Add(in.Value)
			}
			if p.Status != entpayout.StatusProcessing {
				continue // completed before: a transaction is marked sent once, but be safe
			}
			paid, fee, networkFee = paid.Add(p.TotalRequested), fee.Add(p.Fee), networkFee.Add(p.BlockchainFee)
			done = append(done, p)
		}
		if len(done) == 0 {
			continue
		}
		e := ledger.PayoutSend(t, ledger.Ref{ProjectID: ps[0].ProjectID, OutboundID: o.ID}, spent, paid, fee, networkFee)
		if err := ledger.Write(ctx, tx, h.s.db.Dialect, now, e); err != nil {
			return err
		}
		for _, p := range done {
			if err := h.done(ctx, tx, t, p, o.Txid); err != nil {
				return err
			}
		}
	}
	return nil
}

// done marks payout p done, sent as txid, with its requests, and stores
// its webhooks, within tx.
func (h handler) done(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout, txid string) error {
	now := h.s.cfg.Now()
	p, err := tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusDone).SetTxid(txid).SetDoneAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("payout %d done: %w", p.ID, err)
	}
	if err := tx.PayoutRequest.Update().Where(payoutrequest.PayoutID(p.ID)).
		SetStatus(payoutrequest.StatusDone).SetUpdatedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("payout %d requests done: %w", p.ID, err)
	}
	if err := h.s.ended(ctx, tx, t, p); err != nil {
		return err
	}
	return h.s.notify(ctx, tx, t, p)
}

// Replaced: the payouts' transaction is next from now on.
func (h handler) Replaced(ctx context.Context, tx *entdb.Tx, old, next *entdb.Outbound) error {
	if err := tx.Payout.Update().Where(entpayout.OutboundID(old.ID)).
		SetOutboundID(next.ID).SetUpdatedAt(h.s.cfg.Now()).Exec(ctx); err != nil {
		return fmt.Errorf("payout of %s: move to %s: %w", old.Key, next.Key, err)
	}
	return nil
}

// fail marks the payouts ps error with reason, their requests rejected,
// and stores their webhooks.
func (h handler) fail(ctx context.Context, tx *entdb.Tx, t chains.Ticker, ps []*entdb.Payout, reason string) error {
	now := h.s.cfg.Now()
	for _, p := range ps {
		p, err := tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusError).SetError(reason).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("payout %d failed: %w", p.ID, err)
		}
		if err := tx.PayoutRequest.Update().Where(payoutrequest.PayoutID(p.ID)).
			SetStatus(payoutrequest.StatusRejected).SetUpdatedAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("payout %d requests rejected: %w", p.ID, err)
		}
		if err := h.s.ended(ctx, tx, t, p); err != nil {
			return err
		}
		if err := h.s.notify(ctx, tx, t, p); err != nil {
			return err
		}
	}
	return nil
}

// Failed: the payouts' transaction can never be sent as planned. Its
// inputs are held again, for the reasons they were held, the requests
// rejected, and each payout is error with the reason.
func (h handler) Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error {
	ps, err := payoutsOf(ctx, tx, o)
	if err != nil {
		return err
	}
	var entries []ledger.Entry
	for _, p := range ps {
		for _, in := range p.Inputs {
			entries = append(entries, ledger.PayoutUnplan(t, ledger.Ref{ProjectID: p.ProjectID, PaymentID: in.PaymentID, AddressID: in.AddressID, OutboundID: o.ID}, in.Value, in.HoldReason))
		}
	}
	if err := ledger.Write(ctx, tx, h.s.db.Dialect, h.s.cfg.Now(), entries...); err != nil {
		return err
	}
	return h.fail(ctx, tx, t, ps, refusal(cause))
}

// refusal says why a transaction that can never be sent as planned
// (cause, from the outbound engine's Failed) was not sent.
func refusal(cause error) string {
	switch {
	case errors.Is(cause, chains.ErrSignerRefused):
		return "the signer refused to sign it: " + cause.Error()
	case errors.Is(cause, chains.ErrInvalidForward):
		return "the network cannot carry this transaction as planned: " + cause.Error()
	}
	return "the transaction could not be sent"
}

// Bounced: a block included the payouts' transaction (account chains) and
// failed it: nothing it paid left the payout wallet. What the journal paid
// out and took as the operator's fee is held again on the inputs it
// spent; the network fee stays (the network was paid); the payouts are
// error and their requests rejected.
func (h handler) Bounced(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound) error {
	ps, err := payoutsOf(ctx, tx, o)
	if err != nil {
		return err
	}
	paid, fee := decimal.Zero, decimal.Zero
	var inputs []schema.PayoutInput
	for _, p := range ps {
		if p.Status == entpayout.StatusDone {
			paid, fee = paid.Add(p.TotalRequested), fee.Add(p.Fee)
		}
		inputs = append(inputs, p.Inputs...)
	}
	var entries []ledger.Entry
	for _, in := range inputs {
		if paid.Sign() <= 0 && fee.Sign() <= 0 {
			break
		}
		a := decimal.Min(in.Value, paid)
		b := decimal.Min(in.Value.Sub(a), fee)
		paid, fee = paid.Sub(a), fee.Sub(b)
		entries = append(entries, ledger.PayoutBounce(t, ledger.Ref{ProjectID: o.ProjectID, PaymentID: in.PaymentID, AddressID: in.AddressID, OutboundID: o.ID}, a, b, in.HoldReason))
	}
	if err := ledger.Write(ctx, tx, h.s.db.Dialect, h.s.cfg.Now(), entries...); err != nil {
		return err
	}
	return h.fail(ctx, tx, t, ps, "the transaction failed in its block: nothing was paid; the network fee was spent")
}
