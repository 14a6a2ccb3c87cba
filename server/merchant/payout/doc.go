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
//   - processing: Process (of a UTXO coin without a batch interval) plans
//     one transaction (server/outbound, purpose payout) in one database
//     transaction that also takes its inputs out of the balance (ledger:
//     held -v, outgoing +v per spent payment): the largest held outputs
//     first, until they cover the outputs, the network's fee for the
//     transaction's size and the operator's payout fee; change goes back
//     to the payout wallet (a change below dust goes to the network).
//     Otherwise (account chains, batches) the payout is queued with its
//     fees as estimated, once the balance covers it beside the payouts
//     queued before it, and planned when due (below). Not enough balance
//     is refused, naming the balance and the total needed, and nothing is
//     recorded: a payout is never sent in part. Payouts of one project and
//     coin are queued and planned one at a time (a lock), so two never
//     spend the same payment.
//   - done: the network accepted the transaction (the engine's Sent, in the
//     database transaction that marks it sent): the journal moves what it
//     spent to payout, fee, network_fee and, for the change, out until the
//     chain credits it to the wallet again.
//   - error: the transaction can never be sent as planned (the engine's
//     Failed), or failed in its block (Bounced: account chains): its
//     inputs are held again (less the network fee a bounce spent) and its
//     requests rejected; or a queued payout the balance no longer covers.
//
// The outbound engine signs and records the bytes before the first send,
// so a crash at any instant sends the same transaction after the restart
// and never a second one.
//
// # Account chains
//
// On EVM, TRON and Solana a transaction moves one account's balance, so a
// payout is sent from the payout wallet alone: one outbound whose backend
// signs a transaction per output with consecutive nonces. A queued payout
// waits (processing, no transaction yet) until the wallet holds what it
// needs; when it does not, the project's held funds on other addresses are
// swept to the wallet first (outbound purpose sweep, each sweep less its
// network fee; an EVM or TRON token's gas comes from the operator's gas
// address, as forwarding does), and the payout goes once the wallet's
// payments of them are credited. A sweep refused for good (a signer's
// policy, the network) leaves its payments held where they are and never
// swept again by themselves; the queued payouts the rest of the funds no
// longer cover are then error with its reason, the others are swept for
// from other addresses. An account's next transaction is planned
// only when its last one is in a block (its nonce is then the next one):
// payouts from one wallet go one outbound at a time, each carrying every
// payout the wallet covers. A payout that names a held payment to spend
// first (a refund, Pay) is sent from that payment's own address instead,
// when it holds enough and has no transaction open.
//
// # Batches
//
// With Config.Interval for a ticker, queued payouts wait until the oldest
// has waited the interval (and, with MinBatch, until their total reaches
// it); then all of them go together: one transaction on UTXO chains. Tick,
// run after every poll of the ticker's chain, plans what is due.
package payout
