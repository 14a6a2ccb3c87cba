// Package idempotency keeps the mutating API calls made with an
// Idempotency-Key (REST header; gRPC metadata idempotency-key) in the
// idempotency_keys table, for the server's interceptor
// (interceptor.IdempotencyStore): the same key and request answer the
// stored response; the same key with another request is refused.
//
// # Guarantees
//
//   - Keys are scoped per API key: one key's Idempotency-Key never meets
//     another's. A key names one call: its method and its request (hashed).
//   - A key is claimed by one call at a time, on every instance: the claim
//     is a row (unique on API key and key) inserted before the call runs.
//     A second call with the key while the first runs is refused
//     (ErrInProgress) and runs nothing.
//   - A call that succeeded stores its response in its row; every retry
//     within TTL (24 hours from the first call) is answered with it.
//   - A call that failed releases its claim (the row is deleted): a retry
//     runs the call again. payhook's handlers write what a call does in one
//     transaction, rolled back on failure.
//   - A key older than TTL is expired: the next call with it runs afresh,
//     and Expire (run by Collector every few minutes) deletes it.
//
// # Failure modes
//
//   - Every transaction a claimed call commits through ent or
//     store.WithTx marks its row (committed_at) inside itself (store.WithIdempotencyClaim, bound by
//     the interceptor through Bind), and a write outside a transaction
//     marks it just before. An instance that crashes while a call runs
//     leaves its row in progress: a retry is ErrInProgress during Lease (a
//     minute by default); after it, an unmarked row proves the call
//     committed nothing, so the retry takes the key and runs; a marked one
//     is ErrInterrupted until the key expires (the call took effect, its
//     answer was never stored: the client looks it up).
//   - The takeover deletes the row only while it is unmarked, and a mark
//     updates the row only while it exists in progress: an old call still
//     writing after its key was taken over is refused (store.ErrClaimLost),
//     so the call and its retry never both take effect. The interceptor
//     also ends a claimed call's context at half the lease.
package idempotency
