-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_addresses" table
CREATE TABLE `new_addresses` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL DEFAULT ('0'), `service` text NOT NULL DEFAULT ('address'), `invoice_id` integer NULL, `quote_rate` text NULL, `quote_value_coin` text NULL, `quote_expires_at` datetime NULL, `ticker` text NOT NULL, `family` text NOT NULL, `address_in` text NOT NULL, `derivation_index` integer NOT NULL, `callback_url` text NOT NULL, `callback_key` text NOT NULL, `destinations` json NOT NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `custom_params` json NOT NULL, `required_confirmations` integer NOT NULL, `priority` text NOT NULL DEFAULT ('default'), `api_key_id` integer NOT NULL, CONSTRAINT `addresses_api_keys_addresses` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "addresses" to new temporary table "new_addresses"
INSERT INTO `new_addresses` (`id`, `created_at`, `updated_at`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `api_key_id`) SELECT `id`, `created_at`, `updated_at`, `ticker`, `family`, `address_in`, `derivation_index`, `callback_url`, `callback_key`, `destinations`, `post`, `json`, `convert`, `custom_params`, `required_confirmations`, `priority`, `api_key_id` FROM `addresses`;
-- drop "addresses" table after copying rows
DROP TABLE `addresses`;
-- rename temporary table "new_addresses" to "addresses"
ALTER TABLE `new_addresses` RENAME TO `addresses`;
-- create index "addresses_address_in_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_address_in_key` ON `addresses` (`address_in`);
-- create index "addresses_derivation_index_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_derivation_index_key` ON `addresses` (`derivation_index`);
-- create index "address_api_key_id_ticker_callback_key" to table: "addresses"
CREATE UNIQUE INDEX `address_api_key_id_ticker_callback_key` ON `addresses` (`api_key_id`, `ticker`, `callback_key`);
-- create index "address_project_id_ticker_callback_key" to table: "addresses"
CREATE INDEX `address_project_id_ticker_callback_key` ON `addresses` (`project_id`, `ticker`, `callback_key`);
-- create index "address_invoice_id" to table: "addresses"
CREATE INDEX `address_invoice_id` ON `addresses` (`invoice_id`);
-- add column "value_fiat" to table: "payments"
ALTER TABLE `payments` ADD COLUMN `value_fiat` text NULL;
-- create "new_notifications" table
CREATE TABLE `new_notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `owner_id` integer NOT NULL, `service` text NOT NULL DEFAULT (''), `event` text NOT NULL DEFAULT (''), `subject` text NOT NULL DEFAULT (''), `topic` text NOT NULL DEFAULT (''), `sequence` text NULL, `host` text NOT NULL DEFAULT (''), `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signing_key` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `resend` bool NOT NULL DEFAULT (false), `lease_until` datetime NULL, `lease_owner` text NULL);
-- copy rows from old table "notifications" to new temporary table "new_notifications"
INSERT INTO `new_notifications` (`id`, `created_at`, `updated_at`, `uuid`, `owner_id`, `service`, `event`, `subject`, `topic`, `sequence`, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signing_key`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `owner_id`, `service`, `event`, `subject`, `topic`, `sequence`, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signing_key`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner` FROM `notifications`;
-- drop "notifications" table after copying rows
DROP TABLE `notifications`;
-- rename temporary table "new_notifications" to "notifications"
ALTER TABLE `new_notifications` RENAME TO `notifications`;
-- create index "notifications_uuid_key" to table: "notifications"
CREATE UNIQUE INDEX `notifications_uuid_key` ON `notifications` (`uuid`);
-- create index "notification_due" to table: "notifications"
CREATE INDEX `notification_due` ON `notifications` (`next_attempt_at`, `id`) WHERE (next_attempt_at IS NOT NULL);
-- create index "notification_queued" to table: "notifications"
CREATE INDEX `notification_queued` ON `notifications` (`status`) WHERE (next_attempt_at IS NOT NULL);
-- create index "notification_sequence_undelivered" to table: "notifications"
CREATE INDEX `notification_sequence_undelivered` ON `notifications` (`sequence`) WHERE ((sequence IS NOT NULL) AND (next_attempt_at IS NOT NULL));
-- create index "notification_owner_id_subject" to table: "notifications"
CREATE INDEX `notification_owner_id_subject` ON `notifications` (`owner_id`, `subject`);
-- create "new_api_keys" table
CREATE TABLE `new_api_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `name` text NOT NULL, `prefix` text NOT NULL, `hash` text NOT NULL, `revoked_at` datetime NULL, `project_id` integer NOT NULL DEFAULT ('0'), `operator` bool NOT NULL DEFAULT (false));
-- copy rows from old table "api_keys" to new temporary table "new_api_keys"
INSERT INTO `new_api_keys` (`id`, `created_at`, `name`, `prefix`, `hash`, `revoked_at`, `operator`) SELECT `id`, `created_at`, `name`, `prefix`, `hash`, `revoked_at`, `operator` FROM `api_keys`;
-- drop "api_keys" table after copying rows
DROP TABLE `api_keys`;
-- rename temporary table "new_api_keys" to "api_keys"
ALTER TABLE `new_api_keys` RENAME TO `api_keys`;
-- create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_hash_key` ON `api_keys` (`hash`);
-- create "invoices" table
CREATE TABLE `invoices` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `public_id` text NOT NULL, `kind` text NOT NULL, `notify_url` text NOT NULL, `redirect_url` text NOT NULL DEFAULT (''), `currency` text NOT NULL, `value` text NULL, `item_description` text NOT NULL DEFAULT (''), `expires_at` datetime NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `success_token` text NOT NULL DEFAULT (''), `subscription_id` integer NULL, `option` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('waiting'), `paid_at` datetime NULL);
-- create index "invoices_public_id_key" to table: "invoices"
CREATE UNIQUE INDEX `invoices_public_id_key` ON `invoices` (`public_id`);
-- create index "invoice_project_id_kind_created_at" to table: "invoices"
CREATE INDEX `invoice_project_id_kind_created_at` ON `invoices` (`project_id`, `kind`, `created_at`);
-- create index "invoice_subscription_id" to table: "invoices"
CREATE INDEX `invoice_subscription_id` ON `invoices` (`subscription_id`);
-- create "projects" table
CREATE TABLE `projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL);
-- create "subscriptions" table
CREATE TABLE `subscriptions` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `token` text NOT NULL, `notify_url` text NOT NULL, `currency` text NOT NULL, `options` json NOT NULL, `customer` text NOT NULL DEFAULT (''), `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `expires_at` datetime NULL);
-- create index "subscriptions_token_key" to table: "subscriptions"
CREATE UNIQUE INDEX `subscriptions_token_key` ON `subscriptions` (`token`);
-- create index "subscription_project_id_created_at" to table: "subscriptions"
CREATE INDEX `subscription_project_id_created_at` ON `subscriptions` (`project_id`, `created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- data: existing API keys move into one default project; what they own
-- (addresses, notifications and their delivery events) becomes the
-- project's. Its IPN secret is generated by payhook when it next starts
-- (SQL has no portable source of secure randomness).
INSERT INTO projects (created_at, updated_at, name, currency, ipn_secret, wallets, confirmations, tickers)
SELECT CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 'default', 'USD', '', '{}', '{}', '[]'
WHERE EXISTS (SELECT 1 FROM api_keys);
UPDATE api_keys SET project_id = (SELECT min(id) FROM projects) WHERE project_id = 0 AND EXISTS (SELECT 1 FROM projects);
UPDATE addresses SET project_id = (SELECT k.project_id FROM api_keys k WHERE k.id = addresses.api_key_id) WHERE project_id = 0;
UPDATE notifications SET owner_id = (SELECT k.project_id FROM api_keys k WHERE k.id = notifications.owner_id) WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = notifications.owner_id);
UPDATE delivery_events SET owner_id = (SELECT k.project_id FROM api_keys k WHERE k.id = delivery_events.owner_id) WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = delivery_events.owner_id);

-- +goose Down
-- reverse: create index "subscription_project_id_created_at" to table: "subscriptions"
DROP INDEX `subscription_project_id_created_at`;
-- reverse: create index "subscriptions_token_key" to table: "subscriptions"
DROP INDEX `subscriptions_token_key`;
-- reverse: create "subscriptions" table
DROP TABLE `subscriptions`;
-- reverse: create "projects" table
DROP TABLE `projects`;
-- reverse: create index "invoice_subscription_id" to table: "invoices"
DROP INDEX `invoice_subscription_id`;
-- reverse: create index "invoice_project_id_kind_created_at" to table: "invoices"
DROP INDEX `invoice_project_id_kind_created_at`;
-- reverse: create index "invoices_public_id_key" to table: "invoices"
DROP INDEX `invoices_public_id_key`;
-- reverse: create "invoices" table
DROP TABLE `invoices`;
-- reverse: create index "api_keys_hash_key" to table: "api_keys"
DROP INDEX `api_keys_hash_key`;
-- reverse: create "new_api_keys" table
DROP TABLE `new_api_keys`;
-- reverse: create index "notification_owner_id_subject" to table: "notifications"
DROP INDEX `notification_owner_id_subject`;
-- reverse: create index "notification_sequence_undelivered" to table: "notifications"
DROP INDEX `notification_sequence_undelivered`;
-- reverse: create index "notification_queued" to table: "notifications"
DROP INDEX `notification_queued`;
-- reverse: create index "notification_due" to table: "notifications"
DROP INDEX `notification_due`;
-- reverse: create index "notifications_uuid_key" to table: "notifications"
DROP INDEX `notifications_uuid_key`;
-- reverse: create "new_notifications" table
DROP TABLE `new_notifications`;
-- reverse: add column "value_fiat" to table: "payments"
ALTER TABLE `payments` DROP COLUMN `value_fiat`;
-- reverse: create index "address_invoice_id" to table: "addresses"
DROP INDEX `address_invoice_id`;
-- reverse: create index "address_project_id_ticker_callback_key" to table: "addresses"
DROP INDEX `address_project_id_ticker_callback_key`;
-- reverse: create index "address_api_key_id_ticker_callback_key" to table: "addresses"
DROP INDEX `address_api_key_id_ticker_callback_key`;
-- reverse: create index "addresses_derivation_index_key" to table: "addresses"
DROP INDEX `addresses_derivation_index_key`;
-- reverse: create index "addresses_address_in_key" to table: "addresses"
DROP INDEX `addresses_address_in_key`;
-- reverse: create "new_addresses" table
DROP TABLE `new_addresses`;
