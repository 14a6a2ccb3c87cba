// Package admin is what the operator's commands (cmd/payhook's migrate,
// apikey, funds, payouts, project and user) call: each function opens the
// database named by a DSN as --db takes it, migrates it when it is behind, does
// one thing and closes it. The server's composition root shares its
// opening, registry loading and migration (Open, LoadRegistry, WithDecimals).
//
// Guarantees and failure modes:
//   - Answers are the operator API's: funds, payout requests and projects
//     are the same messages the API returns (server/rpc translates both),
//     so a command's --json output equals the API's JSON.
//   - Only Migrate creates a database: every other function refuses one
//     payhook has not created (ErrNoDatabase: a SQLite file that does not
//     exist, a database without payhook's tables), naming --db and payhook
//     migrate, and creates nothing.
//   - A DSN payhook does not understand is an error naming --db, a registry
//     file that cannot be read or parsed one naming --registry-file; a
//     failed migration says "migrate"; nothing is changed then.
//   - Keys are shown in clear only when created: the database keeps their
//     hashes. A key name several keys share is ErrAmbiguousAPIKey, naming
//     each by id.
//   - The database is always closed; an error closing it is returned when
//     nothing else failed.
package admin
