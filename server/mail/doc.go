// Package mail is payhook's email: an outbox of emails stored in the
// transactions that cause them (the emails table), and a Sender that sends
// them over SMTP (github.com/wneessen/go-mail) with retries.
//
// What is sent, to whom (messages.go):
//   - a payout waits for approval: the project's owners (not disabled);
//   - webhooks to an endpoint are paused: the project's owners and developers;
//   - prices are stale (an episode of /healthz's degraded): the operator
//     (--operator-email), once per episode;
//   - a checkout given the payer's email is paid: the payer's receipt.
//   - an owner invites someone to the dashboard: the invitee, with a
//     one-time link.
//
// # Guarantees
//
//   - Stored before sent. Outbox.Enqueue writes in the caller's
//     transaction: the cause and its emails commit together or not at
//     all, and nothing is sent from memory.
//   - One email per cause and recipient. The dedupe key (kind, cause,
//     recipient) is unique and the insert skips a key stored before, so a
//     cause seen twice (two instances, a replayed transaction) is one
//     email.
//   - Sent at least once, in one place at a time. Senders claim due emails
//     under a lease (FOR UPDATE SKIP LOCKED on PostgreSQL, SQLite's write
//     lock), so instances on one database share the work and never send an
//     email at the same time.
//   - The webhooks' schedule (notifier/schedule's Default): after a failed
//     attempt, 1m, 5m, 15m, 1h, then every 3h; no attempt starts 48 hours
//     after the email was stored, and it is then failed (status failed,
//     last_error saying why). A recipient or content the server refuses
//     with a 5xx reply fails at once; everything else (the server
//     unreachable, 4xx, authentication) is retried. Every time is the
//     configured clock's.
//   - Email off: without a URL, New returns a nil Outbox, whose methods
//     store nothing, and no Sender. Nothing accumulates for a server that
//     cannot send.
//
// # Failure modes
//
//   - An instance that dies after the SMTP server took an email and before
//     it recorded it sent: the lease lapses and another sender (or the
//     restarted one) sends it again. That is the one way an email goes out
//     twice; both copies carry the same Message-ID, which mail systems
//     commonly show once. (SMTP has no way to ask whether a message was
//     taken.)
//   - A stop while a batch is in flight waits for it: it is sent and
//     recorded, each SMTP command bounded by Timeout.
//   - The SMTP password (in the URL or PAYHOOK_SMTP_PASSWORD) never
//     appears in an error or a log line.
package mail
