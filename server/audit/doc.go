// Package audit is the project's audit log: one row per change made
// through the dashboard, the management API or the operator's payhook
// commands, saying who (a dashboard user, an API key, or the operator:
// "cli:" and the OS user who ran the command), what (an action and its
// target), when and from where (the client's address and User-Agent; no
// address and "payhook-cli" for a command).
//
// # Guarantees
//
//   - Written with the change where the change is a transaction of its
//     caller: Record takes the transaction's client, so the entry and the
//     change commit together or not at all (the dashboard's team actions).
//     Where the change commits inside a service of its own (a settings
//     form, an RPC), the entry is written right after it succeeded: a
//     crash between the two loses the entry, never invents one.
//   - Append only: nothing in payhook updates an entry; the retention job
//     (server/retention) deletes entries older than its audit age (400
//     days by default, --audit-retention-days), never younger ones.
//   - No secret is recorded: a password, a key or a secret is never an
//     actor or a target (a key is named by its name or id).
//   - A refused or failed change is not recorded.
//
// # Failure modes
//
//   - An entry that cannot be written after its change succeeded is
//     logged by the caller (the change stands; the caller does not fail a
//     change that happened).
//   - An entry is dated by its writer's clock (the server's, or that of
//     the host that ran the operator's command), so ids and dates may
//     disagree by a clock's error. Retention passes an entry dated ahead
//     and deletes the older ones stored after it; the one dated ahead goes
//     once it is older than the audit age by its own date (server/retention,
//     oldPrefix).
package audit
