// Package payout sends money out of a project's payout balance, in the
// shape of this API family's payout API (BlockBee's): payout requests (an
// address and an amount each), payouts that carry requests of one coin, and
// the project's payout wallet.
//
// # The balance
//
// A project's payout balance in a coin is what the journal (server/ledger)
// holds for it: the held payments of its addresses without forwarding,
// below the minimum or below dust, and every payment to its payout wallet
// (a payhook address with no forwarding destination, so what it receives is
// held). Funds held for the operator's attention (operator_hold) or of
// another asset (wrong_asset) are not spendable. Nothing else is a balance.
//
// # A payout
//
//   - created: CreatePayout takes pending requests of one coin (they
//     become processing).
//   - processing: Process plans one transaction (server/outbound, purpose
//     payout) in one database transaction that also takes its inputs out of
//     the balance (ledger: held -v, outgoing +v per spent payment): the
//     largest held outputs first, until they cover the outputs, the
//     network's fee for the transaction's size and the operator's payout
//     fee; change goes back to the payout wallet (a change below dust goes
//     to the network). Not enough balance is refused, naming the balance
//     and the total needed, and nothing is recorded: a payout is never sent
//     in part. Payouts of one project and coin are queued one at a time (a
//     lock), so two never spend the same payment.
//   - done: the network accepted the transaction (the engine's Sent, in the
//     database transaction that marks it sent): the journal moves what it
//     spent to payout, fee, network_fee and, for the change, out until the
//     chain credits it to the wallet again.
//   - error: the transaction can never be sent as planned (the engine's
//     Failed): its inputs are held again and its requests rejected.
//
// The outbound engine signs and records the bytes before the first send,
// so a crash at any instant sends the same transaction after the restart
// and never a second one.
//
// UTXO coins only, for now: a payout is one transaction spending the held
// outputs of several payhook addresses (chains.Forward.Keys). Account
// chains (EVM, TRON, Solana) need one transaction per output from one
// account and a sweep of held funds first; Process refuses them with a
// clear error until then.
package payout
