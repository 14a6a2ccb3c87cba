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
//     progress: a retry is ErrInProgress during Lease (a minute by
//     default), then ErrInterrupted until the key expires. The store
//     cannot tell a call that crashed before its transaction committed
//     from one that crashed after (its response not yet stored), so it
//     never runs a key's call twice: the client looks up the outcome and
//     retries with a new key if nothing was done. The interceptor ends a
//     claimed call's context at half the lease, so a call still running is
//     never reported interrupted. (Storing the response in the handler's
//     own transaction would close the window instead, at the cost of every
//     handler knowing of idempotency: docs/decisions.md.)
package idempotency
