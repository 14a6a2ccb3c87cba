package payment

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/lifecycle"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entwatched "github.com/payhook/payhook/ent/db/watchedtransfer"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
)

// Service applies chain observations and forwards credited payments,
// publishing each change to its reactors.
type Service struct {
	db       *store.DB
	registry *chains.Registry
	backends map[string]chains.Backend
	reactors []Reactor
	now      func() time.Time
	logger   *slog.Logger
	lease    *lease
	// startNearHead: Config.StartNearHead.
	startNearHead map[string]bool

	// afterBroadcast, when set (tests), runs between a forward's send and
	// its record; an error stops there, as a crash would.
	afterBroadcast func() error
	// afterSign, when set (tests), runs between recording a forward's
	// signed transaction and its first send; an error stops there.
	afterSign func() error
}

// Config configures a Service.
type Config struct {
	// Registry is the ticker registry.
	Registry *chains.Registry
	// Backends maps tickers to their chains; a ticker without one is not
	// watched.
	Backends map[string]chains.Backend
	// Reactors are told of every change, in this order, inside the
	// transaction that records it.
	Reactors []Reactor
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// StartNearHead lists the tickers (node backends) whose first poll,
	// with no cursor stored, starts StartRescan blocks below the tip
	// rather than at height 0 (the devnet's whole history).
	StartNearHead map[string]bool
}

// New returns a Service.
func New(db *store.DB, cfg Config, logger *slog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, registry: cfg.Registry, backends: cfg.Backends, reactors: cfg.Reactors, now: cfg.Now, logger: logger, lease: newLease(db), startNearHead: cfg.StartNearHead}
}

// Apply applies one observation of a transfer on ticker t, as a batch of
// one (see applyBatch), and forwards the payment if it may be. Transfers to
// addresses payhook did not create are ignored.
func (s *Service) Apply(ctx context.Context, t chains.Ticker, o chains.Observation) error {
	var head chains.Head
	if o.Height > 0 && o.State.Confirmations > 0 {
		head.Height = o.Height + o.State.Confirmations - 1
		head.Solidified = head.Height
		if !o.State.Solidified {
			head.Solidified = o.Height - 1
		}
	}
	return s.apply(ctx, t, head, []chains.Observation{o})
}

// apply applies obs (seen at chain height head) in one transaction, then
// forwards the payments that may be. A forwarding failure is logged, not
// returned: the next poll tries again.
func (s *Service) apply(ctx context.Context, t chains.Ticker, head chains.Head, obs []chains.Observation) error {
	fwd, err := s.applyBatch(ctx, t, head, obs, nil)
	if err != nil || len(fwd) == 0 {
		return err
	}
	if _, err := s.forward(ctx, t, fwd); err != nil {
		s.logger.Error("forward payments; retried at the next poll", "ticker", t.Ticker, "payments", len(fwd), "error", err)
	}
	return nil
}

// applyBatch applies obs, observed with the chain at height head, in one
// transaction: each payment's new state, the changes published to the
// reactors, and each transfer's watch row (its inclusion height and when it
// is due again). then, when set, runs in the same transaction (the watcher
// records the blocks it processed there). It returns the payments that may
// be forwarded now.
//
// Two instances recording the same new payment at once collide on its
// unique key; the loser applies the batch again, to the row the winner
// created. Applying an observation twice changes nothing.
func (s *Service) applyBatch(ctx context.Context, t chains.Ticker, head chains.Head, obs []chains.Observation, then func(*entdb.Tx) error) ([]int64, error) {
	for try := 0; ; try++ {
		fwd, err := s.applyTx(ctx, t, head, obs, then)
		if err == nil || try == 2 || !entdb.IsConstraintError(err) {
			return fwd, err
		}
	}
}

type paymentKey struct {
	addressID int64
	txid      string
	index     int64
}

