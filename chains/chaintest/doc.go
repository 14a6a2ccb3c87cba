// Package chaintest is the conformance suite every chains.Backend passes
// (design.md, convention 10): the devnet simulator today, node-RPC backends
// (on regtest or a local validator) as they arrive. Import it only from
// _test.go files.
//
// Families is the suite of chains.Family, run by chains/family over the
// embedded registry on every network: binding, derivation and validation
// round trips (and the keys that control the derived addresses),
// DestinationKey over the known spellings of a destination, MinOutput,
// what confirmations mean, the distribution gate, the fee model and
// payment URIs. Its doc comment lists each check.
//
// Run drives a Driver (a Backend that can also pay, mine and reorganise)
// through the scenarios of the spec's "States and transitions" for every
// ticker of the default registry, folds what the backend shows through
// chains/lifecycle exactly as a watcher does (Tracker), and asserts the
// exact callbacks a merchant would receive: for example, with three required
// confirmations and one block at a time, pending(1), pending(2),
// confirmed(3), then nothing more.
//
// Tracker is exported for other tests that need the same fold: it polls
// Head, asks Transfers for the blocks since its last poll (rescanning a
// window below, so transfers in blocks that replaced reorganised ones are
// found), asks State for every tracked payment, evaluates it with
// lifecycle.Evaluate against the recorded state, and keeps the callbacks,
// credits and history. Payment.CheckInvariants checks the rules' guarantees
// over a payment's history.
//
// # Guarantees and limits
//
// Scenarios assume the Driver alone moves the chain (no blocks appear
// between its calls) and that every scenario starts on a fresh chain at
// height 0. Required confirmations are clamped to each ticker's minimum, so
// polygon/pol, for instance, runs with 16 rather than 3. A backend may
// leave failed executions out of Transfers (a token transfer that failed
// emits no log); if it reports them, they must come out reverted. The
// block-hashes scenario checks Blocks, Head.Hash and Transfer.BlockHash, and
// that a reorganisation replaces exactly the hashes of the blocks it
// dropped; a Tracker itself still finds replacement blocks only within its
// Rescan window.
package chaintest
