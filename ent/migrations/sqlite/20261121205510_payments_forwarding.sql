-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_payments" table
CREATE TABLE `new_payments` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `ticker` text NOT NULL DEFAULT (''), `txid_in` text NOT NULL, `output_index` integer NOT NULL DEFAULT (0), `value_coin` text NOT NULL, `confirmations` integer NOT NULL DEFAULT (0), `status` text NOT NULL DEFAULT ('pending'), `note` text NOT NULL DEFAULT (''), `txid_out` text NULL, `value_forwarded_coin` text NULL, `fee_coin` text NULL, `network_fee` text NULL, `credited_at` datetime NULL, `forwarded_at` datetime NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, CONSTRAINT `payments_api_keys_payments` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `payments_addresses_payments` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "payments" to new temporary table "new_payments"
INSERT INTO `new_payments` (`id`, `created_at`, `updated_at`, `txid_in`, `output_index`, `value_coin`, `confirmations`, `status`, `txid_out`, `value_forwarded_coin`, `fee_coin`, `network_fee`, `credited_at`, `forwarded_at`, `api_key_id`, `address_id`) SELECT `id`, `created_at`, `updated_at`, `txid_in`, `output_index`, `value_coin`, `confirmations`, `status`, `txid_out`, `value_forwarded_coin`, `fee_coin`, `network_fee`, `credited_at`, `forwarded_at`, `api_key_id`, `address_id` FROM `payments`;
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
-- create "chain_cursors" table
CREATE TABLE `chain_cursors` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `ticker` text NOT NULL, `height` integer NOT NULL DEFAULT (0));
-- create index "chain_cursors_ticker_key" to table: "chain_cursors"
CREATE UNIQUE INDEX `chain_cursors_ticker_key` ON `chain_cursors` (`ticker`);
-- create "forwards" table
CREATE TABLE `forwards` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `intent_id` text NOT NULL, `status` text NOT NULL DEFAULT ('intent'), `outputs` json NOT NULL, `fee_coin` text NOT NULL, `network_fee` text NOT NULL, `value_forwarded_coin` text NOT NULL, `txid_out` text NOT NULL DEFAULT (''), `payment_id` integer NOT NULL, CONSTRAINT `forwards_payments_forward` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
-- create index "forwards_intent_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_intent_id_key` ON `forwards` (`intent_id`);
-- create index "forwards_payment_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_payment_id_key` ON `forwards` (`payment_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "forwards_payment_id_key" to table: "forwards"
DROP INDEX `forwards_payment_id_key`;
-- reverse: create index "forwards_intent_id_key" to table: "forwards"
DROP INDEX `forwards_intent_id_key`;
-- reverse: create "forwards" table
DROP TABLE `forwards`;
-- reverse: create index "chain_cursors_ticker_key" to table: "chain_cursors"
DROP INDEX `chain_cursors_ticker_key`;
-- reverse: create "chain_cursors" table
DROP TABLE `chain_cursors`;
-- reverse: create index "payment_ticker_status" to table: "payments"
DROP INDEX `payment_ticker_status`;
-- reverse: create index "payment_api_key_id_created_at" to table: "payments"
DROP INDEX `payment_api_key_id_created_at`;
-- reverse: create index "payment_address_id_txid_in_output_index" to table: "payments"
DROP INDEX `payment_address_id_txid_in_output_index`;
-- reverse: create "new_payments" table
DROP TABLE `new_payments`;