func (s *Service) applyTx(ctx context.Context, t chains.Ticker, head chains.Head, obs []chains.Observation, then func(*entdb.Tx) error) ([]int64, error) {
	var forwards []int64
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		forwards = forwards[:0]
		if len(obs) > 0 {
			tos := make([]string, 0, len(obs))
			txids := make([]string, 0, len(obs))
			for _, o := range obs {
				tos = append(tos, o.To)
				txids = append(txids, o.TxID)
			}
			addrs, err := tx.Address.Query().Where(entaddress.Ticker(t.Ticker), entaddress.AddressInIn(uniq(tos)...)).All(ctx)
			if err != nil {
				return fmt.Errorf("find addresses: %w", err)
			}
			byAddr := make(map[string]*entdb.Address, len(addrs))
			ids := make([]int64, len(addrs))
			for i, a := range addrs {
				byAddr[a.AddressIn] = a
				ids[i] = a.ID
			}
			pays := map[paymentKey]*entdb.Payment{}
			if len(addrs) > 0 {
				q := tx.Payment.Query().Where(entpayment.AddressIDIn(ids...), entpayment.TxidInIn(uniq(txids)...)).Order(entdb.Asc(entpayment.FieldID))
				if s.db.Dialect == store.Postgres {
					q.ForUpdate()
				}
				ps, err := q.All(ctx)
				if err != nil {
					return fmt.Errorf("find payments: %w", err)
				}
				for _, p := range ps {
					pays[paymentKey{p.AddressID, p.TxidIn, p.OutputIndex}] = p
				}
			}
			watch := make([]*entdb.WatchedTransferCreate, 0, len(obs))
			// after records what follows a payment's new state: its change
			// published (applyOne did), its forward, its watched transfer.
			after := func(a *entdb.Address, p *entdb.Payment, o chains.Observation, step chains.Step, fwd bool) {
				if fwd {
					forwards = append(forwards, p.ID)
				}
				c := tx.WatchedTransfer.Create().
					SetTicker(t.Ticker).SetAddressIn(o.To).SetTxid(o.TxID).SetOutputIndex(o.Index).SetValueCoin(o.Value).
					SetHeight(o.Height).SetNillableDue(nextDue(t, int64(a.RequiredConfirmations), head, o, step, p))
				if p != nil {
					c.SetPaymentID(p.ID)
				}
				watch = append(watch, c)
			}
			// New payments are inserted together, one statement per batch;
			// their changes are published once they have ids.
			var news []newPayment
			flush := func() error {
				if len(news) == 0 {
					return nil
				}
				creates := make([]*entdb.PaymentCreate, len(news))
				for i, n := range news {
					creates[i] = n.create
				}
				created, err := tx.Payment.CreateBulk(creates...).Save(ctx)
				if err != nil {
					return fmt.Errorf("record %d payments: %w", len(creates), err)
				}
				for i, n := range news {
					p := created[i]
					pays[n.key] = p
					fwd, err := s.published(ctx, tx, t, n.a, p, chains.PaymentState{}, n.obs, n.step)
					if err != nil {
						return err
					}
					after(n.a, p, n.obs, n.step, fwd)
				}
				news = news[:0]
				return nil
			}
			queued := map[paymentKey]bool{}
			for _, o := range obs {
				a := byAddr[o.To]
				if a == nil {
					continue // not one of payhook's addresses
				}
				k := paymentKey{a.ID, o.TxID, o.Index}
				if queued[k] {
					// The same transfer twice in one batch: the first must
					// be recorded before the second is applied to it.
					if err := flush(); err != nil {
						return err
					}
					clear(queued)
				}
				p := pays[k]
				if p == nil {
					step, create, err := s.newPayment(tx, t, a, o)
					if err != nil {
						return err
					}
					if create == nil {
						after(a, nil, o, step, false) // not reportable yet: watched, not recorded
						continue
					}
					news = append(news, newPayment{key: k, a: a, obs: o, step: step, create: create})
					queued[k] = true
					continue
				}
				p, step, fwd, err := s.applyOne(ctx, tx, t, a, p, o)
				if err != nil {
					return err
				}
				pays[k] = p
				after(a, p, o, step, fwd)
			}
			if err := flush(); err != nil {
				return err
			}
			if len(watch) > 0 {
				err := tx.WatchedTransfer.CreateBulk(watch...).
					OnConflictColumns(entwatched.FieldTicker, entwatched.FieldAddressIn, entwatched.FieldTxid, entwatched.FieldOutputIndex).
					Update(func(u *entdb.WatchedTransferUpsert) { u.UpdateHeight().UpdateDue().UpdatePaymentID() }).
					Exec(ctx)
				if err != nil {
					return fmt.Errorf("record watched transfers: %w", err)
				}
			}
		}
		if then != nil {
			return then(tx)
		}
		return nil
	})
	return forwards, err
}

