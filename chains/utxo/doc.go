// Package utxo is the UTXO family (btc, ltc, bch, doge): Family is its
// chains.Family (address formats on every network, CashAddr, keys, BIP21
// URIs), and Rules its payment lifecycle: when an incoming output is
// pending, confirmed (credited) and forwardable. EncodeAddress,
// DecodeAddress and Params give the node backend (utxo/bitcoind) the
// family's address forms for txscript. It is pure: no I/O, no clock, no
// state; Family and Rules are zero-size.
//
// # Guarantees
//
// Folding Rules.Evaluate over any sequence of observations, in any order,
// feeding each Step back as the next chains.PaymentState:
//
//   - never moves a status backwards (none < pending < confirmed <
//     completed); dropped is entered only before credit;
//   - never lowers the recorded confirmation count;
//   - sets Credit on exactly the one step at which the status first becomes
//     confirmed, so a payment is credited at most once;
//   - sets Notify only for pending and confirmed: a new status, or a higher
//     count while pending; never for mempool sightings or drops.
//
// # Failure modes
//
// Evaluate cannot fail. Inputs it cannot interpret are absorbed rather than
// rejected: a required depth below 1 counts as 1, a negative depth as 0, and
// an unknown recorded status is returned unchanged with no callback, credit or
// forwarding. The ticker's family is not checked; chains/lifecycle
// dispatches on it.
//
// A reorganisation after credit is not reversed here: the status stays
// confirmed (or completed) and the caller records the event. Forwarding is
// withheld while the transaction is out of the chain and resumes if it is
// included again.
package utxo
