-- +goose Up
-- drop index "ledgerentry_account_address_id_id" from table: "ledger_entries"
DROP INDEX "ledgerentry_account_address_id_id";
-- create index "ledgerentry_held_address_id_id" to table: "ledger_entries"
CREATE INDEX "ledgerentry_held_address_id_id" ON "ledger_entries" ("address_id", "id") WHERE ((account)::text = 'held'::text);

-- +goose Down
-- reverse: create index "ledgerentry_held_address_id_id" to table: "ledger_entries"
DROP INDEX "ledgerentry_held_address_id_id";
-- reverse: drop index "ledgerentry_account_address_id_id" from table: "ledger_entries"
CREATE INDEX "ledgerentry_account_address_id_id" ON "ledger_entries" ("account", "address_id", "id");