func uniq(vs []string) []string {
	seen := make(map[string]bool, len(vs))
	out := vs[:0:0]
	for _, v := range vs {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// newPayment is a payment to insert with its batch.
type newPayment struct {
	key    paymentKey
	a      *entdb.Address
	obs    chains.Observation
	step   chains.Step
	create *entdb.PaymentCreate
}

// newPayment evaluates the first observation of a transfer to address a:
// the rules' step and, when the transfer is reportable, the payment to
// record (nil when there is still nothing to record: mempool, Solana below
// its commitment).
func (s *Service) newPayment(tx *entdb.Tx, t chains.Ticker, a *entdb.Address, o chains.Observation) (chains.Step, *entdb.PaymentCreate, error) {
	step, err := lifecycle.Evaluate(t, int64(a.RequiredConfirmations), chains.PaymentState{}, o.State)
	if err != nil || step.Status == chains.StatusNone {
		return step, nil, err
	}
	now := s.now()
	return step, tx.Payment.Create().
		SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTicker(t.Ticker).
		SetTxidIn(o.TxID).SetOutputIndex(o.Index).SetValueCoin(o.Value).
		SetConfirmations(step.Confirmations).SetStatus(entpayment.Status(step.Status)).
		SetNote(notForwardable(t, a, o.Value)).SetNillableCreditedAt(when(step.Credit, now)).
		SetCreatedAt(now).SetUpdatedAt(now), nil
}

// applyOne applies one observation to the recorded payment p of address a,
// within tx: it records the payment's new state and publishes the change.
// It returns the payment, the rules' step, and whether it may be forwarded
// now.
func (s *Service) applyOne(ctx context.Context, tx *entdb.Tx, t chains.Ticker, a *entdb.Address, p *entdb.Payment, o chains.Observation) (*entdb.Payment, chains.Step, bool, error) {
	prev := chains.PaymentState{Status: chains.Status(p.Status), Confirmations: p.Confirmations}
	step, err := lifecycle.Evaluate(t, int64(a.RequiredConfirmations), prev, o.State)
	if err != nil {
		return nil, step, false, err
	}
	if step.Status == chains.StatusNone {
		return p, step, false, nil // not reportable yet (mempool, Solana below its commitment)
	}
	now := s.now()
	note := p.Note
	const reorged = "left the chain after it was credited (reorganisation); recorded, not reversed"
	if !o.State.Present && (prev.Status == chains.StatusConfirmed || prev.Status == chains.StatusCompleted) && !strings.Contains(note, reorged) {
		note = strings.TrimPrefix(note+"; "+reorged, "; ")
	}
	if step.Status == prev.Status && step.Confirmations == prev.Confirmations && note == p.Note {
		return p, step, step.Forwardable && p.Status == entpayment.StatusConfirmed && !strings.HasPrefix(p.Note, NotForwardedPrefix) && !waiting(p), nil
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
		return nil, step, false, fmt.Errorf("update payment: %w", err)
	}
	fwd, err := s.published(ctx, tx, t, a, p, prev, o, step)
	return p, step, fwd, err
}

// published publishes the change a step made to payment p (recorded with
// its new state; prev is its state before), when the merchant is told of
// it, and reports whether p may be forwarded now. A low-level payment that
// will never be forwarded (below the minimum, consumed by fees) publishes
// nothing; a merchant payment held for the minimum is not forwarded alone
// (its address's next payment takes it along).
func (s *Service) published(ctx context.Context, tx *entdb.Tx, t chains.Ticker, a *entdb.Address, p *entdb.Payment, prev chains.PaymentState, o chains.Observation, step chains.Step) (bool, error) {
	below := strings.HasPrefix(p.Note, NotForwardedPrefix)
	if step.Notify && !below && (step.Status == chains.StatusPending || step.Status == chains.StatusConfirmed) {
		kind := Depth
		switch {
		case step.Credit:
			kind = Confirmed
		case prev.Status != chains.StatusPending:
			kind = Detected
		}
		if err := s.publish(ctx, tx, Change{Kind: kind, Ticker: t, Address: a, Payment: p, Status: step.Status, Confirmations: p.Confirmations, ValueCoin: p.ValueCoin}); err != nil {
			return false, err
		}
	}
	return step.Forwardable && p.Status == entpayment.StatusConfirmed && !below && !waiting(p), nil
}

// nextDue returns the chain height at which a transfer observed as o, with
// the chain at height head, must be evaluated again, or nil when nothing is
// left to wait for (a later block that includes it again is found by
// scanning). Only a depth that changes something counts: the next
// confirmation count of a pending payment; for a credited payment, the depth
// and solidified receipt its distribution waits for (TRON); until then, the
// next block. A credited payment waiting to be forwarded is looked at again
// at the next block, in case its forward failed; completing the forward
// clears its due height.
func nextDue(t chains.Ticker, required int64, head chains.Head, o chains.Observation, step chains.Step, p *entdb.Payment) *int64 {
	next := head.Height + 1
	if !o.State.Present {
		return nil // dropped before credit, or noted after: final unless mined again
	}
	if p != nil && (strings.HasPrefix(p.Note, NotForwardedPrefix) || waiting(p)) {
		return nil // never forwarded, or forwarded with the address's next payment
	}
	switch step.Status {
	case chains.StatusNone, chains.StatusPending:
		return &next
	case chains.StatusConfirmed:
		if step.Forwardable || o.Height == 0 || t.Rules().DistributionDepth(t, required) == 0 {
			return &next
		}
		// TRON: distributed at its distribution depth, once the block is
		// solidified, which lags the tip by head.Height-head.Solidified.
		lag := max(0, head.Height-head.Solidified)
		at := max(o.Height+lifecycle.DistributionDepth(t, required)-1, o.Height+lag)
		if at > head.Height {
			return &at
		}
		return &next
	}
	return nil // completed, reverted, dropped
}

// NotForwardedPrefix starts the note of a low-level payment that is
// recorded but never forwarded and causes no callbacks; the watcher stops
// re-reading it.
const NotForwardedPrefix = "not forwarded: "

// notForwardable says why a payment of value to address a cannot be
// forwarded (below the ticker's minimum, or consumed by the service and
// estimated network fees), or "" when it can. Decided before any callback
// is stored, so a merchant is never told of funds it will not receive.
//
// Only low-level addresses (the family's behaviour) drop such payments. A
// merchant payment (checkout, deposit, subscription: a.InvoiceID set) is
// always credited, notified and counted toward its invoice; if it cannot be
// forwarded alone it is held for the minimum (HeldForMinimumNote) and
// forwarded with its address's next payments.
func notForwardable(t chains.Ticker, a *entdb.Address, value decimal.Decimal) string {
	if a.InvoiceID != nil {
		return ""
	}
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

// Forward distributes a credited payment: intent, broadcast, record. It is
// safe to call any number of times and from several instances: the intent is
// unique per payment, the broadcast idempotent on its id.
func (s *Service) Forward(ctx context.Context, t chains.Ticker, paymentID int64) error {
	_, err := s.forward(ctx, t, []int64{paymentID})
	return err
}

// forward distributes the credited payments ids: one transaction records
// the forwarding intents of those that have none, each forwarding
// transaction is broadcast, and one transaction records the broadcasts and
// their completed changes. A crash between the two leaves intents that
// Reconcile finishes with the chain's help. open reports that an intent is
// left for Reconcile: a failed broadcast, or an intent this call did not
// create.
//
// A low-level payment is forwarded alone. The payments of a merchant address
// are forwarded together with the address's payments held for the minimum
// (planAddress): one transaction, one Forward per payment, all recorded in
// the same transaction and completed in the same transaction.
func (s *Service) forward(ctx context.Context, t chains.Ticker, ids []int64) (open bool, err error) {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return false, fmt.Errorf("forward %d payments: no backend for %s", len(ids), t.Ticker)
	}
	netFee, err := backend.NetworkFee(ctx)
	if err != nil {
		return false, fmt.Errorf("estimate network fee: %w", err)
	}
	var todo []sending
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		todo, open = todo[:0], false
		var plans []planned
		var held []*entdb.Payment
		q := tx.Payment.Query().Where(entpayment.IDIn(ids...)).WithAddress().WithForward().Order(entdb.Asc(entpayment.FieldID))
		if s.db.Dialect == store.Postgres {
			q.ForUpdate() // a second instance waits, then sees the intents
		}
		ps, err := q.All(ctx)
		if err != nil {
			return fmt.Errorf("load payments: %w", err)
		}
		now := s.now()
		var merchant []*entdb.Address // in the order of their first payment
		byAddress := map[int64][]*entdb.Payment{}
		for _, p := range ps {
			if p.Status != entpayment.StatusConfirmed {
				continue // completed already
			}
			if f := p.Edges.Forward; f != nil {
				open = open || f.Status == entforward.StatusIntent
				continue
			}
			a := p.Edges.Address
			if len(a.Destinations) == 0 {
				held = append(held, p)
				continue
			}
			if a.InvoiceID != nil {
				if byAddress[a.ID] == nil {
					merchant = append(merchant, a)
				}
				byAddress[a.ID] = append(byAddress[a.ID], p)
				continue
			}
			plan, err := distribute.Compute(t, p.ValueCoin, netFee, shares(a))
			if errors.Is(err, distribute.ErrBelowMinimum) || errors.Is(err, distribute.ErrNothingToForward) {
				// The network fee rose since the callbacks were stored: the
				// payment stays credited and is not forwarded; the logs say why.
				if err := tx.Payment.UpdateOne(p).SetNote(NotForwardedPrefix + err.Error()).SetUpdatedAt(now).Exec(ctx); err != nil {
					return fmt.Errorf("note payment %d not forwarded: %w", p.ID, err)
				}
				if err := stopWatching(ctx, tx, p.ID); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("plan forward of payment %d: %w", p.ID, err)
			}
			key := fmt.Sprintf("fwd-%d-%s", p.ID, p.TxidIn)
			plans = append(plans, planned{key: key, from: a.AddressIn, payments: []*entdb.Payment{p}, creates: []*entdb.ForwardCreate{
				tx.Forward.Create().
					SetPaymentID(p.ID).
					SetIntentID(key).
					SetOutputs(outputs(plan.Outputs)).
					SetFeeCoin(plan.Fee).
					SetNetworkFee(plan.NetworkFee).
					SetValueForwardedCoin(plan.Forwarded).
					SetCreatedAt(now).SetUpdatedAt(now),
			}})
		}
		if err := s.hold(ctx, tx, t, held, now); err != nil {
			return err
		}
		for _, a := range merchant {
			pl, err := s.planAddress(ctx, tx, t, netFee, a, byAddress[a.ID], now)
			if err != nil {
				return err
			}
			if pl != nil {
				plans = append(plans, *pl)
			}
		}
		var creates []*entdb.ForwardCreate
		for _, pl := range plans {
			creates = append(creates, pl.creates...)
		}
		if len(creates) == 0 {
			return nil
		}
		fwds, err := tx.Forward.CreateBulk(creates...).Save(ctx)
		if err != nil {
			return fmt.Errorf("record %d forwarding intents: %w", len(creates), err)
		}
		for _, pl := range plans {
			n := len(pl.creates)
			for i, f := range fwds[:n] {
				f.Edges.Payment = pl.payments[i]
			}
			todo = append(todo, sending{key: pl.key, from: pl.from, fwds: fwds[:n:n]})
			fwds = fwds[n:]
		}
		return nil
	})
	if err != nil {
		return open, err
	}
	var (
		done []sent
		errs []error
	)
	for _, g := range todo {
		txid, err := s.signAndSend(ctx, backend, t, g.key, g.fwds)
		if err != nil {
			open = true
			errs = append(errs, err)
			continue
		}
		if s.afterBroadcast != nil {
			if err := s.afterBroadcast(); err != nil {
				return true, err
			}
		}
		for _, f := range g.fwds {
			done = append(done, sent{f.ID, txid})
		}
	}
	if len(done) > 0 {
		err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
			ids, err := s.completeTx(ctx, tx, t, done)
			if err != nil {
				return err
			}
			return stopWatching(ctx, tx, ids...)
		})
		if err != nil {
			open = true
			errs = append(errs, err)
		}
	}
	return open, errors.Join(errs...)
}

