-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_outbounds" table
CREATE TABLE `new_outbounds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `key` text NOT NULL, `ticker` text NOT NULL, `purpose` text NOT NULL, `project_id` integer NOT NULL DEFAULT (0), `from_address` text NOT NULL, `from_index` integer NOT NULL, `inputs` json NOT NULL, `outputs` json NOT NULL, `network_fee` text NOT NULL, `gas_percent` integer NOT NULL DEFAULT (0), `state` text NOT NULL DEFAULT ('planned'), `signed_tx` blob NULL, `txid` text NOT NULL DEFAULT (''), `sends` integer NOT NULL DEFAULT (0), `last_error` text NOT NULL DEFAULT (''), `replaces_id` integer NULL, `sent_at` datetime NULL, `landed_at` datetime NULL);
-- copy rows from old table "outbounds" to new temporary table "new_outbounds"
INSERT INTO `new_outbounds` (`id`, `created_at`, `updated_at`, `key`, `ticker`, `purpose`, `project_id`, `from_address`, `from_index`, `inputs`, `outputs`, `network_fee`, `state`, `signed_tx`, `txid`, `sends`, `last_error`, `replaces_id`, `sent_at`, `landed_at`) SELECT `id`, `created_at`, `updated_at`, `key`, `ticker`, `purpose`, `project_id`, `from_address`, `from_index`, `inputs`, `outputs`, `network_fee`, `state`, `signed_tx`, `txid`, `sends`, `last_error`, `replaces_id`, `sent_at`, `landed_at` FROM `outbounds`;
-- drop "outbounds" table after copying rows
DROP TABLE `outbounds`;
-- rename temporary table "new_outbounds" to "outbounds"
ALTER TABLE `new_outbounds` RENAME TO `outbounds`;
-- create index "outbounds_key_key" to table: "outbounds"
CREATE UNIQUE INDEX `outbounds_key_key` ON `outbounds` (`key`);
-- create index "outbound_ticker_state" to table: "outbounds"
CREATE INDEX `outbound_ticker_state` ON `outbounds` (`ticker`, `state`);
-- create index "outbound_ticker_txid" to table: "outbounds"
CREATE INDEX `outbound_ticker_txid` ON `outbounds` (`ticker`, `txid`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "outbound_ticker_txid" to table: "outbounds"
DROP INDEX `outbound_ticker_txid`;
-- reverse: create index "outbound_ticker_state" to table: "outbounds"
DROP INDEX `outbound_ticker_state`;
-- reverse: create index "outbounds_key_key" to table: "outbounds"
DROP INDEX `outbounds_key_key`;
-- reverse: create "new_outbounds" table
DROP TABLE `new_outbounds`;
