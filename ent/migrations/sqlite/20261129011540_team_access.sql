-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_dashboard_sessions" table
CREATE TABLE `new_dashboard_sessions` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `token_hash` text NOT NULL, `user_id` integer NOT NULL, `csrf_token` text NOT NULL, `expires_at` datetime NOT NULL, `pending` text NOT NULL DEFAULT ('none'), `reauth_at` datetime NULL);
-- copy rows from old table "dashboard_sessions" to new temporary table "new_dashboard_sessions"
INSERT INTO `new_dashboard_sessions` (`id`, `created_at`, `token_hash`, `user_id`, `csrf_token`, `expires_at`) SELECT `id`, `created_at`, `token_hash`, `user_id`, `csrf_token`, `expires_at` FROM `dashboard_sessions`;
-- drop "dashboard_sessions" table after copying rows
DROP TABLE `dashboard_sessions`;
-- rename temporary table "new_dashboard_sessions" to "dashboard_sessions"
ALTER TABLE `new_dashboard_sessions` RENAME TO `dashboard_sessions`;
-- create index "dashboard_sessions_token_hash_key" to table: "dashboard_sessions"
CREATE UNIQUE INDEX `dashboard_sessions_token_hash_key` ON `dashboard_sessions` (`token_hash`);
-- create index "dashboardsession_user_id" to table: "dashboard_sessions"
CREATE INDEX `dashboardsession_user_id` ON `dashboard_sessions` (`user_id`);
-- create index "dashboardsession_expires_at" to table: "dashboard_sessions"
CREATE INDEX `dashboardsession_expires_at` ON `dashboard_sessions` (`expires_at`);
-- create "new_dashboard_users" table
CREATE TABLE `new_dashboard_users` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `failed_signins` integer NOT NULL DEFAULT (0), `locked_until` datetime NULL, `role` text NOT NULL DEFAULT ('owner'), `disabled_at` datetime NULL, `totp_secret` text NOT NULL DEFAULT (''), `totp_enabled_at` datetime NULL, `totp_last_step` integer NOT NULL DEFAULT (0));
-- copy rows from old table "dashboard_users" to new temporary table "new_dashboard_users"
INSERT INTO `new_dashboard_users` (`id`, `created_at`, `project_id`, `email`, `password_hash`, `failed_signins`, `locked_until`) SELECT `id`, `created_at`, `project_id`, `email`, `password_hash`, `failed_signins`, `locked_until` FROM `dashboard_users`;
-- drop "dashboard_users" table after copying rows
DROP TABLE `dashboard_users`;
-- rename temporary table "new_dashboard_users" to "dashboard_users"
ALTER TABLE `new_dashboard_users` RENAME TO `dashboard_users`;
-- create index "dashboard_users_email_key" to table: "dashboard_users"
CREATE UNIQUE INDEX `dashboard_users_email_key` ON `dashboard_users` (`email`);
-- create index "dashboarduser_project_id" to table: "dashboard_users"
CREATE INDEX `dashboarduser_project_id` ON `dashboard_users` (`project_id`);
-- create "new_projects" table
CREATE TABLE `new_projects` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `name` text NOT NULL, `currency` text NOT NULL DEFAULT ('USD'), `ipn_secret` text NOT NULL, `previous_ipn_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `wallets` json NOT NULL, `confirmations` json NOT NULL, `tickers` json NOT NULL, `payout_notify_url` text NOT NULL DEFAULT (''), `payout_limits` json NULL, `payout_notify_post` bool NOT NULL DEFAULT (true), `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'), `rate_limit` real NOT NULL DEFAULT (0), `rate_burst` integer NOT NULL DEFAULT (0), `brand_color` text NOT NULL DEFAULT (''), `support_contact` text NOT NULL DEFAULT (''), `logo` blob NULL, `logo_type` text NOT NULL DEFAULT (''), `auto_refund_overpaid` bool NOT NULL DEFAULT (false), `require_owner_2fa` bool NOT NULL DEFAULT (false));
-- copy rows from old table "projects" to new temporary table "new_projects"
INSERT INTO `new_projects` (`id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments`, `rate_limit`, `rate_burst`, `brand_color`, `support_contact`, `logo`, `logo_type`, `auto_refund_overpaid`) SELECT `id`, `created_at`, `updated_at`, `name`, `currency`, `ipn_secret`, `previous_ipn_secret`, `previous_secret_until`, `wallets`, `confirmations`, `tickers`, `payout_notify_url`, `payout_limits`, `payout_notify_post`, `underpaid_tolerance`, `late_payments`, `rate_limit`, `rate_burst`, `brand_color`, `support_contact`, `logo`, `logo_type`, `auto_refund_overpaid` FROM `projects`;
-- drop "projects" table after copying rows
DROP TABLE `projects`;
-- rename temporary table "new_projects" to "projects"
ALTER TABLE `new_projects` RENAME TO `projects`;
-- create "audit_entries" table
CREATE TABLE `audit_entries` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `actor_kind` text NOT NULL, `actor_id` integer NOT NULL, `actor` text NOT NULL DEFAULT (''), `action` text NOT NULL, `target` text NOT NULL DEFAULT (''), `ip` text NOT NULL DEFAULT (''), `user_agent` text NOT NULL DEFAULT (''));
-- create index "auditentry_project_id_id" to table: "audit_entries"
CREATE INDEX `auditentry_project_id_id` ON `audit_entries` (`project_id`, `id`);
-- create "dashboard_invitations" table
CREATE TABLE `dashboard_invitations` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `email` text NOT NULL, `role` text NOT NULL, `token_hash` text NOT NULL, `invited_by` integer NOT NULL, `expires_at` datetime NOT NULL, `accepted_at` datetime NULL, `revoked_at` datetime NULL);
-- create index "dashboard_invitations_token_hash_key" to table: "dashboard_invitations"
CREATE UNIQUE INDEX `dashboard_invitations_token_hash_key` ON `dashboard_invitations` (`token_hash`);
-- create index "dashboardinvitation_project_id" to table: "dashboard_invitations"
CREATE INDEX `dashboardinvitation_project_id` ON `dashboard_invitations` (`project_id`);
-- create "dashboard_recovery_codes" table
CREATE TABLE `dashboard_recovery_codes` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `user_id` integer NOT NULL, `code_hash` text NOT NULL, `used_at` datetime NULL);
-- create index "dashboardrecoverycode_user_id_code_hash" to table: "dashboard_recovery_codes"
CREATE UNIQUE INDEX `dashboardrecoverycode_user_id_code_hash` ON `dashboard_recovery_codes` (`user_id`, `code_hash`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "dashboardrecoverycode_user_id_code_hash" to table: "dashboard_recovery_codes"
DROP INDEX `dashboardrecoverycode_user_id_code_hash`;
-- reverse: create "dashboard_recovery_codes" table
DROP TABLE `dashboard_recovery_codes`;
-- reverse: create index "dashboardinvitation_project_id" to table: "dashboard_invitations"
DROP INDEX `dashboardinvitation_project_id`;
-- reverse: create index "dashboard_invitations_token_hash_key" to table: "dashboard_invitations"
DROP INDEX `dashboard_invitations_token_hash_key`;
-- reverse: create "dashboard_invitations" table
DROP TABLE `dashboard_invitations`;
-- reverse: create index "auditentry_project_id_id" to table: "audit_entries"
DROP INDEX `auditentry_project_id_id`;
-- reverse: create "audit_entries" table
DROP TABLE `audit_entries`;
-- reverse: create "new_projects" table
DROP TABLE `new_projects`;
-- reverse: create index "dashboarduser_project_id" to table: "dashboard_users"
DROP INDEX `dashboarduser_project_id`;
-- reverse: create index "dashboard_users_email_key" to table: "dashboard_users"
DROP INDEX `dashboard_users_email_key`;
-- reverse: create "new_dashboard_users" table
DROP TABLE `new_dashboard_users`;
-- reverse: create index "dashboardsession_expires_at" to table: "dashboard_sessions"
DROP INDEX `dashboardsession_expires_at`;
-- reverse: create index "dashboardsession_user_id" to table: "dashboard_sessions"
DROP INDEX `dashboardsession_user_id`;
-- reverse: create index "dashboard_sessions_token_hash_key" to table: "dashboard_sessions"
DROP INDEX `dashboard_sessions_token_hash_key`;
-- reverse: create "new_dashboard_sessions" table
DROP TABLE `new_dashboard_sessions`;