// planned is one forwarding transaction to record: its broadcast key, the
// address the funds leave, and the intent of each payment it carries.
type planned struct {
	key, from string
	creates   []*entdb.ForwardCreate
	payments  []*entdb.Payment // of each create, with its Address edge
}

// sending is one recorded forwarding transaction to broadcast: its key,
// the address the funds leave, and the forwards (one per payment) it
// carries.
type sending struct {
	key, from string
	fwds      []*entdb.Forward
}

// shares returns the forwarding destinations of a.
func shares(a *entdb.Address) []distribute.Share {
	out := make([]distribute.Share, len(a.Destinations))
	for i, d := range a.Destinations {
		out[i] = distribute.Share{Address: d.Address, Share: d.Share}
	}
	return out
}

// outputs converts a plan's outputs to their stored form.
func outputs(os []chains.Output) []schema.Output {
	out := make([]schema.Output, len(os))
	for i, o := range os {
		out[i] = schema.Output{Address: o.Address, Amount: o.Amount}
	}
	return out
}

// planAddress plans, within tx, the forwarding of ps, credited payments of
// the merchant address a (which has destinations), together with the
// address's payments held for the minimum: their sum is planned as one
// transaction. When the sum cannot be forwarded (below the ticker's minimum,
// or consumed by the fees), the payments wait, noted HeldForMinimumNote and
// no longer watched (they stay credited: the merchant was told of them), and
// it returns nil. Otherwise each payment gets its own intent, its share of
// the plan in proportion to its value (splitPlan), and an intent id naming
// the transaction's broadcast key (see broadcastKey); a payment alone keeps
// the low-level form of intent id.
func (s *Service) planAddress(ctx context.Context, tx *entdb.Tx, t chains.Ticker, netFee decimal.Decimal, a *entdb.Address, ps []*entdb.Payment, now time.Time) (*planned, error) {
	q := tx.Payment.Query().
		Where(entpayment.AddressID(a.ID), entpayment.StatusEQ(entpayment.StatusConfirmed), entpayment.NoteContains(HeldForMinimumNote)).
		WithForward().Order(entdb.Asc(entpayment.FieldID))
	if s.db.Dialect == store.Postgres {
		q.ForUpdate() // another instance's group waits, then sees these forwarded
	}
	held, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load payments held for the minimum on address %d: %w", a.ID, err)
	}
	members := slices.Clone(ps)
	for _, p := range held {
		if p.Edges.Forward == nil && !slices.ContainsFunc(members, func(m *entdb.Payment) bool { return m.ID == p.ID }) {
			members = append(members, p)
		}
	}
	slices.SortFunc(members, func(x, y *entdb.Payment) int { return cmp.Compare(x.ID, y.ID) })
	sum := decimal.Zero
	values := make([]decimal.Decimal, len(members))
	for i, m := range members {
		values[i] = m.ValueCoin
		sum = sum.Add(m.ValueCoin)
	}
	plan, err := distribute.Compute(t, sum, netFee, shares(a))
	if errors.Is(err, distribute.ErrBelowMinimum) || errors.Is(err, distribute.ErrNothingToForward) {
		var noted []int64
		for _, m := range members {
			if waiting(m) {
				continue
			}
			if err := tx.Payment.UpdateOne(m).SetNote(withNote(m.Note, HeldForMinimumNote)).SetUpdatedAt(now).Exec(ctx); err != nil {
				return nil, fmt.Errorf("note payment %d held for the minimum: %w", m.ID, err)
			}
			noted = append(noted, m.ID)
		}
		s.logger.Info("payments held for the minimum: credited; forwarded with the address's next payments once their sum can be",
			"ticker", t.Ticker, "address_in", a.AddressIn, "payments", len(members), "sum_coin", sum.String(), "reason", err.Error())
		return nil, stopWatching(ctx, tx, noted...)
	}
	if err != nil {
		return nil, fmt.Errorf("plan forward of %d payments of address %d: %w", len(members), a.ID, err)
	}
	last := members[len(members)-1]
	key := fmt.Sprintf("fwd-%d-%s", last.ID, last.TxidIn)
	pl := &planned{key: key, from: a.AddressIn}
	for _, m := range members {
		m.Edges.Address = a
	}
	pl.payments = members
	if len(members) == 1 {
		pl.creates = append(pl.creates, tx.Forward.Create().
			SetPaymentID(last.ID).SetIntentID(key).SetOutputs(outputs(plan.Outputs)).
			SetFeeCoin(plan.Fee).SetNetworkFee(plan.NetworkFee).SetValueForwardedCoin(plan.Forwarded).
			SetCreatedAt(now).SetUpdatedAt(now))
		if waiting(last) { // held, and now forwardable alone (the network fee fell)
			if err := tx.Payment.UpdateOne(last).SetNote(withoutNote(last.Note, HeldForMinimumNote)).SetUpdatedAt(now).Exec(ctx); err != nil {
				return nil, fmt.Errorf("note payment %d forwarded: %w", last.ID, err)
			}
		}
		return pl, nil
	}
	for i, part := range splitPlan(t, plan, values) {
		m := members[i]
		pl.creates = append(pl.creates, tx.Forward.Create().
			SetPaymentID(m.ID).SetIntentID(fmt.Sprintf("%s%s%d", key, groupSep, m.ID)).SetOutputs(part.outputs).
			SetFeeCoin(part.fee).SetNetworkFee(part.networkFee).SetValueForwardedCoin(part.forwarded).
			SetCreatedAt(now).SetUpdatedAt(now))
		// Updating every member also makes a concurrent planAddress of this
		// address (PostgreSQL, waiting on the row lock) skip it.
		note := withNote(withoutNote(m.Note, HeldForMinimumNote), groupedNote(len(members)))
		if err := tx.Payment.UpdateOne(m).SetNote(note).SetUpdatedAt(now).Exec(ctx); err != nil {
			return nil, fmt.Errorf("note payment %d forwarded in a group: %w", m.ID, err)
		}
	}
	s.logger.Info("payments forwarded together: their sum reached the minimum",
		"ticker", t.Ticker, "address_in", a.AddressIn, "payments", len(members), "sum_coin", sum.String(), "intent", key)
	return pl, nil
}

