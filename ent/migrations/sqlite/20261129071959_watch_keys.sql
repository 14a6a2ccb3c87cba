-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_addresses" table
CREATE TABLE `new_addresses` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL DEFAULT ('0'), `service` text NOT NULL DEFAULT ('address'), `invoice_id` integer NULL, `quote_rate` text NULL, `quote_value_coin` text NULL, `quote_expires_at` datetime NULL, `late_hold_from` datetime NULL, `ticker` text NOT NULL, `family` text NOT NULL, `address_in` text NOT NULL, `derivation_index` integer NULL, `watch_key_id` integer NULL, `watch_index` integer NULL, `callback_url` text NOT NULL, `callback_key` text NOT NULL, `destinations` json NOT NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `custom_params` json NOT NULL, `required_confirmations` integer NOT NULL, `priority` text NOT NULL DEFAULT ('default'), `multi_token` bool NOT NULL DEFAULT (false), `multi_chain` bool NOT NULL DEFAULT (false), `api_key_id` integer NOT NULL, CONSTRAINT `addresses_api_keys_addresses` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "addresses" to new temporary table "new_addresses"
INSERT INTO `new_addresses` (`id`, `created_at`, `updated_at`, `project_id`, `service`, `invoice_id`, `quote_rate`, `quote_value_coin`, `quote_expires_at`, `late_hold_from`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `multi_token`, `multi_chain`, `api_key_id`) SELECT `id`, `created_at`, `updated_at`, `project_id`, `service`, `invoice_id`, `quote_rate`, `quote_value_coin`, `quote_expires_at`, `late_hold_from`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `multi_token`, `multi_chain`, `api_key_id` FROM `addresses`;
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
-- create index "address_watch_key_id_watch_index" to table: "addresses"
CREATE UNIQUE INDEX `address_watch_key_id_watch_index` ON `addresses` (`watch_key_id`, `watch_index`);
-- add column "psbt" to table: "outbounds"
ALTER TABLE `outbounds` ADD COLUMN `psbt` blob NULL;
-- add column "watch_keys" to table: "projects"
ALTER TABLE `projects` ADD COLUMN `watch_keys` json NOT NULL DEFAULT '{}';
-- create "watch_keys" table
CREATE TABLE `watch_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `space` text NOT NULL, `descriptor` text NOT NULL, `next_index` integer NOT NULL DEFAULT (0), `next_change` integer NOT NULL DEFAULT (0), `gap_limit` integer NOT NULL DEFAULT (20));
-- create index "watch_keys_space_key" to table: "watch_keys"
CREATE UNIQUE INDEX `watch_keys_space_key` ON `watch_keys` (`space`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "watch_keys_space_key" to table: "watch_keys"
DROP INDEX `watch_keys_space_key`;
-- reverse: create "watch_keys" table
DROP TABLE `watch_keys`;
-- reverse: add column "watch_keys" to table: "projects"
ALTER TABLE `projects` DROP COLUMN `watch_keys`;
-- reverse: add column "psbt" to table: "outbounds"
ALTER TABLE `outbounds` DROP COLUMN `psbt`;
-- reverse: create index "address_watch_key_id_watch_index" to table: "addresses"
DROP INDEX `address_watch_key_id_watch_index`;
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
