package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/lifecycle"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entwatched "github.com/payhook/payhook/ent/db/watchedtransfer"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// Service applies chain observations and forwards credited payments,
// publishing each change to its reactors.
type Service struct {
	db       *store.DB
	registry *chains.Registry
	backends map[string]chains.Backend
	reactors Reactors
	out      *outbound.Engine
	now      func() time.Time
	logger   *slog.Logger
	lease    *lease
	// startNearHead: Config.StartNearHead.
	startNearHead map[string]bool

	hooksMu sync.RWMutex
	hooks   []func(context.Context, chains.Ticker) error

	// book is every payment address, shared by the watchers.
	book *addressBook

	// watchers are the service's watchers by ticker (Detected).
	watchersMu sync.RWMutex
	watchers   map[string]*Watcher
}

// AfterPoll adds fn to what a watcher runs after each of its polls that
// holds the ticker's lease (the payouts' processor): an error is logged,
// and fn runs again after the next poll.
func (s *Service) AfterPoll(fn func(context.Context, chains.Ticker) error) {
	s.hooksMu.Lock()
	defer s.hooksMu.Unlock()
	s.hooks = append(s.hooks, fn)
}

// afterPoll runs the AfterPoll hooks for t.
func (s *Service) afterPoll(ctx context.Context, t chains.Ticker, logger *slog.Logger) {
	s.hooksMu.RLock()
	hooks := s.hooks
	s.hooksMu.RUnlock()
	for _, fn := range hooks {
		if err := fn(ctx, t); err != nil {
			logger.Error("after a poll; retried after the next", "error", err)
		}
	}
}

// Config configures a Service.
type Config struct {
	// Registry is the ticker registry.
	Registry *chains.Registry
	// Backends maps tickers to their chains; a ticker without one is not
	// watched.
	Backends map[string]chains.Backend
	// Reactors are the reactors of the addresses' services: each is told,
	// inside the transaction that records them, of the changes of its
	// addresses.
	Reactors Reactors
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
	// StartNearHead lists the tickers (node backends) whose first poll,
	// with no cursor stored, starts StartRescan blocks below the tip
	// rather than at height 0 (the devnet's whole history).
	StartNearHead map[string]bool
	// Outbound is the engine that sends the forwards; the service handles
	// its forward transactions (outbound.PurposeForward). When nil, New
	// builds one over Backends with Minimums.
	Outbound *outbound.Engine
	// Minimums are the networks' smallest outputs, for the engine New
	// builds when Outbound is nil.
	Minimums outbound.Minimums
}

// New returns a Service. It registers itself as the handler of the
// engine's forward transactions.
func New(db *store.DB, cfg Config, logger *slog.Logger) *Service {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	if cfg.Outbound == nil {
		cfg.Outbound = outbound.New(db, outbound.Config{Backends: cfg.Backends, Minimums: cfg.Minimums, Now: cfg.Now}, logger)
	}
	s := &Service{db: db, registry: cfg.Registry, backends: cfg.Backends, reactors: cfg.Reactors, out: cfg.Outbound, now: cfg.Now, logger: logger, lease: newLease(db), startNearHead: cfg.StartNearHead,
		book: newAddressBook(cfg.Backends)}
	cfg.Outbound.Handle(outbound.PurposeForward, forwarding{s})
	return s
}

