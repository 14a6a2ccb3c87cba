-- +goose NO TRANSACTION
-- +goose Up
-- The ledger is never pruned: its indexes are built without blocking the
-- journal's writes (CONCURRENTLY, outside a transaction). Each build is
-- preceded by dropping what an interrupted run may have left (an index of
-- that name, INVALID after a failed concurrent build), so a rerun of this
-- migration after a failure completes instead of finding it exists.
-- create index "ledgerentry_project_id_created_at_id" to table: "ledger_entries"
DROP INDEX CONCURRENTLY IF EXISTS "ledgerentry_project_id_created_at_id";
CREATE INDEX CONCURRENTLY "ledgerentry_project_id_created_at_id" ON "ledger_entries" ("project_id", "created_at", "id");
-- create index "ledgerentry_project_id_id" to table: "ledger_entries"
DROP INDEX CONCURRENTLY IF EXISTS "ledgerentry_project_id_id";
CREATE INDEX CONCURRENTLY "ledgerentry_project_id_id" ON "ledger_entries" ("project_id", "id");

-- +goose Down
-- reverse: create index "ledgerentry_project_id_id" to table: "ledger_entries"
DROP INDEX CONCURRENTLY "ledgerentry_project_id_id";
-- reverse: create index "ledgerentry_project_id_created_at_id" to table: "ledger_entries"
DROP INDEX CONCURRENTLY "ledgerentry_project_id_created_at_id";
