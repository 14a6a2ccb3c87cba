// Package store opens payhook's database and migrates it. It is the one
// package that knows which SQL drivers exist: PostgreSQL through lib/pq and
// SQLite through modernc.org/sqlite (pure Go). Swapping a driver touches
// store.go only.
//
// # DSNs
//
// [ParseDSN] accepts "postgres://..." and "postgresql://..." URLs (passed to
// the driver unchanged) and "sqlite:PATH", where PATH is a relative or
// absolute file path, or ":memory:" for a private in-memory database.
// Anything else is rejected with an error that wraps [ErrUnsupportedDSN] and
// names the accepted forms.
//
// # Guarantees
//
//   - [Open] returns a pinged connection pool and an entdb client on top of it,
//     or an error; it never returns a half-open DB.
//   - SQLite connections run with foreign_keys=on, journal_mode=WAL and
//     busy_timeout=10000 ms, and their transactions begin IMMEDIATE, so two
//     writers queue for the lock (up to the busy timeout) instead of failing
//     with SQLITE_BUSY when a reader upgrades. Times are written in UTC in
//     SQLite's own text format, so they sort correctly as text. An in-memory
//     database is held by a single connection, so it lives as long as the DB.
//     (Migrate alone turns foreign keys off while it runs; see below.)
//   - Money columns are numeric(38,18) on PostgreSQL and TEXT on SQLite:
//     decimal.Decimal values round-trip exactly on both. PostgreSQL rounds
//     values with more than 18 fractional digits and rejects more than 20
//     integer digits; SQLite keeps any value as given.
//     Arithmetic and ordering on money in SQL work on PostgreSQL only.
//   - [Migrate] applies the migrations embedded from ent/migrations with a
//     goose Provider (no global goose state). It is idempotent: a migrated
//     database is left untouched. On PostgreSQL it holds a session advisory
//     lock, so several processes may call it at once; each migration runs in
//     its own transaction, so a failure leaves the database at the last
//     version that applied completely.
//
// # Failure modes
//
// Open fails when the DSN is unsupported, the driver cannot connect, or the
// ping fails (wrong credentials, missing database, unwritable SQLite path).
// Migrate fails when a migration does not apply, when an embedded migration
// older than the newest applied one was never applied (goose refuses to apply
// out of order), or, on SQLite, when the migrations left a foreign-key
// violation; it returns the versions it applied before failing alongside the
// error.
//
// On SQLite, "SELECT ... FOR UPDATE" does not exist: code that locks rows with
// entdb's ForUpdate must skip it when Dialect is SQLite. Every SQLite
// transaction already holds the database's write lock from BEGIN, so claims
// made inside one are serialised anyway.
package store
