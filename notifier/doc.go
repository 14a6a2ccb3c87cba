// Package notifier delivers payment notifications to merchants' servers,
// durably.
//
// Guarantees:
//   - Stored before sent. Enqueue writes the notification inside the caller's
//     transaction, so the state change that causes a notification and the
//     notification commit together or not at all. The row holds the frozen
//     request: method, URL, body, content type and signature, signed once.
//   - Identical retries. Every attempt sends exactly the stored bytes with the
//     same uuid; nothing is re-encoded or re-signed.
//   - Nothing silently dropped. Due rows are claimed with a lease (FOR UPDATE
//     SKIP LOCKED on PostgreSQL), or inserted already leased when the running
//     dispatcher has a free slot for them (claimed as stored, sent on
//     commit). An attempt in flight when a process died is found when its
//     lease expires, recorded as interrupted and retried.
//   - The spec's schedule: first attempt as soon as a worker is free, then
//     retries after the policy's delays, counted from the end of the previous
//     attempt; no attempt starts after the delivery window, after which the
//     notification is failed (its history stays). An attempt in progress at
//     the deadline may finish, and its acknowledgement counts.
//   - Isolation of slow endpoints: concurrent attempts per destination host are
//     bounded, so a dead endpoint cannot hold every worker.
//   - Every attempt is a row, and every stored notification, attempt outcome
//     and expiry is an event with an ever-growing cursor, streamed to watchers
//     from the database, so a watcher that reconnects misses nothing.
//
// The egress rules (SSRF guard, no redirects, timeouts) live in
// notifier/egress, the payload bytes in notifier/payload and the retry
// policy in notifier/schedule.
package notifier
