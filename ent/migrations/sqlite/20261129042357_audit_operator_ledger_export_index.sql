-- +goose Up
-- create index "ledgerentry_project_id_created_at_id" to table: "ledger_entries"
CREATE INDEX `ledgerentry_project_id_created_at_id` ON `ledger_entries` (`project_id`, `created_at`, `id`);
-- create index "ledgerentry_project_id_id" to table: "ledger_entries"
CREATE INDEX `ledgerentry_project_id_id` ON `ledger_entries` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "ledgerentry_project_id_id" to table: "ledger_entries"
DROP INDEX `ledgerentry_project_id_id`;
-- reverse: create index "ledgerentry_project_id_created_at_id" to table: "ledger_entries"
DROP INDEX `ledgerentry_project_id_created_at_id`;
