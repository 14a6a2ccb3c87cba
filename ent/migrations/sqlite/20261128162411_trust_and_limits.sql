-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_signing_keys" table
CREATE TABLE `new_signing_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `algorithm` text NOT NULL, `private_pem` text NOT NULL, `public_pem` text NOT NULL, `active` bool NOT NULL DEFAULT (false), `project_id` integer NOT NULL DEFAULT (0), `previous_until` datetime NULL);
-- copy rows from old table "signing_keys" to new temporary table "new_signing_keys"
INSERT INTO `new_signing_keys` (`id`, `created_at`, `algorithm`, `private_pem`, `public_pem`, `active`) SELECT `id`, `created_at`, `algorithm`, `private_pem`, `public_pem`, `active` FROM `signing_keys`;
-- drop "signing_keys" table after copying rows
DROP TABLE `signing_keys`;
-- rename temporary table "new_signing_keys" to "signing_keys"
ALTER TABLE `new_signing_keys` RENAME TO `signing_keys`;
-- create index "signingkey_project_id_active" to table: "signing_keys"
CREATE INDEX `signingkey_project_id_active` ON `signing_keys` (`project_id`, `active`);
-- add column "scopes" to table: "api_keys"
ALTER TABLE `api_keys` ADD COLUMN `scopes` json NOT NULL DEFAULT '["read", "create", "payouts", "management"]';
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL, `payout_notify_url` text NOT NULL DEFAULT (''), `payout_limits` json NULL, `payout_notify_post` bool NOT NULL DEFAULT (true), `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'), `rate_limit` real NOT NULL DEFAULT (0), `rate_burst` integer NOT NULL DEFAULT (0), `brand_color` text NOT NULL DEFAULT (''), `support_contact` text NOT NULL DEFAULT (''), `logo` blob NULL, `logo_type` text NOT NULL DEFAULT (''), `auto_refund_overpaid` bool NOT NULL DEFAULT (false));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments`, `auto_refund_overpaid`) SELECT `id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments`, `auto_refund_overpaid` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- create "idempotency_keys" table
CREATE TABLE `idempotency_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `api_key_id` integer NOT NULL, `key` text NOT NULL, `method` text NOT NULL, `request_hash` text NOT NULL, `status` integer NOT NULL DEFAULT (0), `response` blob NULL, `content_type` text NOT NULL DEFAULT (''));
-- create index "idempotencykey_api_key_id_key" to table: "idempotency_keys"
CREATE UNIQUE INDEX `idempotencykey_api_key_id_key` ON `idempotency_keys` (`api_key_id`, `key`);
-- create index "idempotencykey_created_at" to table: "idempotency_keys"
CREATE INDEX `idempotencykey_created_at` ON `idempotency_keys` (`created_at`);
-- create "price_quotes" table
CREATE TABLE `price_quotes` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `coin` text NOT NULL, `currency` text NOT NULL, `price` text NOT NULL, `sources` json NOT NULL, `fetched_at` datetime NOT NULL);
-- create index "pricequote_coin_currency" to table: "price_quotes"
CREATE UNIQUE INDEX `pricequote_coin_currency` ON `price_quotes` (`coin`, `currency`);
-- create "rate_buckets" table
CREATE TABLE `rate_buckets` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `key` text NOT NULL, `tokens` real NOT NULL, `updated_at` datetime NOT NULL);
-- create index "rate_buckets_key_key" to table: "rate_buckets"
CREATE UNIQUE INDEX `rate_buckets_key_key` ON `rate_buckets` (`key`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "rate_buckets_key_key" to table: "rate_buckets"
DROP INDEX `rate_buckets_key_key`;
-- reverse: create "rate_buckets" table
DROP TABLE `rate_buckets`;
-- reverse: create index "pricequote_coin_currency" to table: "price_quotes"
DROP INDEX `pricequote_coin_currency`;
-- reverse: create "price_quotes" table
DROP TABLE `price_quotes`;
-- reverse: create index "idempotencykey_created_at" to table: "idempotency_keys"
DROP INDEX `idempotencykey_created_at`;
-- reverse: create index "idempotencykey_api_key_id_key" to table: "idempotency_keys"
DROP INDEX `idempotencykey_api_key_id_key`;
-- reverse: create "idempotency_keys" table
DROP TABLE `idempotency_keys`;
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
-- reverse: add column "scopes" to table: "api_keys"
ALTER TABLE `api_keys` DROP COLUMN `scopes`;
-- reverse: create index "signingkey_project_id_active" to table: "signing_keys"
DROP INDEX `signingkey_project_id_active`;
-- reverse: create "new_signing_keys" table
DROP TABLE `new_signing_keys`;
