package utxo

import "github.com/payhook/payhook/chains"

// Rules is the UTXO family's lifecycle.
//
// A transaction is reported only once it is in a block: a mempool sighting
// (Confirmations 0) yields no status and no callback. In a block, a depth
// below required is pending (a callback for the first sighting and for each
// higher count); a depth at or above required is confirmed, credited and
// forwardable. With required 1 the first reported event is therefore
// confirmed and pending is skipped. Depths may jump: an observation at 10 with
// required 6 goes straight to confirmed.
//
// A transaction that is no longer Present before credit is dropped (recorded,
// no callback). A dropped transaction is evaluated afresh once it is in a
// block again (it stays dropped while it is absent or only in the mempool);
// the recorded count is kept, so it never decreases. After credit the status
// is kept whatever the chain shows, and the transfer is Forwardable whenever
// the transaction is in a block; the caller never forwards twice.
//
// Credit depends on the depth observed now, not on the highest depth
// recorded, so a transaction a reorganisation moved to a newer block waits
// for its new depth to reach required.
type Rules struct{}

var _ chains.Rules = Rules{}

// Evaluate applies one observation of a transfer to the recorded state. See
// Rules for the semantics.
func (Rules) Evaluate(_ chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState) chains.Step {
	return chains.DepthRules{}.Evaluate(required, prev, s)
}
