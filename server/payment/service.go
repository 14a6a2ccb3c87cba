package payment

import (
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

	// afterBroadcast, when set (tests), runs between a forward's broadcast
	// and its record; an error stops there, as a crash would.
	afterBroadcast func() error
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
}

// New returns a Service.
func New(db *store.DB, cfg Config, logger *slog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, registry: cfg.Registry, backends: cfg.Backends, reactors: cfg.Reactors, now: cfg.Now, logger: logger, lease: newLease(db)}
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
		SetNote(notForwardable(t, o.Value)).SetNillableCreditedAt(when(step.Credit, now)).
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
		return p, step, step.Forwardable && p.Status == entpayment.StatusConfirmed && !strings.HasPrefix(p.Note, NotForwardedPrefix), nil
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
// it, and reports whether p may be forwarded now. A payment that will never
// be forwarded (below the minimum, consumed by fees) publishes nothing.
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
	return step.Forwardable && p.Status == entpayment.StatusConfirmed && !below, nil
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
	if p != nil && strings.HasPrefix(p.Note, NotForwardedPrefix) {
		return nil
	}
	switch step.Status {
	case chains.StatusNone, chains.StatusPending:
		return &next
	case chains.StatusConfirmed:
		if step.Forwardable || o.Height == 0 || t.Family != chains.FamilyTron {
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

// Forward distributes a credited payment: intent, broadcast, record. It is
// safe to call any number of times and from several instances: the intent is
// unique per payment, the broadcast idempotent on its id.
func (s *Service) Forward(ctx context.Context, t chains.Ticker, paymentID int64) error {
	_, err := s.forward(ctx, t, []int64{paymentID})
	return err
}

// forward distributes the credited payments ids: one transaction records a
// forwarding intent for each that has none, each intent is broadcast, and
// one transaction records the broadcasts and their completed changes. A
// crash between the two leaves intents that Reconcile finishes with the
// chain's help. open reports that an intent is left for Reconcile: a
// failed broadcast, or an intent this call did not create.
func (s *Service) forward(ctx context.Context, t chains.Ticker, ids []int64) (open bool, err error) {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return false, fmt.Errorf("forward %d payments: no backend for %s", len(ids), t.Ticker)
	}
	netFee, err := backend.NetworkFee(ctx)
	if err != nil {
		return false, fmt.Errorf("estimate network fee: %w", err)
	}
	type sending struct {
		fwd  *entdb.Forward
		from string
	}
	var todo []sending
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		todo, open = todo[:0], false
		var creates []*entdb.ForwardCreate
		var from []string
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
			shares := make([]distribute.Share, len(a.Destinations))
			for i, d := range a.Destinations {
				shares[i] = distribute.Share{Address: d.Address, Share: d.Share}
			}
			plan, err := distribute.Compute(t, p.ValueCoin, netFee, shares)
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
			outs := make([]schema.Output, len(plan.Outputs))
			for i, o := range plan.Outputs {
				outs[i] = schema.Output{Address: o.Address, Amount: o.Amount}
			}
			creates = append(creates, tx.Forward.Create().
				SetPaymentID(p.ID).
				SetIntentID(fmt.Sprintf("fwd-%d-%s", p.ID, p.TxidIn)).
				SetOutputs(outs).
				SetFeeCoin(plan.Fee).
				SetNetworkFee(plan.NetworkFee).
				SetValueForwardedCoin(plan.Forwarded).
				SetCreatedAt(now).SetUpdatedAt(now))
			from = append(from, a.AddressIn)
		}
		if err := s.hold(ctx, tx, t, held, now); err != nil {
			return err
		}
		if len(creates) == 0 {
			return nil
		}
		fwds, err := tx.Forward.CreateBulk(creates...).Save(ctx)
		if err != nil {
			return fmt.Errorf("record %d forwarding intents: %w", len(creates), err)
		}
		for i, f := range fwds {
			todo = append(todo, sending{fwd: f, from: from[i]})
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
	for _, f := range todo {
		txid, err := backend.Broadcast(ctx, intent(f.fwd, f.from))
		if err != nil {
			open = true
			errs = append(errs, fmt.Errorf("broadcast forward %s: %w", f.fwd.IntentID, err))
			continue
		}
		if s.afterBroadcast != nil {
			if err := s.afterBroadcast(); err != nil {
				return true, err
			}
		}
		done = append(done, sent{f.fwd.ID, txid})
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
		ids, err := s.completeTx(ctx, tx, t, []sent{{forwardID, txid}})
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
// failed broadcast: it asks the backend whether each was broadcast, and
// broadcasts (idempotently) those that were not, then records them.
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
		All(ctx)
	if err != nil {
		return fmt.Errorf("open forwards: %w", err)
	}
	var errs []error
	for _, f := range open {
		if f.Edges.Payment.Ticker != t.Ticker {
			continue
		}
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
