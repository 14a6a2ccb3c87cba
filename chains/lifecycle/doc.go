// Package lifecycle applies a ticker's payment lifecycle rules. It is the
// one place the server's payment code asks "what does this observation mean
// for this payment": Evaluate applies the rules of the ticker's family
// (chains.Ticker.Rules), and DistributionDepth says how deep a transfer
// must be before its funds are distributed.
//
// The rules themselves live in chains/utxo, chains/evm, chains/tron and
// chains/solana, whose Rules doc comments state each family's semantics.
//
// # Guarantees
//
// For every family, folding Evaluate over any sequence of observations, in
// any order and with any mix of drops, failed receipts and commitment
// changes, feeding each Step back as the next chains.PaymentState:
//
//   - never moves a status backwards (none < pending < confirmed <
//     completed); dropped and reverted are entered only from none, pending
//     or (for a re-evaluated transfer) dropped; reverted is final; a dropped
//     transfer is evaluated afresh once the chain shows it again;
//   - never lowers the recorded confirmation count;
//   - sets Credit exactly at the step whose status first becomes confirmed,
//     so a payment is credited at most once;
//   - never sets Notify for none, dropped, reverted or completed, nor for an
//     unchanged confirmed status;
//   - sets Forwardable only for a credited (confirmed or completed) payment.
//
// Everything is pure: no I/O, no clock, no state.
//
// # Failure modes
//
// Evaluate fails only for a ticker without a family; the error wraps
// chains.ErrUnsupportedNetwork. Tickers from a chains.Registry never cause
// it.
package lifecycle
