// Package distribute computes how a received payment is forwarded: the
// service fee, the network-fee deduction, the amount forwarded, and one
// output per destination wallet. It is pure arithmetic on decimal.Decimal:
// no I/O, no float64, no package state.
//
// # Guarantees
//
// For every Plan that Compute returns without error:
//
//   - Value = Fee + NetworkFee + Forwarded, exactly.
//   - Fee, NetworkFee, Forwarded and every output amount have at most the
//     ticker's Decimals places: each is a whole number of base units
//     (satoshi, wei, sun, lamport, token base unit) and can be put on chain.
//   - Fee = Value x FeeRate rounded down to a base unit: the merchant is
//     never charged more than the advertised rate.
//   - NetworkFee is the caller's estimate rounded up to a base unit, so the
//     deduction always covers the estimate.
//   - Forwarded > 0, and the output amounts sum to exactly Forwarded.
//   - Every output amount is > 0 (a chain cannot send 0), outputs keep the
//     order of the shares, and there is at least one.
//
// # Splitting
//
// Each destination first gets Forwarded x share rounded down to a base unit.
// What rounding leaves over (fewer base units than there are destinations)
// goes to the destination with the largest share; among equal largest
// shares, to the one listed first. Destinations whose amount is then zero are
// left out of Outputs. See docs/decisions.md, "Forwarding and conversion".
//
// # Failure modes
//
// Compute returns an error wrapping exactly one sentinel of errors.go:
// ErrInvalidTicker (a hand-made Ticker outside the registry's limits),
// ErrInvalidAmount (negative, or finer than the coin's precision),
// ErrInvalidShares (empty, non-positive, duplicated, or not summing to 1),
// ErrBelowMinimum (value below the ticker's MinTransaction) and
// ErrNothingToForward (fees take the whole value). The last two are expected
// outcomes of small payments, not faults; the first three are bugs or bad
// data upstream. Messages name the values involved and may be shown to
// merchants.
//
// # Splits the network cannot carry
//
// CheckOutputs is for the moment a split is made (a payment address's
// destinations, a project's wallet): it plans the ticker's minimum payment
// and refuses (ErrBelowNetworkMinimum, *BelowNetworkMinimumError) a split
// that gives a destination less than its network carries (the family's
// MinOutput: UTXO dust, Solana's rent-exempt minimum), since every payment
// of that split would then plan an output that can never be sent. It
// plans with the registry's fee estimate; a forward whose real fee is
// higher can still leave an output short, which the forwarding code must
// hold rather than send.
package distribute
