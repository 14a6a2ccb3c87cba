package solana

import "github.com/payhook/payhook/chains"

// Commitment returns the commitment level at which a transfer of t is
// accepted: chains.CommitmentConfirmed for an SPL token,
// chains.CommitmentFinalized for native SOL.
func Commitment(t chains.Ticker) chains.Commitment {
	if t.Token {
		return chains.CommitmentConfirmed
	}
	return chains.CommitmentFinalized
}

// Rules is Solana's lifecycle.
//
// A transfer is accepted when its transaction is Present at Commitment(t) or
// stronger; required is ignored and TxState.Confirmations is not read.
// Accepted and Executed, it goes straight to confirmed: a callback, credit,
// forwardable, and a recorded count of 1. Accepted with Executed false (a
// transaction that failed, which backends should not report at all) it is
// reverted: recorded, never credited, no callback, final. Below the
// acceptance commitment nothing is reported (StatusNone, no callback).
//
// A transaction that is no longer Present before acceptance is dropped
// (recorded, no callback); it is evaluated afresh once it is accepted again
// (it stays dropped until then). After credit the status is kept whatever the
// chain shows; Forwardable is true while the current observation is accepted
// and Executed, and the caller never forwards twice.
type Rules struct{}

var _ chains.Rules = Rules{}

// Evaluate applies one observation of a transfer to the recorded state. See
// Rules for the semantics.
func (Rules) Evaluate(t chains.Ticker, _ int64, prev chains.PaymentState, s chains.TxState) chains.Step {
	accepted := s.Present && s.Commitment >= Commitment(t)
	conf := max(prev.Confirmations, 0)

	switch prev.Status {
	case chains.StatusConfirmed, chains.StatusCompleted:
		return chains.Step{Status: prev.Status, Confirmations: max(conf, 1), Forwardable: accepted && s.Executed}
	case chains.StatusNone, chains.StatusPending, chains.StatusDropped:
		// Not credited yet: evaluated below. Solana never records pending;
		// a pending state (from elsewhere) is kept until acceptance.
	default:
		// Reverted is final; a status this package does not know is left
		// alone.
		return chains.Step{Status: prev.Status, Confirmations: conf}
	}

	switch {
	case !s.Present:
		return chains.Step{Status: chains.StatusDropped, Confirmations: conf}
	case !accepted:
		return chains.Step{Status: prev.Status, Confirmations: conf}
	case !s.Executed:
		return chains.Step{Status: chains.StatusReverted, Confirmations: conf}
	default:
		return chains.Step{Status: chains.StatusConfirmed, Confirmations: max(conf, 1), Notify: true, Credit: true, Forwardable: true}
	}
}
