package evm

import "github.com/payhook/payhook/chains"

// Rules is the EVM family's lifecycle: the UTXO rules plus execution checks.
//
// A transfer is reported only once its transaction is in a block: a mempool
// sighting (Confirmations 0) yields no status and no callback. In a block, a
// failed execution (Executed false: a failed receipt or, for a token, no
// Transfer log of the token to the address) is reverted: recorded, never
// credited, no callback, and final, even if a pending callback was sent
// before. A successful execution below required depth is pending (a callback
// for the first sighting and for each higher count); at or above required it
// is confirmed, credited and forwardable. With required 1 the first reported
// event is confirmed. Depths may jump.
//
// A transaction that is no longer Present before credit is dropped (recorded,
// no callback). A dropped transaction is evaluated afresh once it is in a
// block again, and may then turn pending, confirmed or reverted; the recorded
// count is kept, so it never decreases. After credit the status is kept
// whatever the chain shows (a later failed receipt does not revert it), and
// the transfer is Forwardable whenever the transaction is in a block with a
// successful receipt; the caller never forwards twice.
//
// Credit depends on the depth observed now, not on the highest depth
// recorded.
type Rules struct{}

var _ chains.Rules = Rules{}

// Evaluate applies one observation of a transfer to the recorded state. See
// Rules for the semantics.
func (Rules) Evaluate(_ chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState) chains.Step {
	return chains.DepthRules{CheckExecution: true}.Evaluate(required, prev, s)
}
