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
//     runs the call again. payhook's handlers write in transactions, so a
//     failed call left nothing behind to duplicate.
//   - A key older than TTL is expired: the next call with it runs afresh,
//     and Expire (run by Collector every few minutes) deletes it.
//
// # Failure modes
//
//   - An instance that crashes while a call runs leaves its row in
//     progress. After Lease (a minute by default) the row is taken as
//     abandoned and the next retry runs the call again. The interceptor
//     ends a claimed call's context at half the lease, so a call still
//     running is never taken over.
//   - The one case this cannot tell apart: a call whose transaction
//     committed but whose response was not stored (the instance crashed
//     in the milliseconds between the two, or the database refused the
//     second write). Its retry after the lease runs the call again. The
//     response is written right after the handler returns, in its own
//     statement; writing it in the handler's own transaction would need
//     every handler to know of idempotency (docs/decisions.md).
package idempotency
