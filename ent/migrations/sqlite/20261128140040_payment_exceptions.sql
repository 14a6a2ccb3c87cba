-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_invoices" table
CREATE TABLE `new_invoices` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `public_id` text NOT NULL, `kind` text NOT NULL, `notify_url` text NOT NULL, `redirect_url` text NOT NULL DEFAULT (''), `currency` text NOT NULL, `value` text NULL, `item_description` text NOT NULL DEFAULT (''), `expires_at` datetime NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `success_token` text NOT NULL DEFAULT (''), `subscription_id` integer NULL, `option` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('waiting'), `paid_at` datetime NULL, `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'));
-- copy rows from old table "invoices" to new temporary table "new_invoices"
INSERT INTO `new_invoices` (`id`, `created_at`, `updated_at`, `project_id`, `public_id`, `kind`, `notify_url`, `redirect_url`, `currency`, `value`, `item_description`, `expires_at`, `post`, `json`, `convert`, `success_token`, `subscription_id`, `option`, `status`, `paid_at`) SELECT `id`, `created_at`, `updated_at`, `project_id`, `public_id`, `kind`, `notify_url`, `redirect_url`, `currency`, `value`, `item_description`, `expires_at`, `post`, `json`, `convert`, `success_token`, `subscription_id`, `option`, `status`, `paid_at` FROM `invoices`;
-- drop "invoices" table after copying rows
DROP TABLE `invoices`;
-- rename temporary table "new_invoices" to "invoices"
ALTER TABLE `new_invoices` RENAME TO `invoices`;
-- create index "invoices_public_id_key" to table: "invoices"
CREATE UNIQUE INDEX `invoices_public_id_key` ON `invoices` (`public_id`);
-- create index "invoice_project_id_kind_created_at" to table: "invoices"
CREATE INDEX `invoice_project_id_kind_created_at` ON `invoices` (`project_id`, `kind`, `created_at`);
-- create index "invoice_subscription_id" to table: "invoices"
CREATE INDEX `invoice_subscription_id` ON `invoices` (`subscription_id`);
-- add column "late_hold_from" to table: "addresses"
ALTER TABLE `addresses` ADD COLUMN `late_hold_from` datetime NULL;
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL, `payout_notify_url` text NOT NULL DEFAULT (''), `payout_limits` json NULL, `payout_notify_post` bool NOT NULL DEFAULT (true), `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`) SELECT `id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
-- reverse: add column "late_hold_from" to table: "addresses"
ALTER TABLE `addresses` DROP COLUMN `late_hold_from`;
-- reverse: create index "invoice_subscription_id" to table: "invoices"
DROP INDEX `invoice_subscription_id`;
-- reverse: create index "invoice_project_id_kind_created_at" to table: "invoices"
DROP INDEX `invoice_project_id_kind_created_at`;
-- reverse: create index "invoices_public_id_key" to table: "invoices"
DROP INDEX `invoices_public_id_key`;
-- reverse: create "new_invoices" table
DROP TABLE `new_invoices`;
