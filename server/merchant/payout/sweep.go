package payout

import (
	"context"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
	"github.com/payhook/payhook/server/payment"
)

// sweeper completes sweeps (outbound.PurposeSweep): transactions that move
// a held address's funds to its project's payout wallet on account chains,
// planned by process for queued payouts. Their journal: sweep-plan when
// planned, sweep-send when sent (the funds are swept, on their way), and
// sweep-arrive when the wallet's payment of them is credited
// (WalletReactor).
type sweeper struct{ s *Service }

var _ outbound.Handler = sweeper{}

// Sent: the funds are on their way to the wallet.
func (w sweeper) Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, sent []*entdb.Outbound) error {
	entries := make([]ledger.Entry, 0, len(sent))
	for _, o := range sent {
		spent := decimal.Zero
		for _, in := range o.Inputs {
			spent = spent.Add(in.Value)
		}
		entries = append(entries, ledger.SweepSend(t, ledger.Ref{ProjectID: o.ProjectID, OutboundID: o.ID}, spent, o.NetworkFee))
	}
	return ledger.Write(ctx, tx, w.s.db.Dialect, w.s.cfg.Now(), entries...)
}

// Replaced: nothing to move; the plan's lines name the first transaction
// (planned, below).
func (sweeper) Replaced(context.Context, *entdb.Tx, *entdb.Outbound, *entdb.Outbound) error {
	return nil
}

// took is what a sweep took from one held payment.
type took struct {
	ref    ledger.Ref // the payment, its address, the sweep
	value  decimal.Decimal
	reason string // why the payment was held
}

