package chaintest

import (
	"context"
	"fmt"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/lifecycle"
)

// DefaultRescan is how many blocks below the previous tip a Tracker scans
// again on every Poll.
const DefaultRescan = 64

// Key identifies a transfer, and so a payment: (TxID, Index).
type Key struct {
	TxID  string
	Index int64
}

// Notice is one callback a payment's status change would send.
type Notice struct {
	Status        chains.Status
	Confirmations int64
}

// String formats n as status(confirmations), e.g. "pending(2)".
func (n Notice) String() string { return fmt.Sprintf("%s(%d)", n.Status, n.Confirmations) }

// Observed is one evaluation of a payment: the tip at the time, what the
// backend showed of the transaction, and the rules' verdict.
type Observed struct {
	Head    chains.Head
	TxState chains.TxState
	Step    chains.Step
}

// Payment is one tracked transfer and everything the Tracker made of it.
type Payment struct {
	// Transfer is the transfer as Transfers first reported it.
	Transfer chains.Transfer
	// State is the recorded state: the last Step fed back.
	State chains.PaymentState
	// Notices are the callbacks sent, in order: one per Step with Notify.
	Notices []Notice
	// Credits counts Steps with Credit; the rules promise at most one.
	Credits int
	// Forwardable is the last Step's Forwardable.
	Forwardable bool
	// History is every evaluation, oldest first.
	History []Observed
}

// Key returns the payment's (TxID, Index).
func (p *Payment) Key() Key { return Key{p.Transfer.TxID, p.Transfer.Index} }

// Tracker folds a backend's observations into payments the way payhook's
// watcher does, so tests can assert the callbacks a scenario produces.
// Each Poll reads the Head, asks for Transfers to the watched addresses in
// the blocks since the previous Poll (and Rescan blocks below, to find
// transfers in blocks that replaced reorganised ones), starts a payment for
// each new (TxID, Index), then asks the State of every payment and feeds it
// through lifecycle.Evaluate with the recorded state, recording the result.
//
// A Tracker is not safe for concurrent use. It checks the Backend contract
// as it goes: Poll fails if the head is inconsistent or Transfers returns a
// transfer outside the asked range or to an unwatched address.
type Tracker struct {
	// Rescan is how many blocks below the previously scanned tip each Poll
	// scans again; NewTracker sets DefaultRescan. Change it before the
	// first Poll.
	Rescan int64

	backend  chains.Backend
	ticker   chains.Ticker
	required int64
	watched  map[string]bool
	scanned  int64
	payments []*Payment
	byKey    map[Key]*Payment
}

// NewTracker returns a Tracker of ticker t on b with the merchant's
// required confirmations, watching addresses. Its first Poll scans from
// height 0.
func NewTracker(b chains.Backend, t chains.Ticker, required int64, addresses ...string) *Tracker {
	tr := &Tracker{
		Rescan:   DefaultRescan,
		backend:  b,
		ticker:   t,
		required: required,
		watched:  make(map[string]bool),
		byKey:    make(map[Key]*Payment),
	}
	tr.Watch(addresses...)
	return tr
}

// Watch adds addresses to the watched set. Transfers to them in blocks
// already scanned (beyond the Rescan window) are not looked for again.
func (tr *Tracker) Watch(addresses ...string) {
	for _, a := range addresses {
		tr.watched[a] = true
	}
}

