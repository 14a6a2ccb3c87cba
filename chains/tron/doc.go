// Package tron is the TRON family (trx and trc20 tokens): Family is its
// chains.Family (base58 T... addresses, keys, tron: URIs, the distribution
// gate), and Rules its payment lifecycle: when an incoming transfer is
// pending, confirmed (credited), reverted, and when its funds may be
// distributed. It is pure: no I/O, no clock, no state; Family and Rules are
// zero-size.
//
// TRON separates credit from distribution. Credit happens at the merchant's
// configured depth once execution checks pass; distribution waits for the
// distribution depth (DistributionDepth: the configured depth, but at least
// 23 confirmations for TRX and 20 for TRC20 tokens) and a successful
// solidified receipt. Early credit does not promise finality.
//
// # Guarantees
//
// Folding Rules.Evaluate over any sequence of observations, in any order,
// feeding each Step back as the next chains.PaymentState:
//
//   - never moves a status backwards (none < pending < confirmed <
//     completed); dropped and reverted are entered only before credit, and
//     reverted is final;
//   - never lowers the recorded confirmation count;
//   - sets Credit on exactly the one step at which the status first becomes
//     confirmed, so a payment is credited at most once;
//   - sets Forwardable only for a credited payment whose current observation
//     is at or past DistributionDepth, Solidified and Executed;
//   - sets Notify only for pending and confirmed: a new status, or a higher
//     count while pending; never for unconfirmed sightings, drops or
//     reverts.
//
// # Failure modes
//
// Evaluate cannot fail. A required depth below 1 counts as 1, a negative
// depth as 0, and an unknown recorded status is returned unchanged with no
// callback, credit or forwarding. The ticker's family is not checked; a
// chains.Registry binds each ticker to its family. Executed false on a
// transaction in a block is read as a failed receipt, which is final: a
// backend must not report a block-included transfer before its receipt is
// available.
package tron
