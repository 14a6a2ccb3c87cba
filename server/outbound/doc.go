// Package outbound is the one engine that sends payhook's outgoing
// transactions: forwards today (server/payment), payouts, refunds and sweeps
// next. A caller plans; the engine does the rest, the same way for every
// caller:
//
//	plan      Plan records the transaction (an outbounds row: key, inputs,
//	          outputs, network fee) inside the caller's database transaction,
//	          after checking every output against the smallest amount the
//	          network carries to its destination (dust, rent-exempt minimum).
//	          An output below it is refused there (BelowMinimumError), never
//	          signed: the caller holds the funds instead.
//	sign      Send signs what has no bytes yet (the ticker's backend) and
//	record    records the bytes and hash in one database transaction, before
//	send      anything is sent; then hands the bytes to the network. Once the
//	          network accepted them, one database transaction marks the
//	          transactions sent and calls the caller's Handler.Sent, which
//	          completes the caller's records (forwards, payments, callbacks,
//	          journal) in that same transaction.
//	follow    Follow asks the node about sent transactions until a block
//	          executes them (landed), sending the same bytes again meanwhile
//	          (a node may drop what it accepted).
//
// # Guarantees
//
//   - One outbounds row is one transaction: its bytes are recorded before the
//     first send and only those bytes are ever sent, so a crash at any
//     instant, or two instances, never send two transactions for one row.
//     Of two instances signing at once, the first to record wins and both
//     send its bytes.
//   - A row left planned or signed by a crash or a failed send is finished
//     by Resume (the watcher calls it when it takes a ticker's lease, and
//     after a failed send).
//   - What the network can never accept (chains.ErrNeverLands: a blockhash
//     that expired unsent, a transaction included and failed without moving
//     funds) is not signed again: the row becomes replaced and a new row
//     with the same content (key#N) takes its place; the Handler moves its
//     allocations to it. What the backend refuses to sign as planned
//     (chains.ErrInvalidForward) fails: Handler.Failed gives the funds back
//     to the caller, which holds them for the operator. A transaction a
//     block executed and failed is logged and marked failed for the
//     operator.
//   - Decisions are made on typed states and errors (errors.Is), never on
//     messages; last_error is kept for people only.
package outbound
