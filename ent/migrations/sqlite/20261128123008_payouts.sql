-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_payout_requests" table
CREATE TABLE `new_payout_requests` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `ticker` text NOT NULL, `address` text NOT NULL, `value` text NOT NULL, `project_id` integer NOT NULL DEFAULT ('0'), `status` text NOT NULL DEFAULT ('pending'), `payout_id` integer NULL, `api_key_id` integer NOT NULL, CONSTRAINT `payout_requests_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "payout_requests" to new temporary table "new_payout_requests"
INSERT INTO `new_payout_requests` (`id`, `created_at`, `updated_at`, `uuid`, `ticker`, `address`, `value`, `status`, `api_key_id`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `ticker`, `address`, `value`, IFNULL(`status`, ('pending')) AS `status`, `api_key_id` FROM `payout_requests`;
-- drop "payout_requests" table after copying rows
DROP TABLE `payout_requests`;
-- rename temporary table "new_payout_requests" to "payout_requests"
ALTER TABLE `new_payout_requests` RENAME TO `payout_requests`;
-- create index "payout_requests_uuid_key" to table: "payout_requests"
CREATE UNIQUE INDEX `payout_requests_uuid_key` ON `payout_requests` (`uuid`);
-- create index "payoutrequest_api_key_id_created_at" to table: "payout_requests"
CREATE INDEX `payoutrequest_api_key_id_created_at` ON `payout_requests` (`api_key_id`, `created_at`);
-- create index "payoutrequest_project_id_ticker_status_id" to table: "payout_requests"
CREATE INDEX `payoutrequest_project_id_ticker_status_id` ON `payout_requests` (`project_id`, `ticker`, `status`, `id`);
-- create index "payoutrequest_payout_id" to table: "payout_requests"
CREATE INDEX `payoutrequest_payout_id` ON `payout_requests` (`payout_id`);
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL, `payout_notify_url` text NOT NULL DEFAULT (''), `payout_limits` json NULL, `payout_notify_post` bool NOT NULL DEFAULT (true));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`) SELECT `id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- create "payouts" table
CREATE TABLE `payouts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `api_key_id` integer NOT NULL, `ticker` text NOT NULL, `status` text NOT NULL DEFAULT ('created'), `total_requested` text NOT NULL, `fee` text NOT NULL, `blockchain_fee` text NOT NULL, `from_address` text NOT NULL DEFAULT (''), `inputs` json NULL, `outbound_id` integer NULL, `txid` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''), `approval_reason` text NOT NULL DEFAULT (''), `approved_by` text NOT NULL DEFAULT (''), `approved_at` datetime NULL, `queued_at` datetime NULL, `done_at` datetime NULL);
-- create index "payout_project_id_ticker_status_id" to table: "payouts"
CREATE INDEX `payout_project_id_ticker_status_id` ON `payouts` (`project_id`, `ticker`, `status`, `id`);
-- create index "payout_outbound_id" to table: "payouts"
CREATE INDEX `payout_outbound_id` ON `payouts` (`outbound_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "payout_outbound_id" to table: "payouts"
DROP INDEX `payout_outbound_id`;
-- reverse: create index "payout_project_id_ticker_status_id" to table: "payouts"
DROP INDEX `payout_project_id_ticker_status_id`;
-- reverse: create "payouts" table
DROP TABLE `payouts`;
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
-- reverse: create index "payoutrequest_payout_id" to table: "payout_requests"
DROP INDEX `payoutrequest_payout_id`;
-- reverse: create index "payoutrequest_project_id_ticker_status_id" to table: "payout_requests"
DROP INDEX `payoutrequest_project_id_ticker_status_id`;
-- reverse: create index "payoutrequest_api_key_id_created_at" to table: "payout_requests"
DROP INDEX `payoutrequest_api_key_id_created_at`;
-- reverse: create index "payout_requests_uuid_key" to table: "payout_requests"
DROP INDEX `payout_requests_uuid_key`;
-- reverse: create "new_payout_requests" table
DROP TABLE `new_payout_requests`;
