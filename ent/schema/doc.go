// Package schema holds the hand-written ent schemas of payhook and the small
// value types stored in their JSON columns.
//
// The generated client lives in ent/db (imported as entdb) and is produced by
// `go generate ./ent/...`; migrations in ent/migrations are produced from these
// schemas by `go run ./ent/migrations/gen -name NAME`. Change a schema, then run
// both, and commit the schema, the generated code and the new migration files
// together.
//
// Money is stored as [decimal.Decimal]: numeric(38,18) on PostgreSQL and TEXT on
// SQLite, so that no value ever passes through a float. Timestamps default to
// the current time in UTC truncated to microseconds, the precision PostgreSQL
// keeps, so a value reads back as it was written on both dialects.
package schema
