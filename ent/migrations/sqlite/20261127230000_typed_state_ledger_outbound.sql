-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_payments" table
CREATE TABLE `new_payments` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `ticker` text NOT NULL DEFAULT (''), `txid_in` text NOT NULL, `output_index` integer NOT NULL DEFAULT (0), `value_coin` text NOT NULL, `confirmations` integer NOT NULL DEFAULT (0), `status` text NOT NULL DEFAULT ('pending'), `note` text NOT NULL DEFAULT (''), `hold_reason` text NOT NULL DEFAULT ('none'), `reorged` bool NOT NULL DEFAULT (false), `reorg_count` integer NOT NULL DEFAULT (0), `txid_out` text NULL, `value_forwarded_coin` text NULL, `fee_coin` text NULL, `network_fee` text NULL, `value_fiat` text NULL, `credited_at` datetime NULL, `forwarded_at` datetime NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, CONSTRAINT `payments_api_keys_payments` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `payments_addresses_payments` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "payments" to new temporary table "new_payments"
INSERT INTO `new_payments` (`id`, `created_at`, `updated_at`, `ticker`, `txid_in`, `output_index`, `value_coin`, `confirmations`, `status`, `note`, `txid_out`, `value_forwarded_coin`, `fee_coin`, `network_fee`, `value_fiat`, `credited_at`, `forwarded_at`, `api_key_id`, `address_id`) SELECT `id`, `created_at`, `updated_at`, `ticker`, `txid_in`, `output_index`, `value_coin`, `confirmations`, `status`, `note`, `txid_out`, `value_forwarded_coin`, `fee_coin`, `network_fee`, `value_fiat`, `credited_at`, `forwarded_at`, `api_key_id`, `address_id` FROM `payments`;
-- drop "payments" table after copying rows
DROP TABLE `payments`;
-- rename temporary table "new_payments" to "payments"
ALTER TABLE `new_payments` RENAME TO `payments`;
-- create index "payment_address_id_txid_in_output_index" to table: "payments"
CREATE UNIQUE INDEX `payment_address_id_txid_in_output_index` ON `payments` (`address_id`, `txid_in`, `output_index`);
-- create index "payment_api_key_id_created_at" to table: "payments"
CREATE INDEX `payment_api_key_id_created_at` ON `payments` (`api_key_id`, `created_at`);
-- create index "payment_ticker_status" to table: "payments"
CREATE INDEX `payment_ticker_status` ON `payments` (`ticker`, `status`);
-- create "new_forwards" table
CREATE TABLE `new_forwards` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `intent_id` text NOT NULL, `status` text NOT NULL DEFAULT ('intent'), `outputs` json NOT NULL, `fee_coin` text NOT NULL, `network_fee` text NOT NULL, `value_forwarded_coin` text NOT NULL, `txid_out` text NOT NULL DEFAULT (''), `landed_at` datetime NULL, `signed_tx` blob NULL, `held` bool NOT NULL DEFAULT (false), `outbound_id` integer NULL, `payment_id` integer NOT NULL, CONSTRAINT `forwards_outbounds_forwards` FOREIGN KEY (`outbound_id`) REFERENCES `outbounds` (`id`) ON DELETE SET NULL, CONSTRAINT `forwards_payments_forward` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "forwards" to new temporary table "new_forwards"
INSERT INTO `new_forwards` (`id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `landed_at`, `signed_tx`, `held`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `landed_at`, `signed_tx`, `held`, `payment_id` FROM `forwards`;
-- drop "forwards" table after copying rows
DROP TABLE `forwards`;
-- rename temporary table "new_forwards" to "forwards"
ALTER TABLE `new_forwards` RENAME TO `forwards`;
-- create index "forwards_intent_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_intent_id_key` ON `forwards` (`intent_id`);
-- create index "forwards_payment_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_payment_id_key` ON `forwards` (`payment_id`);
-- create index "forward_outbound_id" to table: "forwards"
CREATE INDEX `forward_outbound_id` ON `forwards` (`outbound_id`);
-- create "ledger_entries" table
CREATE TABLE `ledger_entries` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `ticker` text NOT NULL, `event` text NOT NULL, `account` text NOT NULL, `amount` text NOT NULL, `key` text NOT NULL, `payment_id` integer NULL, `address_id` integer NULL, `outbound_id` integer NULL, `hold_reason` text NULL);
-- create index "ledgerentry_key_account" to table: "ledger_entries"
CREATE UNIQUE INDEX `ledgerentry_key_account` ON `ledger_entries` (`key`, `account`);
-- create index "ledgerentry_account_project_id_ticker" to table: "ledger_entries"
CREATE INDEX `ledgerentry_account_project_id_ticker` ON `ledger_entries` (`account`, `project_id`, `ticker`);
-- create index "ledgerentry_address_id_account" to table: "ledger_entries"
CREATE INDEX `ledgerentry_address_id_account` ON `ledger_entries` (`address_id`, `account`);
-- create index "ledgerentry_payment_id" to table: "ledger_entries"
CREATE INDEX `ledgerentry_payment_id` ON `ledger_entries` (`payment_id`);
-- create "outbounds" table
CREATE TABLE `outbounds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `key` text NOT NULL, `ticker` text NOT NULL, `purpose` text NOT NULL, `project_id` integer NOT NULL DEFAULT (0), `from_address` text NOT NULL, `from_index` integer NOT NULL, `inputs` json NOT NULL, `outputs` json NOT NULL, `network_fee` text NOT NULL, `state` text NOT NULL DEFAULT ('planned'), `signed_tx` blob NULL, `txid` text NOT NULL DEFAULT (''), `sends` integer NOT NULL DEFAULT (0), `last_error` text NOT NULL DEFAULT (''), `replaces_id` integer NULL, `sent_at` datetime NULL, `landed_at` datetime NULL);
-- create index "outbounds_key_key" to table: "outbounds"
CREATE UNIQUE INDEX `outbounds_key_key` ON `outbounds` (`key`);
-- create index "outbound_ticker_state" to table: "outbounds"
CREATE INDEX `outbound_ticker_state` ON `outbounds` (`ticker`, `state`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "outbound_ticker_state" to table: "outbounds"
DROP INDEX `outbound_ticker_state`;
-- reverse: create index "outbounds_key_key" to table: "outbounds"
DROP INDEX `outbounds_key_key`;
-- reverse: create "outbounds" table
DROP TABLE `outbounds`;
-- reverse: create index "ledgerentry_payment_id" to table: "ledger_entries"
DROP INDEX `ledgerentry_payment_id`;
-- reverse: create index "ledgerentry_address_id_account" to table: "ledger_entries"
DROP INDEX `ledgerentry_address_id_account`;
-- reverse: create index "ledgerentry_account_project_id_ticker" to table: "ledger_entries"
DROP INDEX `ledgerentry_account_project_id_ticker`;
-- reverse: create index "ledgerentry_key_account" to table: "ledger_entries"
DROP INDEX `ledgerentry_key_account`;
-- reverse: create "ledger_entries" table
DROP TABLE `ledger_entries`;
-- reverse: create index "forward_outbound_id" to table: "forwards"
DROP INDEX `forward_outbound_id`;
-- reverse: create index "forwards_payment_id_key" to table: "forwards"
DROP INDEX `forwards_payment_id_key`;
-- reverse: create index "forwards_intent_id_key" to table: "forwards"
DROP INDEX `forwards_intent_id_key`;
-- reverse: create "new_forwards" table
DROP TABLE `new_forwards`;
-- reverse: create index "payment_ticker_status" to table: "payments"
DROP INDEX `payment_ticker_status`;
-- reverse: create index "payment_api_key_id_created_at" to table: "payments"
DROP INDEX `payment_api_key_id_created_at`;
-- reverse: create index "payment_address_id_txid_in_output_index" to table: "payments"
DROP INDEX `payment_address_id_txid_in_output_index`;
-- reverse: create "new_payments" table
DROP TABLE `new_payments`;
