package tron

import "github.com/payhook/payhook/chains"

// Distribution depths: the fewest confirmations before a TRON payment's funds
// are distributed, whatever depth the merchant configured.
const (
	// TRXDistributionDepth applies to native TRX.
	TRXDistributionDepth = 23
	// TRC20DistributionDepth applies to TRC20 tokens.
	TRC20DistributionDepth = 20
)

// DistributionDepth returns the depth a TRON transfer of t must reach before
// its funds are distributed: required, or TRXDistributionDepth for native TRX
// (TRC20DistributionDepth for a token), whichever is higher.
func DistributionDepth(t chains.Ticker, required int64) int64 {
	floor := int64(TRXDistributionDepth)
	if t.Token {
		floor = TRC20DistributionDepth
	}
	return max(required, floor)
}

// Rules is TRON's lifecycle.
//
// A transfer is reported only once its transaction is in a block
// (Confirmations 0 yields no status and no callback). In a block, a failed
// execution (Executed false: a failed receipt or, for a TRC20 token, no
// Transfer log of the token to the address) is reverted: recorded, never
// credited, no callback, final. A successful execution below required depth
// is pending, with a callback for the first sighting and for each higher
// count; at or above required it is confirmed and credited. Example: with
// required 5, credit happens at 5.
//
// Forwardable is separate from credit: it is true only for a credited
// payment whose current observation is Present, at or past
// DistributionDepth(t, required), Solidified and Executed. With required 5
// and TRX, the funds are forwardable from 23 confirmations with a solidified
// successful receipt; with required 30, from 30.
//
// A transaction that is no longer Present before credit is dropped (recorded,
// no callback) and is evaluated afresh once it is in a block again; the
// recorded count is kept. After credit the status is kept whatever the chain
// shows; only Forwardable follows the current observation.
//
// Credit and forwarding depend on the depth observed now, not on the highest
// depth recorded.
type Rules struct{}

var _ chains.Rules = Rules{}

// Evaluate applies one observation of a transfer to the recorded state. See
// Rules for the semantics.
func (Rules) Evaluate(t chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState) chains.Step {
	return chains.DepthRules{
		CheckExecution: true,
		Distributable: func(depth int64, s chains.TxState) bool {
			return s.Solidified && depth >= DistributionDepth(t, required)
		},
	}.Evaluate(required, prev, s)
}
