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
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// handler completes payouts when the outbound engine's payout transactions
// change state (outbound.Handler), in the engine's database transaction.
type handler struct{ s *Service }

var _ outbound.Handler = handler{}

// payoutOf returns the payout whose transaction is o.
func payoutOf(ctx context.Context, tx *entdb.Tx, o *entdb.Outbound) (*entdb.Payout, error) {
	p, err := tx.Payout.Query().Where(entpayout.OutboundID(o.ID)).Only(ctx)
	if err != nil {
		return nil, fmt.Errorf("the payout of transaction %s: %w", o.Key, err)
	}
	return p, nil
}

// Sent: the payout is done; the journal moves what its transaction spent
// to the destinations, the fees and the change.
func (h handler) Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, sent []*entdb.Outbound) error {
	now := h.s.cfg.Now()
	for _, o := range sent {
		p, err := payoutOf(ctx, tx, o)
		if err != nil {
			return err
		}
		if p.Status != entpayout.StatusProcessing {
			continue // completed before: a transaction is marked sent once, but be safe
		}
		spent := decimal.Zero
		for _, in := range p.Inputs {
			spent = spent.Add(in.Value)
		}
		e := ledger.PayoutSend(t, ledger.Ref{ProjectID: p.ProjectID, OutboundID: o.ID}, spent, p.TotalRequested, p.Fee, p.BlockchainFee)
		if err := ledger.Write(ctx, tx, h.s.db.Dialect, now, e); err != nil {
			return err
		}
		p, err = tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusDone).SetTxid(o.Txid).SetDoneAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("payout %d done: %w", p.ID, err)
		}
		if err := tx.PayoutRequest.Update().Where(payoutrequest.PayoutID(p.ID)).
			SetStatus(payoutrequest.StatusDone).SetUpdatedAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("payout %d requests done: %w", p.ID, err)
		}
		if err := h.s.notify(ctx, tx, t, p); err != nil {
			return err
		}
	}
	return nil
}

// Replaced: the payout's transaction is next from now on.
func (h handler) Replaced(ctx context.Context, tx *entdb.Tx, old, next *entdb.Outbound) error {
	if err := tx.Payout.Update().Where(entpayout.OutboundID(old.ID)).
		SetOutboundID(next.ID).SetUpdatedAt(h.s.cfg.Now()).Exec(ctx); err != nil {
		return fmt.Errorf("payout of %s: move to %s: %w", old.Key, next.Key, err)
	}
	return nil
}

// Failed: the payout's transaction can never be sent as planned. Its
// inputs are held again, for the reasons they were held, its requests
// rejected, and the payout is error with the reason.
func (h handler) Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error {
	p, err := payoutOf(ctx, tx, o)
	if err != nil {
		return err
	}
	now := h.s.cfg.Now()
	entries := make([]ledger.Entry, len(p.Inputs))
	for i, in := range p.Inputs {
		entries[i] = ledger.PayoutUnplan(t, ledger.Ref{ProjectID: p.ProjectID, PaymentID: in.PaymentID, AddressID: in.AddressID, OutboundID: o.ID}, in.Value, in.HoldReason)
	}
	if err := ledger.Write(ctx, tx, h.s.db.Dialect, now, entries...); err != nil {
		return err
	}
	reason := "the transaction could not be sent"
	if errors.Is(cause, chains.ErrInvalidForward) {
		reason = "the network cannot carry this transaction as planned: " + cause.Error()
	}
	p, err = tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusError).SetError(reason).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("payout %d failed: %w", p.ID, err)
	}
	if err := tx.PayoutRequest.Update().Where(payoutrequest.PayoutID(p.ID)).
		SetStatus(payoutrequest.StatusRejected).SetUpdatedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("payout %d requests rejected: %w", p.ID, err)
	}
	return h.s.notify(ctx, tx, t, p)
}

// Bounced cannot happen: payouts are UTXO transactions, which a block
// includes only when they are valid.
func (h handler) Bounced(_ context.Context, _ *entdb.Tx, t chains.Ticker, o *entdb.Outbound) error {
	return fmt.Errorf("payout transaction %s of %s bounced: payouts of account chains are not supported", o.Key, t.Ticker)
}
