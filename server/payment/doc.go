// Package payment turns what the chains show into payments, forwards and
// callbacks.
//
// A Watcher per ticker polls its chain backend and hands what it sees to the
// Service, which decides with the family's rules (chains/lifecycle) and, in
// one database transaction per batch of observations, updates the payments
// and publishes what happened (a Change) to the reactors registered with
// the service: the low-level callback of server/address, later the merchant
// services. A reactor stores its notifications in the same transaction, so
// a change and what it owes merchants commit together. The package knows
// nothing of notifications.
//
// # What a poll costs
//
// A poll costs what is new, not the number of open payments. The watcher
// stores the hash of every block it processed (chain_blocks, the newest
// KeepBlocks per ticker) and, per transfer to one of payhook's addresses,
// the height of the block that includes it and the chain height at which it
// is due again (watched_transfers): the next confirmation count of a pending
// payment, the depth and solidified receipt of TRON's distribution, the
// next slot of a Solana transfer below its commitment, the next block for a
// credited payment whose forward has not completed. A poll reads the tip;
// when it is the tip the previous poll processed, it stops there, after one
// read of the newest address id (for the mempool, below). The watchers of
// a service share one address book, loaded by primary-key range as
// addresses are created, so an instance reads each address once however
// many tickers it watches. Otherwise it applies the transfers of the new blocks (State is
// asked only for them and for the due transfers), then the due transfers,
// BatchSize observations per transaction; the last transaction of a block
// range also records the blocks' hashes and the cursor, so the blocks and
// their observations commit together.
//
// # Reorganisations
//
// Each poll compares the stored tip's hash with the chain's. When they
// differ it walks back to the newest block whose hash still matches (the
// common ancestor; block hashes commit to their parents), forgets the blocks
// above it, makes every transfer they included due at once with its height
// unknown, and scans again from the ancestor. A transfer a replacement block
// includes is found with its new height; one that is gone is evaluated with
// State: dropped before credit, noted after credit and never credited twice.
// Reorganisations deeper than KeepBlocks are logged and rescanned from the
// oldest block kept.
//
// # Several instances, crashes
//
// One instance polls a ticker at a time: on PostgreSQL it holds a session
// advisory lock per ticker (the lease), released by Stop or when its
// connection goes; on SQLite, which one process uses, the lease is always
// held. The lease saves work; safety does not depend on it. Applying the
// same observation twice changes nothing: the payment rows are locked, the
// rules never regress a status or credit twice, and a change is published
// only for a new status or (while pending) a higher confirmation count. A
// crash at any instant loses nothing: the cursor moves in the transaction
// that applies a range's last observations, so a restart applies the range
// again.
//
// Forwarding is recorded as an intent (a Forward row with an idempotency key)
// before the transaction is broadcast and completed after; the intents of a
// batch are recorded in one transaction and completed in another. An intent
// left by a crash is reconciled by asking the backend whether it was
// broadcast (when a watcher takes the lease, and after a failed forward), so
// a payment is forwarded at most once. The completed callback is stored in
// the same transaction that marks the forward done.
//
// A merchant address's payments that cannot be forwarded alone (below the
// ticker's minimum, or consumed by the fees) are credited and held for the
// minimum; when a later payment makes the address's waiting sum
// forwardable, one transaction carries them all. Each still has its own
// Forward (its proportional share, the transaction's broadcast key in its
// intent id), recorded in one transaction and completed in another, so a
// group is reconciled as a whole.
//
// # Mempool sightings
//
// A backend that reads its node's mempool (chains.MempoolReader) is read at
// every poll of the instance that holds the lease, after the blocks, for
// the watched addresses; Service.Detected answers what waits for an
// address, for the hosted pages ("payment detected"). A sighting is kept
// in memory only: it is not a payment, is never stored, credited or
// published to a reactor (no callback: the spec reports payments from
// their block). An instance that does not hold the lease reads the
// mempool itself when asked, at most once per watch interval per ticker.
//
// The devnet wakes a started watcher (Wake) rather than polling itself;
// WaitHeight waits until the watcher has processed a height.
package payment