// Outbound is the engine that sends the service's forwards.
func (s *Service) Outbound() *outbound.Engine { return s.out }

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
		if err == nil || try == 2 || !store.IsConstraintError(err) {
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
		if err := store.PlanByIndex(ctx, tx, s.db.Dialect, false); err != nil {
			return err
		}
		// What the batch journals, written with one statement at its end,
		// and the changes it publishes, handed to their reactors there.
		var journal []ledger.Entry
		var pub changes
		if len(obs) > 0 {
			tos := make([]string, 0, len(obs))
			txids := make([]string, 0, len(obs))
			for _, o := range obs {
				tos = append(tos, o.To)
				txids = append(txids, o.TxID)
			}
			// By address_in alone: it is unique, so its index is the one
			// the statement can use (a second indexed condition, such as
			// the ticker, lets a planner without statistics scan that
			// index instead). The ticker is checked here.
			addrs, err := tx.Address.Query().Where(entaddress.AddressInIn(uniq(tos)...)).All(ctx)
			if err != nil {
				return fmt.Errorf("find addresses: %w", err)
			}
			byAddr := make(map[string]*entdb.Address, len(addrs))
			ids := make([]int64, 0, len(addrs))
			for _, a := range addrs {
				if !s.receives(t, a) {
					continue
				}
				byAddr[a.AddressIn] = a
				ids = append(ids, a.ID)
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
			watch := make([][]any, 0, len(obs))
			// after records what follows a payment's new state: its change
			// published (applyOne did), its forward, its watched transfer.
			after := func(a *entdb.Address, p *entdb.Payment, o chains.Observation, step chains.Step, fwd bool) {
				if fwd {
					forwards = append(forwards, p.ID)
				}
				var pid any
				if p != nil {
					pid = p.ID
				}
				watch = append(watch, []any{t.Ticker, o.To, o.TxID, o.Index, o.Value, o.Height,
					store.Nullable(nextDue(t, int64(a.RequiredConfirmations), head, o, step, p)), pid})
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
					if n.step.Credit {
						journal = credited(journal, t, n.a, p)
					}
					before := len(pub)
					fwd := s.published(&pub, t, n.a, p, chains.PaymentState{}, n.step)
					for i := before; i < len(pub); i++ {
						pub[i].First = true // recorded by this transaction
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
				p, step, fwd, err := s.applyOne(ctx, tx, t, a, p, o, &journal, &pub)
				if err != nil {
					return err
				}
				pays[k] = p
				after(a, p, o, step, fwd)
			}
			if err := flush(); err != nil {
				return err
			}
			if err := s.react(ctx, tx, pub); err != nil {
				return err
			}
			if err := ledger.Write(ctx, tx, s.db.Dialect, s.now(), journal...); err != nil {
				return err
			}
			if len(watch) > 0 {
				if _, err := store.InsertRows(ctx, tx, s.db.Dialect, entwatched.Table, watchColumns, watch, watchUpsert, false); err != nil {
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

// watchColumns are the columns of a watched transfer applyTx records, in
// the order of its rows; watchUpsert updates the row of a transfer watched
// already.
var (
	watchColumns = []store.Column{
		{Name: entwatched.FieldTicker, PGType: "text"}, {Name: entwatched.FieldAddressIn, PGType: "text"},
		{Name: entwatched.FieldTxid, PGType: "text"}, {Name: entwatched.FieldOutputIndex, PGType: "bigint"},
		{Name: entwatched.FieldValueCoin, PGType: "numeric"}, {Name: entwatched.FieldHeight, PGType: "bigint"},
		{Name: entwatched.FieldDue, PGType: "bigint"}, {Name: entwatched.FieldPaymentID, PGType: "bigint"},
	}
	watchUpsert = "ON CONFLICT (" + entwatched.FieldTicker + ", " + entwatched.FieldAddressIn + ", " + entwatched.FieldTxid + ", " + entwatched.FieldOutputIndex +
		") DO UPDATE SET " + entwatched.FieldHeight + " = excluded." + entwatched.FieldHeight + ", " + entwatched.FieldDue + " = excluded." + entwatched.FieldDue +
		", " + entwatched.FieldPaymentID + " = excluded." + entwatched.FieldPaymentID
)

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
	c := tx.Payment.Create().
		SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTicker(t.Ticker).
		SetTxidIn(o.TxID).SetOutputIndex(o.Index).SetValueCoin(o.Value).
		SetConfirmations(step.Confirmations).SetStatus(entpayment.Status(step.Status)).
		SetNillableCreditedAt(when(step.Credit, now)).
		SetCreatedAt(now).SetUpdatedAt(now)
	if a.WatchKeyID != nil {
		// The merchant's own key: nothing is forwarded, so no minimum
		// applies and nothing is held but an asset the address was not
		// made for (the merchant is told; it is in their wallet).
		if s.wrongAsset(t, a) {
			c.SetHoldReason(entpayment.HoldReasonWrongAsset).SetNote(wrongAssetWatchNote)
		}
	} else if why := notForwardable(t, a, o.Value); why != "" {
		c.SetHoldReason(entpayment.HoldReasonBelowMinimum).SetNote(notForwardedNote + why)
	} else if s.wrongAsset(t, a) {
		// Credited (the merchant is told by a wrong_asset webhook), held
		// from its detection, never forwarded until the merchant forwards
		// or refunds it.
		c.SetHoldReason(entpayment.HoldReasonWrongAsset).SetNote(wrongAssetNote)
	} else if late(a, now) {
		// Credited and notified as any payment (the invoice's reactor says
		// it is held), journaled as held at its credit (credited), never
		// forwarded: the refund of issue 23 is what releases it, from its
		// own address (the journal's held balance, reason late_payment).
		c.SetHoldReason(entpayment.HoldReasonLatePayment).SetNote(latePaymentNote)
	}
	return step, c, nil
}

// credited adds to journal what the credit of payment p of address a
// journals: the credit, and for a low-level payment that is never
// forwarded (below the minimum) its hold, so the funds are listed as held
// from the start.
func credited(journal []ledger.Entry, t chains.Ticker, a *entdb.Address, p *entdb.Payment) []ledger.Entry {
	r := ref(a, p)
	journal = append(journal, ledger.Credit(t, r, p.ValueCoin))
	if a.WatchKeyID != nil && p.HoldReason != entpayment.HoldReasonNone {
		// In the merchant's wallet, not payhook's to hold; an asset the
		// address was not made for owes no fee.
		return append(journal, ledger.Direct(t, r, p.ValueCoin, decimal.Zero))
	}
	if p.HoldReason != entpayment.HoldReasonNone {
		journal = append(journal, ledger.Hold(t, r, p.ValueCoin, string(p.HoldReason)))
	}
	return journal
}

// ref is what the journal's entries about payment p of address a refer to.
func ref(a *entdb.Address, p *entdb.Payment) ledger.Ref {
	return ledger.Ref{ProjectID: a.ProjectID, PaymentID: p.ID, AddressID: a.ID}
}

// applyOne applies one observation to the recorded payment p of address a,
// within tx: it records the payment's new state, adds what it journals to
// journal, and publishes the change. It returns the payment, the rules'
// step, and whether it may be forwarded now.
func (s *Service) applyOne(ctx context.Context, tx *entdb.Tx, t chains.Ticker, a *entdb.Address, p *entdb.Payment, o chains.Observation, journal *[]ledger.Entry, pub *changes) (*entdb.Payment, chains.Step, bool, error) {
	prev := chains.PaymentState{Status: chains.Status(p.Status), Confirmations: p.Confirmations}
	step, err := lifecycle.Evaluate(t, int64(a.RequiredConfirmations), prev, o.State)
	if err != nil {
		return nil, step, false, err
	}
	if step.Status == chains.StatusNone {
		return p, step, false, nil // not reportable yet (mempool, Solana below its commitment)
	}
	now := s.now()
	wasCredited := prev.Status == chains.StatusConfirmed || prev.Status == chains.StatusCompleted
	// A credited payment that leaves the chain is recorded, not reversed
	// (the merchant was told); the journal counts it as a loss until it
	// comes back.
	leaves := !o.State.Present && wasCredited && !p.Reorged
	returns := o.State.Present && p.Reorged
	if step.Status == prev.Status && step.Confirmations == prev.Confirmations && !leaves && !returns {
		return p, step, s.forwardable(p, step), nil
	}
	u := tx.Payment.UpdateOne(p).
		SetStatus(entpayment.Status(step.Status)).
		SetConfirmations(step.Confirmations).
		SetUpdatedAt(now)
	switch {
	case leaves:
		u.SetReorged(true).AddReorgCount(1).SetNote(withNote(p.Note, reorgedNote))
		*journal = append(*journal, ledger.Reversal(t, ref(a, p), p.ValueCoin, p.ReorgCount+1))
		s.logger.Log(ctx, s.reorgLevel(t), "a credited payment left the chain (reorganisation): recorded, not reversed; its value is journaled as a loss until it returns",
			"ticker", t.Ticker, "payment", p.ID, "txid", p.TxidIn, "value_coin", p.ValueCoin.String(), "project", a.ProjectID, "address", a.AddressIn)
	case returns:
		// The note says so too: the logs' history would otherwise end
		// with "left the chain".
		u.SetReorged(false).SetNote(withNote(p.Note, returnedNote))
		*journal = append(*journal, ledger.Restore(t, ref(a, p), p.ValueCoin, p.ReorgCount))
		s.logger.Info("a reorganised payment is back in the chain; its loss is restored",
			"ticker", t.Ticker, "payment", p.ID, "txid", p.TxidIn, "project", a.ProjectID, "address", a.AddressIn)
	}
	if step.Credit {
		u.SetCreditedAt(now)
	}
	if p, err = u.Save(ctx); err != nil {
		return nil, step, false, fmt.Errorf("update payment: %w", err)
	}
	if step.Credit {
		*journal = credited(*journal, t, a, p)
	}
	return p, step, s.published(pub, t, a, p, prev, step), nil
}

// reorgLevel is the level at which a credited payment leaving t's chain is
// logged: a warning for the operator (money the journal counts as lost),
// information on an ephemeral chain (the devnet, whose payments every
// restart forgets: chains.Ephemeral).
func (s *Service) reorgLevel(t chains.Ticker) slog.Level {
	if e, ok := s.backends[t.Ticker].(chains.Ephemeral); ok && e.Ephemeral() {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// forwardable reports whether p, after step, may be forwarded now: credited
// by a step that allows distribution, held for no reason, on the chain.
func (s *Service) forwardable(p *entdb.Payment, step chains.Step) bool {
	return step.Forwardable && p.Status == entpayment.StatusConfirmed && p.HoldReason == entpayment.HoldReasonNone && !p.Reorged
}

// published adds to pub the change a step made to payment p (recorded
// with its new state; prev is its state before), when the merchant is told
// of it, and reports whether p may be forwarded now. A low-level payment that
// will never be forwarded (below the minimum, consumed by fees) publishes
// nothing; a merchant payment held for the minimum is not forwarded alone
// (its address's next payment takes it along).
func (s *Service) published(pub *changes, t chains.Ticker, a *entdb.Address, p *entdb.Payment, prev chains.PaymentState, step chains.Step) bool {
	// A low-level payment held below the minimum is silent: the merchant is
	// never told of funds it will not receive.
	silent := a.InvoiceID == nil && p.HoldReason == entpayment.HoldReasonBelowMinimum
	if step.Notify && !silent && (step.Status == chains.StatusPending || step.Status == chains.StatusConfirmed) {
		kind := Depth
		switch {
		case step.Credit:
			kind = Confirmed
		case prev.Status != chains.StatusPending:
			kind = Detected
		}
		pub.publish(Change{Kind: kind, Ticker: t, Address: a, Payment: p, Status: step.Status, Confirmations: p.Confirmations, ValueCoin: p.ValueCoin})
	}
	return s.forwardable(p, step)
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
	if p != nil && p.HoldReason != entpayment.HoldReasonNone && !awaitsCredit(p, step) {
		return nil // held: never forwarded, or forwarded with the address's next payment
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

// The logs' notes (Payment.note), for people only: the typed columns say
// the same for the code.
const (
	// notForwardedNote starts the note of a low-level payment held below
	// the minimum: recorded, never forwarded, no callbacks.
	notForwardedNote = "not forwarded: "
	// wrongAssetNote is the note of a payment of another asset than its
	// address takes, held until the merchant forwards or refunds it.
	wrongAssetNote = "held as wrong_asset: another asset than the address was created for, without multi_token; the merchant forwards or refunds it"
	// wrongAssetWatchNote is wrongAssetNote's for an address of the
	// merchant's watch-only key, which payhook cannot move.
	wrongAssetWatchNote = "wrong_asset: another asset than the address was created for, without multi_token; it is in the merchant's own wallet (watch-only key), not counted, owes no fee"
	// latePaymentNote is the note of a payment held as late for a refund.
	latePaymentNote = "held for a refund: paid after its checkout expired, under the checkout's late_payments refund policy; credited and notified, not forwarded"
	// reorgedNote is the note of a payment that left the chain after its
	// credit.
	reorgedNote = "left the chain after it was credited (reorganisation); recorded, not reversed"
	// returnedNote is appended when a payment that left the chain after
	// its credit is in a block of the best chain again.
	returnedNote = "back in the chain"
)

// notForwardable says why a payment of value to address a cannot be
// forwarded (below the ticker's minimum, or consumed by the service and
// estimated network fees), or "" when it can. Decided before any callback
// is stored, so a merchant is never told of funds it will not receive: the
// payment is held below the minimum (listed as held funds) and silent.
//
// Only low-level addresses (the family's behaviour) hold such payments
// silently. A merchant payment (checkout, deposit, subscription:
// a.InvoiceID set) is always credited, notified and counted toward its
// invoice; if it cannot be forwarded alone it is held for the minimum and
// forwarded with its address's next payments.
func notForwardable(t chains.Ticker, a *entdb.Address, value decimal.Decimal) string {
	if a.InvoiceID != nil {
		return ""
	}
	if value.LessThan(t.MinTransaction) {
		return fmt.Sprintf("below the minimum transaction of %s %s; no callbacks", t.MinTransaction, t.Coin)
	}
	_, err := distribute.Compute(t, value, t.NetworkFeeEstimate, []distribute.Share{{Address: "-", Share: decimal.NewFromInt(1)}})
	if errors.Is(err, distribute.ErrNothingToForward) || errors.Is(err, distribute.ErrBelowMinimum) {
		return fmt.Sprintf("the fees (%s %s rate and about %s %s network fee) would consume it; no callbacks", t.FeeRate, "service", t.NetworkFeeEstimate, t.Coin)
	}
	return ""
}

// late reports whether a payment detected at now on address a is late
// under its checkout's refund policy: at or after the address's
// late_hold_from (the checkout's expiry; unset under the credit policy).
func late(a *entdb.Address, now time.Time) bool {
	return a.InvoiceID != nil && a.LateHoldFrom != nil && !now.Before(*a.LateHoldFrom)
}

// awaitsCredit reports whether held payment p is still watched: a late
// payment held for a refund is held from its detection, yet the merchant
// is told of its confirmations and credit as of any payment, so it is
// watched until credited (then nothing is left to wait for).
func awaitsCredit(p *entdb.Payment, step chains.Step) bool {
	return (p.HoldReason == entpayment.HoldReasonLatePayment || p.HoldReason == entpayment.HoldReasonWrongAsset) &&
		(step.Status == chains.StatusNone || step.Status == chains.StatusPending)
}

func when(ok bool, t time.Time) *time.Time {
	if !ok {
		return nil
	}
	return &t
}

// relation says how ticker t relates to the ticker of address a
// (chains.Family.Relation): whether a transfer of t to a is one of a's
// payments at all.
func (s *Service) relation(t chains.Ticker, a *entdb.Address) chains.Relation {
	if a.Ticker == t.Ticker {
		return chains.SameTicker
	}
	if s.registry == nil {
		return chains.Unrelated
	}
	u, ok := s.registry.Lookup(a.Ticker)
	if !ok {
		return chains.Unrelated
	}
	return t.Rules().Relation(t, u)
}

// receives reports whether a transfer of t to address a is a payment of a:
// of its own ticker, another asset of its chain (credited under its own
// ticker with multi_token, else held as wrong_asset), or its ticker's
// coin on another chain it watches (multi_chain).
func (s *Service) receives(t chains.Ticker, a *entdb.Address) bool {
	switch s.relation(t, a) {
	case chains.SameTicker:
		return true
	case chains.SameChain:
		return t.Token // as watchedTickers: a native coin on a token address is payhook's gas top-up
	case chains.OtherChain:
		return a.MultiChain
	}
	return false
}

// wrongAsset reports whether a payment of t to address a (received) is
// another asset than the address takes: a token of its chain without
// multi_token, or a token of another chain without it.
func (s *Service) wrongAsset(t chains.Ticker, a *entdb.Address) bool {
	switch s.relation(t, a) {
	case chains.SameChain:
		return !a.MultiToken
	case chains.OtherChain:
		return t.Token && !a.MultiToken
	}
	return false
}

// watchedTickers returns, for a watcher of t, the other tickers whose
// addresses it watches: for a token, those of its chain (all their
// addresses: a token sent to an ETH address), and those of the family's
// other chains (their multi_chain addresses).
func (s *Service) watchedTickers(t chains.Ticker) (sameChain, otherChain []string) {
	if s.registry == nil {
		return nil, nil
	}
	for _, u := range s.registry.All() {
		switch t.Rules().Relation(t, u) {
		case chains.SameChain:
			// A token is looked for on its chain's other addresses; the
			// native coin is not (payhook's own gas top-ups go to token
			// addresses).
			if t.Token {
				sameChain = append(sameChain, u.Ticker)
			}
		case chains.OtherChain:
			otherChain = append(otherChain, u.Ticker)
		}
	}
	return sameChain, otherChain
}
