-- +goose Up
-- drop index "ledgerentry_account_project_id_ticker" from table: "ledger_entries"
DROP INDEX `ledgerentry_account_project_id_ticker`;
-- drop index "ledgerentry_address_id_account" from table: "ledger_entries"
DROP INDEX `ledgerentry_address_id_account`;
-- drop index "ledgerentry_payment_id" from table: "ledger_entries"
DROP INDEX `ledgerentry_payment_id`;
-- create index "ledgerentry_account_address_id_id" to table: "ledger_entries"
CREATE INDEX `ledgerentry_account_address_id_id` ON `ledger_entries` (`account`, `address_id`, `id`);

-- +goose Down
-- reverse: create index "ledgerentry_account_address_id_id" to table: "ledger_entries"
DROP INDEX `ledgerentry_account_address_id_id`;
-- reverse: drop index "ledgerentry_payment_id" from table: "ledger_entries"
CREATE INDEX `ledgerentry_payment_id` ON `ledger_entries` (`payment_id`);
-- reverse: drop index "ledgerentry_address_id_account" from table: "ledger_entries"
CREATE INDEX `ledgerentry_address_id_account` ON `ledger_entries` (`address_id`, `account`);
-- reverse: drop index "ledgerentry_account_project_id_ticker" from table: "ledger_entries"
CREATE INDEX `ledgerentry_account_project_id_ticker` ON `ledger_entries` (`account`, `project_id`, `ticker`);