// HeldNote is the logs' note of a payment whose funds payhook holds.
const HeldNote = "held on address_in: the address has no forwarding address; the operator's payhook funds lists it for sweeping"

// hold completes credited payments ps, whose addresses have no forwarding
// destination, within tx: their funds stay on the payment address, in the
// operator's wallet. A held Forward records it (no transaction, no outputs,
// no fees: value_forwarded_coin is what stays held), the payment is
// completed and its Distributed change published, and it is no longer
// watched. The operator API lists what is held (server/address.HeldFunds).
func (s *Service) hold(ctx context.Context, tx *entdb.Tx, t chains.Ticker, ps []*entdb.Payment, now time.Time) error {
	if len(ps) == 0 {
		return nil
	}
	creates := make([]*entdb.ForwardCreate, len(ps))
	for i, p := range ps {
		creates[i] = tx.Forward.Create().
			SetPaymentID(p.ID).SetIntentID(fmt.Sprintf("held-%d-%s", p.ID, p.TxidIn)).
			SetOutputs([]schema.Output{}).SetFeeCoin(decimal.Zero).SetNetworkFee(decimal.Zero).
			SetValueForwardedCoin(p.ValueCoin).SetHeld(true).SetStatus(entforward.StatusDone).
			SetCreatedAt(now).SetUpdatedAt(now)
	}
	fwds, err := tx.Forward.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return fmt.Errorf("record %d held payments: %w", len(ps), err)
	}
	ids := make([]int64, len(ps))
	for i, p := range ps {
		f := fwds[i]
		q, err := tx.Payment.UpdateOne(p).
			SetStatus(entpayment.StatusCompleted).
			SetValueForwardedCoin(f.ValueForwardedCoin).SetFeeCoin(f.FeeCoin).SetNetworkFee(f.NetworkFee).
			SetNote(strings.TrimPrefix(p.Note+"; "+HeldNote, "; ")).
			SetForwardedAt(now).SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("complete held payment %d: %w", p.ID, err)
		}
		q.Edges.Address = p.Edges.Address
		if err := s.publish(ctx, tx, Change{
			Kind: Distributed, Ticker: t, Address: p.Edges.Address, Payment: q,
			Status: chains.StatusCompleted, Confirmations: q.Confirmations, ValueCoin: q.ValueCoin, Forward: f,
		}); err != nil {
			return err
		}
		ids[i] = p.ID
		s.logger.Info("funds held: no forwarding address; they stay on the payment address until swept (payhook funds)",
			"ticker", t.Ticker, "address_in", p.Edges.Address.AddressIn, "value_coin", q.ValueCoin.String(), "txid_in", p.TxidIn)
	}
	return stopWatching(ctx, tx, ids...)
}