// Poll observes the backend once; see Tracker.
func (tr *Tracker) Poll(ctx context.Context) error {
	head, err := tr.backend.Head(ctx)
	if err != nil {
		return fmt.Errorf("poll %s: head: %w", tr.ticker.Ticker, err)
	}
	if head.Height < 0 || head.Solidified < 0 || head.Solidified > head.Height {
		return fmt.Errorf("poll %s: inconsistent head %+v", tr.ticker.Ticker, head)
	}
	from := max(0, min(tr.scanned, head.Height)-tr.Rescan)
	if head.Height > from && len(tr.watched) > 0 {
		ts, err := tr.backend.Transfers(ctx, from, head.Height, func(a string) bool { return tr.watched[a] })
		if err != nil {
			return fmt.Errorf("poll %s: transfers after %d up to %d: %w", tr.ticker.Ticker, from, head.Height, err)
		}
		for _, t := range ts {
			if !tr.watched[t.To] {
				return fmt.Errorf("poll %s: transfer %s:%d to unwatched address %s", tr.ticker.Ticker, t.TxID, t.Index, t.To)
			}
			if t.Height <= from || t.Height > head.Height {
				return fmt.Errorf("poll %s: transfer %s:%d at height %d, asked for after %d up to %d",
					tr.ticker.Ticker, t.TxID, t.Index, t.Height, from, head.Height)
			}
			k := Key{t.TxID, t.Index}
			if tr.byKey[k] == nil {
				p := &Payment{Transfer: t}
				tr.byKey[k] = p
				tr.payments = append(tr.payments, p)
			}
		}
	}
	tr.scanned = head.Height

	for _, p := range tr.payments {
		s, err := tr.backend.State(ctx, p.Transfer)
		if err != nil {
			return fmt.Errorf("poll %s: state of %s: %w", tr.ticker.Ticker, p.Transfer.TxID, err)
		}
		step, err := lifecycle.Evaluate(tr.ticker, tr.required, p.State, s)
		if err != nil {
			return fmt.Errorf("poll %s: %w", tr.ticker.Ticker, err)
		}
		p.History = append(p.History, Observed{Head: head, TxState: s, Step: step})
		p.State = chains.PaymentState{Status: step.Status, Confirmations: step.Confirmations}
		if step.Notify {
			p.Notices = append(p.Notices, Notice{step.Status, step.Confirmations})
		}
		if step.Credit {
			p.Credits++
		}
		p.Forwardable = step.Forwardable
	}
	return nil
}

// Payments returns the tracked payments in the order they were found. The
// pointers are the Tracker's own: read them between Polls.
func (tr *Tracker) Payments() []*Payment {
	out := make([]*Payment, len(tr.payments))
	copy(out, tr.payments)
	return out
}

// Find returns the first tracked payment of transaction txid.
func (tr *Tracker) Find(txid string) (*Payment, bool) {
	for _, p := range tr.payments {
		if p.Transfer.TxID == txid {
			return p, true
		}
	}
	return nil, false
}

// statusRank orders the statuses that never regress.
var statusRank = map[chains.Status]int{
	chains.StatusNone:      0,
	chains.StatusPending:   1,
	chains.StatusConfirmed: 2,
	chains.StatusCompleted: 3,
}

// CheckInvariants reports the first violation, in p's History, of the
// guarantees the lifecycle rules make whatever the chain does: statuses
// never regress (and dropped or reverted are entered only before credit;
// reverted is final), recorded confirmations never decrease, credit happens
// at most once and exactly when confirmed is first reached, callbacks are
// only pending or confirmed and confirmed is announced once, and forwarding
// is allowed only after credit.
func (p *Payment) CheckInvariants() error {
	prev := chains.PaymentState{}
	credited := false
	for i, o := range p.History {
		s := o.Step
		fail := func(format string, args ...any) error {
			return fmt.Errorf("payment %s:%d, observation %d (%+v after %+v): %s",
				p.Transfer.TxID, p.Transfer.Index, i+1, s, prev, fmt.Sprintf(format, args...))
		}
		if s.Confirmations < prev.Confirmations {
			return fail("confirmations went down")
		}
		if prev.Status == chains.StatusReverted && s.Status != chains.StatusReverted {
			return fail("left the final reverted status")
		}
		rp, okPrev := statusRank[prev.Status]
		rs, okNow := statusRank[s.Status]
		switch {
		case okPrev && okNow && rs < rp:
			return fail("status regressed")
		case (s.Status == chains.StatusDropped || s.Status == chains.StatusReverted) && credited:
			return fail("status %s after credit", s.Status)
		}
		if s.Credit {
			if credited {
				return fail("credited twice")
			}
			if s.Status != chains.StatusConfirmed || prev.Status == chains.StatusConfirmed {
				return fail("credit not at the step that first reached confirmed")
			}
			credited = true
		} else if s.Status == chains.StatusConfirmed && !credited {
			return fail("confirmed without credit")
		}
		if s.Notify {
			if s.Status != chains.StatusPending && s.Status != chains.StatusConfirmed {
				return fail("callback for status %s", s.Status)
			}
			if s.Status == chains.StatusConfirmed && prev.Status == chains.StatusConfirmed {
				return fail("confirmed announced twice")
			}
		}
		if s.Forwardable && !credited {
			return fail("forwardable before credit")
		}
		prev = chains.PaymentState{Status: s.Status, Confirmations: s.Confirmations}
	}
	return nil
}