// taken returns what o's sweep took from each held payment, largest
// first: the journal's sweep-plan lines of o or of the transaction it
// replaces, with the payments' hold reasons.
func taken(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound) ([]took, error) {
	ids := []int64{o.ID}
	for cur := o; cur.ReplacesID != nil; {
		prev, err := tx.Outbound.Get(ctx, *cur.ReplacesID)
		if err != nil {
			return nil, fmt.Errorf("the transaction %s replaces: %w", cur.Key, err)
		}
		ids, cur = append(ids, prev.ID), prev
	}
	lines, err := tx.LedgerEntry.Query().
		Where(entledger.OutboundIDIn(ids...), entledger.EventEQ(entledger.EventSweep), entledger.AccountEQ(entledger.AccountOutgoing), entledger.AmountGT(decimal.Zero)).
		Order(entdb.Desc(entledger.FieldAmount), entdb.Asc(entledger.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("what sweep %s took: %w", o.Key, err)
	}
	var pids []int64
	for _, l := range lines {
		if l.PaymentID != nil {
			pids = append(pids, *l.PaymentID)
		}
	}
	ps, err := tx.Payment.Query().Where(entpayment.IDIn(pids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("payments of sweep %s: %w", o.Key, err)
	}
	why := make(map[int64]string, len(ps))
	for _, p := range ps {
		why[p.ID] = string(p.HoldReason)
	}
	out := make([]took, 0, len(lines))
	for _, l := range lines {
		if l.PaymentID == nil {
			continue
		}
		r := ledger.Ref{ProjectID: l.ProjectID, PaymentID: *l.PaymentID, OutboundID: o.ID}
		if l.AddressID != nil {
			r.AddressID = *l.AddressID
		}
		out = append(out, took{ref: r, value: ledger.Coins(t, l.Amount), reason: why[*l.PaymentID]})
	}
	return out, nil
}

// Failed: the sweep can never be sent as planned (a signer or the
// network refused it); its payments are held again where they are, and
// are not swept again by themselves (see refusedInputs): the same sweep
// would be refused again. The project's queued payouts that the rest of
// its funds no longer cover fail with the sweep's reason (strand); the
// others stay queued, and the next Tick sweeps other funds for them.
func (w sweeper) Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error {
	ts, err := taken(ctx, tx, t, o)
	if err != nil {
		return err
	}
	entries := make([]ledger.Entry, 0, len(ts))
	for _, x := range ts {
		entries = append(entries, ledger.SweepUnplan(t, x.ref, x.value, x.reason))
	}
	w.s.logger.Warn("a sweep to a payout wallet cannot be sent; its funds are held again", "ticker", t.Ticker, "key", o.Key, "reason", cause.Error())
	if err := ledger.Write(ctx, tx, w.s.db.Dialect, w.s.cfg.Now(), entries...); err != nil {
		return err
	}
	return w.s.strand(ctx, tx, t, o, "its funds could not be swept to the payout wallet: "+refusal(cause))
}

// input names a held payment as a transaction's input: its incoming
// transaction, output index and address.
type input struct {
	txid  string
	index int64
	to    string
}

// inputOf is h as an input.
func inputOf(h heldPayment) input {
	return input{txid: h.payment.TxidIn, index: h.payment.OutputIndex, to: h.address.AddressIn}
}

// refusedInputs returns the inputs of the project's sweeps of t that
// failed for good (outbound state failed: a signer or the network refused
// them). Such a payment is not swept again by itself: it stays held where
// it is (the balance still counts it; a refund may spend it) until the
// operator moves it.
func refusedInputs(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker) (map[input]bool, error) {
	os, err := tx.Outbound.Query().
		Where(entoutbound.ProjectID(projectID), entoutbound.Ticker(t.Ticker), entoutbound.PurposeEQ(entoutbound.PurposeSweep),
			entoutbound.StateEQ(entoutbound.StateFailed)).
		Select(entoutbound.FieldInputs).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("refused %s sweeps of project %d: %w", t.Ticker, projectID, err)
	}
	out := map[input]bool{}
	for _, o := range os {
		for _, in := range o.Inputs {
			out[input{txid: in.TxID, index: in.Index, to: in.To}] = true
		}
	}
	return out, nil
}

// sweepable returns the held payments of elsewhere that a sweep may take:
// those no sweep was refused for (refusedInputs).
func sweepable(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker, elsewhere []heldPayment) ([]heldPayment, error) {
	if len(elsewhere) == 0 {
		return nil, nil
	}
	refused, err := refusedInputs(ctx, tx, projectID, t)
	if err != nil || len(refused) == 0 {
		return elsewhere, err
	}
	out := make([]heldPayment, 0, len(elsewhere))
	for _, h := range elsewhere {
		if !refused[inputOf(h)] {
			out = append(out, h)
		}
	}
	return out, nil
}

// strand fails, within tx, the queued payouts of o's project and coin that
// no longer have funds once sweep o failed for good: oldest first, each
// payout stays queued while what it takes (as queued) fits in what is
// left of the payout wallet's held funds, the sweeps on their way to it
// (sent, or planned and not refused), and the held funds on other
// addresses that may still be swept (less a sweep's network fee each, as
// o's); the others fail with reason, their webhooks stored. Their
// balance was never taken (a queued payout holds nothing): o's funds are
// held again by Failed.
func (s *Service) strand(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, reason string) error {
	ps, err := queued(ctx, tx.Client(), o.ProjectID, t)
	if err != nil || len(ps) == 0 {
		return err
	}
	if len(o.Outputs) == 0 {
		return fmt.Errorf("sweep %s pays no payout wallet", o.Key)
	}
	wallet := o.Outputs[0].Address
	left, err := sweptOf(ctx, tx.Client(), o.ProjectID, t)
	if err != nil {
		return err
	}
	open, err := tx.Outbound.Query().
		Where(entoutbound.ProjectID(o.ProjectID), entoutbound.Ticker(t.Ticker), entoutbound.PurposeEQ(entoutbound.PurposeSweep),
			entoutbound.StateIn(entoutbound.StatePlanned, entoutbound.StateSigned)).
		All(ctx)
	if err != nil {
		return fmt.Errorf("open %s sweeps of project %d: %w", t.Ticker, o.ProjectID, err)
	}
	for _, sw := range open {
		for _, out := range sw.Outputs {
			if out.Address == wallet {
				left = left.Add(out.Amount)
			}
		}
	}
	held, err := spendable(ctx, tx.Client(), o.ProjectID, t)
	if err != nil {
		return err
	}
	var elsewhere []heldPayment
	for _, h := range held {
		if h.address.AddressIn == wallet {
			left = left.Add(h.value)
		} else {
			elsewhere = append(elsewhere, h)
		}
	}
	if elsewhere, err = sweepable(ctx, tx, o.ProjectID, t, elsewhere); err != nil {
		return err
	}
	byAddress := map[int64]decimal.Decimal{}
	for _, h := range elsewhere {
		byAddress[h.address.ID] = byAddress[h.address.ID].Add(h.value)
	}
	for _, v := range byAddress {
		if v.GreaterThan(o.NetworkFee) {
			left = left.Add(v.Sub(o.NetworkFee))
		}
	}
	for _, p := range ps {
		if n := need(p); !n.GreaterThan(left) {
			left = left.Sub(n)
			continue
		}
		if err := s.failQueued(ctx, tx, t, p, reason); err != nil {
			return err
		}
	}
	return nil
}

// Bounced: a block included the sweep and failed it: its funds never left
// their address and are held again there, less the network fee, which was
// paid (taken from the largest payments first).
func (w sweeper) Bounced(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound) error {
	ts, err := taken(ctx, tx, t, o)
	if err != nil {
		return err
	}
	fee := o.NetworkFee
	var entries []ledger.Entry
	for _, x := range ts {
		cut := decimal.Min(x.value, fee)
		v := x.value.Sub(cut)
		fee = fee.Sub(cut)
		if v.Sign() > 0 {
			entries = append(entries, ledger.SweepBounce(t, x.ref, v, x.reason))
		}
	}
	return ledger.Write(ctx, tx, w.s.db.Dialect, w.s.cfg.Now(), entries...)
}

// WalletReactor is the payment reactor of payout wallets
// (address.PayoutWalletService): their payments are the project's payout
// balance, credited and held like any payment of an address without
// forwarding, and notify no one. A credited payment that is a sweep's
// arrival (its transaction is a sweep payhook sent to the wallet) is
// journaled as such: the funds were the project's already.
type WalletReactor struct {
	// Dialect is the database's.
	Dialect store.Dialect
	// Now is the clock.
	Now func() time.Time
}

// React implements payment.Reactor.
func (r WalletReactor) React(ctx context.Context, tx *entdb.Tx, cs []payment.Change) error {
	var entries []ledger.Entry
	for _, c := range cs {
		if c.Kind != payment.Confirmed || c.Payment == nil || c.Address == nil {
			continue
		}
		n, err := tx.Outbound.Query().
			Where(entoutbound.Ticker(c.Ticker.Ticker), entoutbound.Txid(c.Payment.TxidIn), entoutbound.PurposeEQ(entoutbound.PurposeSweep),
				entoutbound.ProjectID(c.Address.ProjectID)).
			Count(ctx)
		if err != nil {
			return fmt.Errorf("is payment %d a sweep: %w", c.Payment.ID, err)
		}
		if n == 0 {
			continue
		}
		entries = append(entries, ledger.SweepArrive(c.Ticker, ledger.Ref{ProjectID: c.Address.ProjectID, PaymentID: c.Payment.ID, AddressID: c.Address.ID}, c.ValueCoin))
	}
	if len(entries) == 0 {
		return nil
	}
	return ledger.Write(ctx, tx, r.Dialect, r.Now(), entries...)
}
