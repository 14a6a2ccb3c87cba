// Package audit is the project's audit log: one row per change made
// through the dashboard or the management API, saying who (a dashboard
// user or an API key), what (an action and its target), when and from
// where (the client's address and User-Agent).
//
// # Guarantees
//
//   - Written with the change where the change is a transaction of its
//     caller: Record takes the transaction's client, so the entry and the
//     change commit together or not at all (the dashboard's team actions).
//     Where the change commits inside a service of its own (a settings
//     form, an RPC), the entry is written right after it succeeded: a
//     crash between the two loses the entry, never invents one.
//   - Append only: nothing in payhook updates or deletes an entry.
//   - A refused or failed change is not recorded.
//
// # Failure modes
//
//   - An entry that cannot be written after its change succeeded is
//     logged by the caller (the change stands; the caller does not fail a
//     change that happened).
package audit
