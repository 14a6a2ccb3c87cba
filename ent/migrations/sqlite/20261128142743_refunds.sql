-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL, `payout_notify_url` text NOT NULL DEFAULT (''), `payout_limits` json NULL, `payout_notify_post` bool NOT NULL DEFAULT (true), `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'), `auto_refund_overpaid` bool NOT NULL DEFAULT (false));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments`) SELECT `id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- create "refunds" table
CREATE TABLE `refunds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `project_id` integer NOT NULL, `invoice_id` integer NOT NULL, `payment_id` integer NOT NULL, `ticker` text NOT NULL, `address` text NOT NULL, `value` text NOT NULL, `status` text NOT NULL DEFAULT ('pending'), `reason` text NOT NULL DEFAULT (''), `approved_by` text NOT NULL DEFAULT (''), `payout_id` integer NULL, `txid` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''));
-- create index "refunds_uuid_key" to table: "refunds"
CREATE UNIQUE INDEX `refunds_uuid_key` ON `refunds` (`uuid`);
-- create index "refund_payment_id" to table: "refunds"
CREATE INDEX `refund_payment_id` ON `refunds` (`payment_id`);
-- create index "refund_payout_id" to table: "refunds"
CREATE INDEX `refund_payout_id` ON `refunds` (`payout_id`);
-- create index "refund_project_id_id" to table: "refunds"
CREATE INDEX `refund_project_id_id` ON `refunds` (`project_id`, `id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "refund_project_id_id" to table: "refunds"
DROP INDEX `refund_project_id_id`;
-- reverse: create index "refund_payout_id" to table: "refunds"
DROP INDEX `refund_payout_id`;
-- reverse: create index "refund_payment_id" to table: "refunds"
DROP INDEX `refund_payment_id`;
-- reverse: create index "refunds_uuid_key" to table: "refunds"
DROP INDEX `refunds_uuid_key`;
-- reverse: create "refunds" table
DROP TABLE `refunds`;
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
