-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_addresses" table
CREATE TABLE `new_addresses` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL DEFAULT ('0'), `service` text NOT NULL DEFAULT ('address'), `invoice_id` integer NULL, `quote_rate` text NULL, `quote_value_coin` text NULL, `quote_expires_at` datetime NULL, `ticker` text NOT NULL, `family` text NOT NULL, `address_in` text NOT NULL, `derivation_index` integer NOT NULL, `callback_url` text NOT NULL, `callback_key` text NOT NULL, `destinations` json NOT NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `custom_params` json NOT NULL, `required_confirmations` integer NOT NULL, `priority` text NOT NULL DEFAULT ('default'), `api_key_id` integer NOT NULL, CONSTRAINT `addresses_api_keys_addresses` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "addresses" to new temporary table "new_addresses"
INSERT INTO `new_addresses` (`id`, `created_at`, `updated_at`, `project_id`, `service`, `invoice_id`, `quote_rate`, `quote_value_coin`, `quote_expires_at`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `api_key_id`) SELECT `id`, `created_at`, `updated_at`, `project_id`, `service`, `invoice_id`, `quote_rate`, `quote_value_coin`, `quote_expires_at`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `api_key_id` FROM `addresses`;
-- drop "addresses" table after copying rows
DROP TABLE `addresses`;
-- rename temporary table "new_addresses" to "addresses"
ALTER TABLE `new_addresses` RENAME TO `addresses`;
-- create index "addresses_address_in_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_address_in_key` ON `addresses` (`address_in`);
-- create index "addresses_derivation_index_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_derivation_index_key` ON `addresses` (`derivation_index`);
-- create index "address_project_id_ticker_callback_key" to table: "addresses"
CREATE UNIQUE INDEX `address_project_id_ticker_callback_key` ON `addresses` (`project_id`, `ticker`, `callback_key`);
-- create index "address_invoice_id" to table: "addresses"
CREATE INDEX `address_invoice_id` ON `addresses` (`invoice_id`);
-- create "new_forwards" table
CREATE TABLE `new_forwards` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `intent_id` text NOT NULL, `status` text NOT NULL DEFAULT ('intent'), `outputs` json NOT NULL, `fee_coin` text NOT NULL, `network_fee` text NOT NULL, `value_forwarded_coin` text NOT NULL, `txid_out` text NOT NULL DEFAULT (''), `held` bool NOT NULL DEFAULT (false), `outbound_id` integer NULL, `payment_id` integer NOT NULL, CONSTRAINT `forwards_outbounds_forwards` FOREIGN KEY (`outbound_id`) REFERENCES `outbounds` (`id`) ON DELETE SET NULL, CONSTRAINT `forwards_payments_forward` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "forwards" to new temporary table "new_forwards"
INSERT INTO `new_forwards` (`id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `held`, `outbound_id`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `held`, `outbound_id`, `payment_id` FROM `forwards`;
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
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "forward_outbound_id" to table: "forwards"
DROP INDEX `forward_outbound_id`;
-- reverse: create index "forwards_payment_id_key" to table: "forwards"
DROP INDEX `forwards_payment_id_key`;
-- reverse: create index "forwards_intent_id_key" to table: "forwards"
DROP INDEX `forwards_intent_id_key`;
-- reverse: create "new_forwards" table
DROP TABLE `new_forwards`;
-- reverse: create index "address_invoice_id" to table: "addresses"
DROP INDEX `address_invoice_id`;
-- reverse: create index "address_project_id_ticker_callback_key" to table: "addresses"
DROP INDEX `address_project_id_ticker_callback_key`;
-- reverse: create index "addresses_derivation_index_key" to table: "addresses"
DROP INDEX `addresses_derivation_index_key`;
-- reverse: create index "addresses_address_in_key" to table: "addresses"
DROP INDEX `addresses_address_in_key`;
-- reverse: create "new_addresses" table
DROP TABLE `new_addresses`;
