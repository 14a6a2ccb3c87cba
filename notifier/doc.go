// Package notifier delivers messages to merchants' servers, durably. It
// knows messages, not payments: a Message names its owner, labels saying
// what it is about (service, event, ref, topic, and a sequence that orders
// delivery), the request built once, and how it is signed. Producers (the
// low-level callback reactor of server/address, later the merchant
// services) decide what a message says; this package stores, signs, sends,
// retries and logs it.
//
// Three parts share one database and one clock:
//   - Queue stores messages in their producers' transactions (Enqueue) and
//     decides the headers of an attempt (AttemptHeaders).
//   - Dispatcher claims due messages, or takes them as they are stored,
//     makes each attempt through notifier/egress, records every outcome and
//     schedules the next attempt.
//   - Events is the delivery event log that watchers read and subscribe to.
//
// Each long-running part has one Start(ctx)/Stop() shape: Start returns once
// running, Stop is idempotent and waits.
//
// Guarantees:
//   - Stored before sent. Enqueue writes the message inside the caller's
//     transaction, so the state change that causes a message and the
//     message commit together or not at all. The row holds the frozen
//     request: method, URL, body and content type.
//   - Identical retries. Every attempt sends exactly the stored bytes with
//     the same uuid (also its Idempotency-Key header); nothing is re-encoded.
//     A signer that signs once (RSA, notifier/signer) signs at enqueue and
//     its signature is stored and resent; a signer that signs every attempt
//     (the merchant webhook HMAC) signs each attempt anew with that
//     attempt's time and the secrets valid then, over the same stored
//     bytes; a signer that does both (the custom payment flow) sends the
//     stored signature and the attempt's headers.
//   - Nothing silently dropped. Due rows are claimed with a lease (FOR UPDATE
//     SKIP LOCKED on PostgreSQL), or inserted already leased when the running
//     dispatcher has a free slot for them (claimed as stored, sent on
//     commit). An attempt in flight when a process died is found when its
//     lease expires, recorded as interrupted and retried.
//   - The spec's schedule: first attempt as soon as a worker is free, then
//     retries after the policy's delays, counted from the end of the previous
//     attempt; no attempt starts after the delivery window, after which the
//     message is failed (its history stays). An attempt in progress at the
//     deadline may finish, and its acknowledgement counts.
//   - One set of claim rules for both ways of claiming: a worker and a slot
//     of the destination must be free (so a dead endpoint cannot hold every
//     worker), and messages of one sequence make their first attempts in
//     the order stored, one at a time.
//   - Every attempt is a row, and every stored message, attempt outcome and
//     expiry is an event with an ever-growing cursor, streamed to watchers
//     from the database, so a watcher that reconnects misses nothing.
//
// Manual resend (Queue.Resend, asked by the notification's owner; another
// owner's uuid is not found, as an unknown one is): the same uuid and stored
// bytes, signed as every attempt is (a per-attempt signer signs it anew,
// with its time and current secrets). The request is stored (the row's
// resend flag, and a next attempt time of now), so it survives a restart,
// and the claim takes such a row whatever its status and deadline.
// The deadline never moves:
//   - Within the window and not acknowledged, the attempt is a normal one,
//     made now; if it fails, the schedule continues from it (the policy's
//     next delay) until the deadline.
//   - Acknowledged, or past the deadline, it is exactly one attempt: an
//     acknowledgement makes the notification acknowledged; otherwise it
//     stays as it was (failed, or acknowledged), with nothing scheduled (a
//     notification still pending or retrying past its deadline fails).
//   - Each resend is answered by an attempt that starts after it. Resends
//     asked before that attempt starts share it (the claim clears the flag:
//     a double click sends once); one asked while an attempt is in flight
//     leaves its lease alone and makes the row due as soon as that attempt
//     is recorded (or, if its instance died, when the lease lapses).
//   - A resend's one attempt interrupted by a stop, or by the death of its
//     instance (only a resend leases a finished notification, or starts
//     after a deadline), is recorded as interrupted and made again.
//   - Each attempt is an attempt row and an attempt event like any other.
//     The request itself stores no event (the event kinds have none for
//     it); it wakes the dispatchers, of other instances too.
//
// List and Get read an owner's notifications, newest first, with a cursor.
//
// The egress rules (the one set of URL rules, the SSRF guard, no redirects,
// timeouts, acknowledgement) live in notifier/egress, the payload bytes in
// notifier/payload, the signers in notifier/signer and the retry policy in
// notifier/schedule.
package notifier