// complete records broadcast forwards (one transaction's): each forward
// done, its payment completed, and its completed callback stored, in one
// database transaction.
func (s *Service) complete(ctx context.Context, t chains.Ticker, done []sent) error {
	return store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		ids, err := s.completeTx(ctx, tx, t, done)
		if err != nil {
			return err
		}
		return stopWatching(ctx, tx, ids...)
	})
}

// sent is a broadcast forward: its intent and the transaction's hash.
type sent struct {
	forwardID int64
	txid      string
}

// stopWatching clears the due height of the payments ids (0 is skipped):
// completed, nothing is left to wait for.
func stopWatching(ctx context.Context, tx *entdb.Tx, ids ...int64) error {
	ids = slices.DeleteFunc(ids, func(id int64) bool { return id == 0 })
	if len(ids) == 0 {
		return nil
	}
	if err := tx.WatchedTransfer.Update().Where(entwatched.PaymentIDIn(ids...)).ClearDue().Exec(ctx); err != nil {
		return fmt.Errorf("stop watching %d completed payments: %w", len(ids), err)
	}
	return nil
}

// completeTx records broadcast forwards within tx (complete, but for
// stopWatching): each forward done, its payment completed, and its
// Distributed change published. It returns the payments it completed; a
// forward another instance completed already is skipped. The rows are read
// once for the batch and, on PostgreSQL, written with one UPDATE per table.
func (s *Service) completeTx(ctx context.Context, tx *entdb.Tx, t chains.Ticker, done []sent) ([]int64, error) {
	ids := make([]int64, len(done))
	txids := make(map[int64]string, len(done))
	for i, d := range done {
		ids[i], txids[d.forwardID] = d.forwardID, d.txid
	}
	fs, err := tx.Forward.Query().Where(entforward.IDIn(ids...), entforward.StatusEQ(entforward.StatusIntent)).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		Order(entdb.Asc(entforward.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load forwards: %w", err)
	}
	if len(fs) == 0 {
		return nil, nil
	}
	now := s.now()
	for _, f := range fs {
		f.TxidOut = txids[f.ID]
	}
	completed, err := s.markCompleted(ctx, tx, fs, now)
	if err != nil {
		return nil, err
	}
	var paid []int64
	for _, f := range fs {
		if !completed[f.ID] {
			continue // another instance completed it
		}
		p := *f.Edges.Payment
		fwd, fee, net := f.ValueForwardedCoin, f.FeeCoin, f.NetworkFee
		p.Status, p.TxidOut, p.ValueForwardedCoin, p.FeeCoin, p.NetworkFee = entpayment.StatusCompleted, f.TxidOut, &fwd, &fee, &net
		p.ForwardedAt, p.UpdatedAt = &now, now
		if err := s.publish(ctx, tx, Change{
			Kind: Distributed, Ticker: t, Address: p.Edges.Address, Payment: &p,
			Status: chains.StatusCompleted, Confirmations: p.Confirmations, ValueCoin: p.ValueCoin, Forward: f,
		}); err != nil {
			return nil, err
		}
		paid = append(paid, p.ID)
	}
	return paid, nil
}

// markCompleted marks forwards fs done with their TxidOut, only those still
// intents, and completes their payments; it reports which forwards it
// marked.
func (s *Service) markCompleted(ctx context.Context, tx *entdb.Tx, fs []*entdb.Forward, now time.Time) (map[int64]bool, error) {
	marked := make(map[int64]bool, len(fs))
	if s.db.Dialect != store.Postgres {
		for _, f := range fs {
			n, err := tx.Forward.Update().
				Where(entforward.ID(f.ID), entforward.StatusEQ(entforward.StatusIntent)).
				SetStatus(entforward.StatusDone).SetTxidOut(f.TxidOut).SetUpdatedAt(now).
				Save(ctx)
			if err != nil {
				return nil, fmt.Errorf("mark forward done: %w", err)
			}
			if n == 0 {
				continue
			}
			marked[f.ID] = true
			if err := tx.Payment.UpdateOneID(f.PaymentID).
				SetStatus(entpayment.StatusCompleted).SetTxidOut(f.TxidOut).
				SetValueForwardedCoin(f.ValueForwardedCoin).SetFeeCoin(f.FeeCoin).SetNetworkFee(f.NetworkFee).
				SetForwardedAt(now).SetUpdatedAt(now).
				Exec(ctx); err != nil {
				return nil, fmt.Errorf("complete payment: %w", err)
			}
		}
		return marked, nil
	}
	// One array per column: the statements do not grow with the batch.
	fids, txs := make([]any, len(fs)), make([]any, len(fs))
	for i, f := range fs {
		fids[i], txs[i] = f.ID, f.TxidOut
	}
	rows, err := tx.QueryContext(ctx, `UPDATE forwards AS f SET status = 'done', txid_out = v.txid, updated_at = $3
		FROM unnest($1::bigint[], $2::text[]) AS v(id, txid)
		WHERE f.id = v.id AND f.status = 'intent'
		RETURNING f.id`, store.Array(fids), store.Array(txs), now)
	if err != nil {
		return nil, fmt.Errorf("mark forwards done: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		marked[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var pids, ptx, fwd, fee, net []any
	for _, f := range fs {
		if marked[f.ID] {
			pids, ptx = append(pids, f.PaymentID), append(ptx, f.TxidOut)
			fwd, fee, net = append(fwd, f.ValueForwardedCoin.String()), append(fee, f.FeeCoin.String()), append(net, f.NetworkFee.String())
		}
	}
	if len(pids) == 0 {
		return marked, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payments AS p SET status = 'completed', txid_out = v.txid,
			value_forwarded_coin = v.fwd, fee_coin = v.fee, network_fee = v.net, forwarded_at = $6, updated_at = $6
		FROM unnest($1::bigint[], $2::text[], $3::numeric[], $4::numeric[], $5::numeric[]) AS v(id, txid, fwd, fee, net)
		WHERE p.id = v.id`, store.Array(pids), store.Array(ptx), store.Array(fwd), store.Array(fee), store.Array(net), now); err != nil {
		return nil, fmt.Errorf("complete payments: %w", err)
	}
	return marked, nil
}

// Reconcile finishes forwarding intents of ticker t left by a crash or a
// failed send: for each forwarding transaction (the intents sharing a
// broadcast key: one payment's, or a merchant address's group) it sends the
// recorded signed transaction again (the node accepts bytes it has already),
// or, when none was recorded (so none was sent), signs, records and sends
// one; then it records all its intents done in one transaction.
func (s *Service) Reconcile(ctx context.Context, t chains.Ticker) error {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return nil
	}
	// Open intents are few (normally none): read them alone, and their
	// payments only when there are some.
	open, err := s.db.Client.Forward.Query().
		Where(entforward.StatusEQ(entforward.StatusIntent)).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		Order(entdb.Asc(entforward.FieldID)).
		All(ctx)
	if err != nil {
		return fmt.Errorf("open forwards: %w", err)
	}
	var keys []string
	groups := map[string][]*entdb.Forward{}
	for _, f := range open {
		if f.Edges.Payment.Ticker != t.Ticker {
			continue
		}
		k := broadcastKey(f.IntentID)
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	var errs []error
	for _, k := range keys {
		fs := groups[k]
		txid, err := s.signAndSend(ctx, backend, t, k, fs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done := make([]sent, len(fs))
		for i, f := range fs {
			done[i] = sent{f.ID, txid}
		}
		if err := s.complete(ctx, t, done); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// signAndSend sends the forwarding transaction of key, whose intents are fs
// (Payment edges with their Address loaded): the signed bytes recorded on
// them if there are some, else a transaction signed now and recorded on
// every intent of fs (only where none is recorded yet, so of two instances
// the first to record wins and both send its bytes) before it is sent. It
// returns the transaction's hash.
func (s *Service) signAndSend(ctx context.Context, backend chains.Backend, t chains.Ticker, key string, fs []*entdb.Forward) (string, error) {
	signed, ok := recordedTx(fs)
	if !ok {
		sg, err := backend.Sign(ctx, groupIntent(key, fs))
		if err != nil {
			return "", fmt.Errorf("sign forward %s: %w", key, err)
		}
		if signed, err = s.recordSigned(ctx, key, fs, sg); err != nil {
			return "", err
		}
		if s.afterSign != nil {
			if err := s.afterSign(); err != nil {
				return "", err
			}
		}
	}
	if err := backend.Send(ctx, signed); err != nil {
		if errors.Is(err, chains.ErrNeverLands) {
			// Expired unsent, or included and failed: nothing moved, so
			// the forward is signed anew at the next attempt.
			if cerr := s.clearSigned(ctx, fs, signed); cerr != nil {
				return "", errors.Join(err, cerr)
			}
			s.logger.Warn("a recorded forward can never move funds; it will be signed anew", "ticker", t.Ticker, "intent", key, "txid_out", signed.TxID, "reason", err.Error())
		}
		return "", fmt.Errorf("send forward %s (%s): %w", key, signed.TxID, err)
	}
	return signed.TxID, nil
}

// clearSigned forgets the signed transaction sg recorded on the intents fs
// (only where those exact bytes are recorded and the intent is open).
func (s *Service) clearSigned(ctx context.Context, fs []*entdb.Forward, sg chains.Signed) error {
	ids := make([]int64, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		rows, err := tx.Forward.Query().Where(entforward.IDIn(ids...), entforward.StatusEQ(entforward.StatusIntent), entforward.SignedTxNotNil()).All(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.TxidOut != sg.TxID || !bytes.Equal(*r.SignedTx, sg.Raw) {
				continue
			}
			if err := tx.Forward.UpdateOne(r).ClearSignedTx().SetTxidOut("").SetUpdatedAt(s.now()).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("forget a forward that never lands: %w", err)
	}
	for _, f := range fs {
		f.SignedTx, f.TxidOut = nil, ""
	}
	return nil
}

// recordedTx returns the signed transaction recorded on fs, if any.
func recordedTx(fs []*entdb.Forward) (chains.Signed, bool) {
	for _, f := range fs {
		// ent reads a NULL signed_tx as a pointer to an empty slice.
		if f.SignedTx != nil && len(*f.SignedTx) > 0 {
			return chains.Signed{TxID: f.TxidOut, Raw: *f.SignedTx}, true
		}
	}
	return chains.Signed{}, false
}

// recordSigned records sg on the intents fs that have no signed
// transaction yet, and returns the one recorded: sg, or another instance's,
// recorded first.
func (s *Service) recordSigned(ctx context.Context, key string, fs []*entdb.Forward, sg chains.Signed) (chains.Signed, error) {
	ids := make([]int64, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	var out chains.Signed
	err := store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		if _, err := tx.Forward.Update().
			Where(entforward.IDIn(ids...), entforward.SignedTxIsNil(), entforward.StatusEQ(entforward.StatusIntent)).
			SetSignedTx(sg.Raw).SetTxidOut(sg.TxID).SetUpdatedAt(s.now()).
			Save(ctx); err != nil {
			return fmt.Errorf("record signed forward %s: %w", key, err)
		}
		got, err := tx.Forward.Query().Where(entforward.IDIn(ids...), entforward.SignedTxNotNil()).First(ctx)
		if err != nil {
			return fmt.Errorf("read signed forward %s: %w", key, err)
		}
		out = chains.Signed{TxID: got.TxidOut, Raw: *got.SignedTx}
		return nil
	})
	if err != nil {
		return chains.Signed{}, err
	}
	for _, f := range fs {
		raw := out.Raw
		f.SignedTx, f.TxidOut = &raw, out.TxID
	}
	return out, nil
}

// followSent watches the forwards of t that were sent and not yet seen
// executed in a block (node backends only: the devnet puts none in
// blocks). A node may drop a transaction it accepted (a Solana blockhash
// expiring, an EVM fee cap below a spike): such bytes are sent again, at
// every poll, until a block executes them; then landed_at is recorded. A
// transaction in a block whose execution failed is logged for the operator
// (its funds did not move; nothing is signed anew automatically).
func (s *Service) followSent(ctx context.Context, t chains.Ticker, backend chains.Backend) error {
	fs, err := s.db.Client.Forward.Query().
		Where(entforward.StatusEQ(entforward.StatusDone), entforward.SignedTxNotNil(), entforward.LandedAtIsNil(),
			entforward.HasPaymentWith(entpayment.Ticker(t.Ticker))).
		Order(entdb.Asc(entforward.FieldID)).Limit(BatchSize).All(ctx)
	if err != nil {
		return fmt.Errorf("%s sent forwards: %w", t.Ticker, err)
	}
	seen := map[string]bool{}
	var landed []string // txid_out of transactions executed in a block
	var errs []error
	for _, f := range fs {
		if f.TxidOut == "" || len(*f.SignedTx) == 0 {
			continue
		}
		if seen[f.TxidOut] {
			continue
		}
		seen[f.TxidOut] = true
		to := ""
		if len(f.Outputs) > 0 {
			to = f.Outputs[0].Address
		}
		st, err := backend.State(ctx, chains.Transfer{TxID: f.TxidOut, To: to})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("state of forward %s: %w", f.TxidOut, err))
		case st.Present && st.Executed:
			landed = append(landed, f.TxidOut)
		case st.Present:
			s.logger.Error("a forwarding transaction failed in its block: its funds did not move; an operator must look", "ticker", t.Ticker, "txid_out", f.TxidOut)
			landed = append(landed, f.TxidOut) // followed no further
		default:
			if err := backend.Send(ctx, chains.Signed{TxID: f.TxidOut, Raw: *f.SignedTx}); err != nil {
				errs = append(errs, fmt.Errorf("send forward %s again: %w", f.TxidOut, err))
			}
		}
	}
	if len(landed) > 0 {
		// Every forward of a landed transaction (a group's) lands with it.
		if err := s.db.Client.Forward.Update().
			Where(entforward.TxidOutIn(landed...), entforward.LandedAtIsNil()).
			SetLandedAt(s.now()).Exec(ctx); err != nil {
			errs = append(errs, fmt.Errorf("record landed forwards: %w", err))
		}
	}
	return errors.Join(errs...)
}
