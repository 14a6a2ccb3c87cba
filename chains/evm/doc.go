// Package evm is the EVM family (eth, erc20, bep20, polygon): Family is its
// chains.Family (EIP-55 addresses, keys, EIP-681 URIs), and Rules its
// payment lifecycle: when an incoming native or token transfer is pending,
// confirmed (credited), reverted and forwardable. It is pure: no I/O, no
// clock, no state; Family and Rules are zero-size.
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
//     confirmed, so a payment is credited at most once, and never after a
//     failed execution was recorded;
//   - sets Notify only for pending and confirmed: a new status, or a higher
//     count while pending; never for mempool sightings, drops or reverts.
//
// # Failure modes
//
// Evaluate cannot fail. A required depth below 1 counts as 1, a negative
// depth as 0, and an unknown recorded status is returned unchanged with no
// callback, credit or forwarding. The ticker's family is not checked;
// a chains.Registry binds each ticker to its family.
//
// Executed is read only for a transaction in a block: a backend must report
// a block-included transfer with Executed false only when its receipt shows
// failure (or, for a token, no matching Transfer log), never because the
// receipt is not available yet, since reverted is final.
//
// A reorganisation after credit is not reversed here: the status stays
// confirmed (or completed) and the caller records the event. Forwarding is
// withheld while the transaction is out of the chain or its current receipt
// shows failure, and resumes if it is included again successfully.
package evm
