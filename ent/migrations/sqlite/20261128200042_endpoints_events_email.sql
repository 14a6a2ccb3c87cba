-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_notifications" table
CREATE TABLE `new_notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `owner_id` integer NOT NULL, `service` text NOT NULL DEFAULT (''), `event` text NOT NULL DEFAULT (''), `subject` text NOT NULL DEFAULT (''), `topic` text NOT NULL DEFAULT (''), `sequence` text NULL, `host` text NOT NULL DEFAULT (''), `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signing_key` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `resend` bool NOT NULL DEFAULT (false), `lease_until` datetime NULL, `lease_owner` text NULL, `endpoint_id` integer NULL, `event_id` integer NULL);
-- copy rows from old table "notifications" to new temporary table "new_notifications"
INSERT INTO `new_notifications` (`id`, `created_at`, `updated_at`, `uuid`, `owner_id`, `service`, `event`, `subject`, `topic`, `sequence`, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signing_key`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `resend`, `lease_until`, `lease_owner`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `owner_id`, `service`, `event`, `subject`, `topic`, `sequence`, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signing_key`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `resend`, `lease_until`, `lease_owner` FROM `notifications`;
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
-- create index "notification_endpoint" to table: "notifications"
CREATE INDEX `notification_endpoint` ON `notifications` (`endpoint_id`, `id`) WHERE (endpoint_id IS NOT NULL);
-- create "new_invoices" table
CREATE TABLE `new_invoices` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `public_id` text NOT NULL, `kind` text NOT NULL, `email` text NOT NULL DEFAULT (''), `notify_url` text NOT NULL, `redirect_url` text NOT NULL DEFAULT (''), `currency` text NOT NULL, `value` text NULL, `item_description` text NOT NULL DEFAULT (''), `expires_at` datetime NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `success_token` text NOT NULL DEFAULT (''), `subscription_id` integer NULL, `option` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('waiting'), `paid_at` datetime NULL, `underpaid_tolerance` text NOT NULL DEFAULT ('0'), `late_payments` text NOT NULL DEFAULT ('credit'));
-- copy rows from old table "invoices" to new temporary table "new_invoices"
INSERT INTO `new_invoices` (`id`, `created_at`, `updated_at`, `project_id`, `public_id`, `kind`, `notify_url`, `redirect_url`, `currency`, `value`, `item_description`, `expires_at`, `post`, `json`, `convert`, `success_token`, `subscription_id`, `option`, `status`, `paid_at`, `underpaid_tolerance`, `late_payments`) SELECT `id`, `created_at`, `updated_at`, `project_id`, `public_id`, `kind`, `notify_url`, `redirect_url`, `currency`, `value`, `item_description`, `expires_at`, `post`, `json`, `convert`, `success_token`, `subscription_id`, `option`, `status`, `paid_at`, `underpaid_tolerance`, `late_payments` FROM `invoices`;
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
-- create "emails" table
CREATE TABLE `emails` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL DEFAULT (0), `kind` text NOT NULL, `dedupe_key` text NOT NULL, `to` text NOT NULL, `subject` text NOT NULL, `text_body` text NOT NULL, `html_body` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `last_error` text NOT NULL DEFAULT (''), `sent_at` datetime NULL, `lease_until` datetime NULL);
-- create index "emails_dedupe_key_key" to table: "emails"
CREATE UNIQUE INDEX `emails_dedupe_key_key` ON `emails` (`dedupe_key`);
-- create index "email_due" to table: "emails"
CREATE INDEX `email_due` ON `emails` (`next_attempt_at`, `id`) WHERE (next_attempt_at IS NOT NULL);
-- create "endpoints" table
CREATE TABLE `endpoints` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `project_id` integer NOT NULL, `public_id` text NOT NULL, `url` text NOT NULL, `description` text NOT NULL DEFAULT (''), `event_types` json NOT NULL, `secret` text NOT NULL, `previous_secret` text NOT NULL DEFAULT (''), `previous_secret_until` datetime NULL, `max_per_second` integer NOT NULL DEFAULT (0), `failing_since` datetime NULL, `last_success_at` datetime NULL, `paused_at` datetime NULL, `paused_reason` text NULL, `deleted_at` datetime NULL);
-- create index "endpoints_public_id_key" to table: "endpoints"
CREATE UNIQUE INDEX `endpoints_public_id_key` ON `endpoints` (`public_id`);
-- create index "endpoint_live" to table: "endpoints"
CREATE INDEX `endpoint_live` ON `endpoints` (`project_id`) WHERE (deleted_at IS NULL);
-- create "events" table
CREATE TABLE `events` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `uuid` text NOT NULL, `type` text NOT NULL, `ref` text NOT NULL DEFAULT (''), `payload` blob NOT NULL);
-- create index "events_uuid_key" to table: "events"
CREATE UNIQUE INDEX `events_uuid_key` ON `events` (`uuid`);
-- create index "event_project_id_id" to table: "events"
CREATE INDEX `event_project_id_id` ON `events` (`project_id`, `id`);
-- create index "event_project_id_created_at" to table: "events"
CREATE INDEX `event_project_id_created_at` ON `events` (`project_id`, `created_at`);
-- create index "event_created_at" to table: "events"
CREATE INDEX `event_created_at` ON `events` (`created_at`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "event_created_at" to table: "events"
DROP INDEX `event_created_at`;
-- reverse: create index "event_project_id_created_at" to table: "events"
DROP INDEX `event_project_id_created_at`;
-- reverse: create index "event_project_id_id" to table: "events"
DROP INDEX `event_project_id_id`;
-- reverse: create index "events_uuid_key" to table: "events"
DROP INDEX `events_uuid_key`;
-- reverse: create "events" table
DROP TABLE `events`;
-- reverse: create index "endpoint_live" to table: "endpoints"
DROP INDEX `endpoint_live`;
-- reverse: create index "endpoints_public_id_key" to table: "endpoints"
DROP INDEX `endpoints_public_id_key`;
-- reverse: create "endpoints" table
DROP TABLE `endpoints`;
-- reverse: create index "email_due" to table: "emails"
DROP INDEX `email_due`;
-- reverse: create index "emails_dedupe_key_key" to table: "emails"
DROP INDEX `emails_dedupe_key_key`;
-- reverse: create "emails" table
DROP TABLE `emails`;
-- reverse: create index "invoice_subscription_id" to table: "invoices"
DROP INDEX `invoice_subscription_id`;
-- reverse: create index "invoice_project_id_kind_created_at" to table: "invoices"
DROP INDEX `invoice_project_id_kind_created_at`;
-- reverse: create index "invoices_public_id_key" to table: "invoices"
DROP INDEX `invoices_public_id_key`;
-- reverse: create "new_invoices" table
DROP TABLE `new_invoices`;
-- reverse: create index "notification_endpoint" to table: "notifications"
DROP INDEX `notification_endpoint`;
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
