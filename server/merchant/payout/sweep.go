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

// Failed: the sweep can never be sent as planned; its payments are held
// again where they are. A queued payout it was for plans another sweep or
// fails at the next Tick.
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
	return ledger.Write(ctx, tx, w.s.db.Dialect, w.s.cfg.Now(), entries...)
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
