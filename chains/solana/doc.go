// Package solana is the Solana family (sol and SPL tokens): Family is its
// chains.Family (base58 public keys, SLIP-0010 keys, Solana Pay URIs, a
// fixed confirmation count), and Rules its payment lifecycle: when an
// incoming transfer is accepted (confirmed, credited and forwardable). It
// is pure: no I/O, no clock, no state; Family and Rules are zero-size.
//
// Solana has no pending stage. A transfer is accepted at a commitment level,
// not at a depth: native SOL at finalized, SPL tokens at confirmed. The
// confirmation count reported is fixed at 1, and a merchant's custom depth is
// not enforced.
//
// # Guarantees
//
// Folding Rules.Evaluate over any sequence of observations, in any order,
// feeding each Step back as the next chains.PaymentState:
//
//   - never moves a status backwards (none < confirmed < completed); dropped
//     and reverted are entered only before credit, and reverted is final;
//   - never lowers the recorded confirmation count, and records 1 once
//     accepted;
//   - sets Credit on exactly the one step at which the status first becomes
//     confirmed, so a payment is credited at most once;
//   - never produces pending, and sets Notify only on acceptance.
//
// # Failure modes
//
// Evaluate cannot fail. An unknown recorded status is returned unchanged with
// no callback, credit or forwarding. The ticker's family is not checked;
// a chains.Registry binds each ticker to its family.
package solana
