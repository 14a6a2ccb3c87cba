// Package payment turns what the chains show into payments, forwards and
// callbacks.
//
// A Watcher per ticker polls its chain backend from a durable cursor and
// hands each observation to Service.Apply, which decides with the family's
// rules (chains/lifecycle) and, in one database transaction, updates the
// payment and stores the callback it causes (notifier.Enqueue). Applying the
// same observation twice changes nothing: the payment row is locked, the
// rules never regress a status or credit twice, and a callback is stored
// only for a new status or (while pending) a higher confirmation count. So
// rescanning blocks, restarts and several instances watching the same chain
// are all safe.
//
// Forwarding is recorded as an intent (a Forward row with an idempotency key)
// before the transaction is broadcast and completed after; an intent left by
// a crash is reconciled by asking the backend whether it was broadcast, so a
// payment is forwarded at most once. The completed callback is stored in the
// same transaction that marks the forward done.
package payment
