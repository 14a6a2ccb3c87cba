-- +goose Up
-- Notifications and delivery events no longer know addresses or payments
-- (see the PostgreSQL migration of the same version). The generated table
-- rebuild is kept; its row copies were written by hand so no value is lost
-- (TestMigrationKeepsNotifications).
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_notifications" table
CREATE TABLE `new_notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `owner_id` integer NOT NULL, `service` text NOT NULL DEFAULT (''), `event` text NOT NULL DEFAULT (''), `subject` text NOT NULL DEFAULT (''), `topic` text NOT NULL DEFAULT (''), `sequence` text NULL, `host` text NOT NULL DEFAULT (''), `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signing_key` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `lease_until` datetime NULL, `lease_owner` text NULL);
-- copy rows from old table "notifications" to new temporary table "new_notifications"
-- (by hand: the owner, ticker, address and status become labels, low-level
-- callbacks are labelled 'address', and a payment's notifications keep
-- their order through a sequence derived from the payment)
INSERT INTO `new_notifications` (`id`, `created_at`, `updated_at`, `uuid`, `owner_id`, `service`, `event`, `subject`, `topic`, `sequence`, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `api_key_id`, 'address', `payment_status`, `address_in`, `ticker`, CASE WHEN `payment_id` IS NULL THEN NULL ELSE 'address-payment:' || `payment_id` END, `host`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner` FROM `notifications`;
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
-- create "new_delivery_events" table
CREATE TABLE `new_delivery_events` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `owner_id` integer NOT NULL, `uuid` text NOT NULL, `service` text NOT NULL DEFAULT (''), `event` text NOT NULL DEFAULT (''), `subject` text NOT NULL DEFAULT (''), `topic` text NOT NULL DEFAULT (''), `kind` text NOT NULL, `attempt` integer NOT NULL DEFAULT (0), `outcome` text NOT NULL DEFAULT (''), `http_status` integer NULL, `error` text NOT NULL DEFAULT (''), `delivery_status` text NOT NULL, `next_attempt_at` datetime NULL, `notification_id` integer NOT NULL);
-- copy rows from old table "delivery_events" to new temporary table "new_delivery_events"
INSERT INTO `new_delivery_events` (`id`, `created_at`, `owner_id`, `uuid`, `service`, `event`, `subject`, `topic`, `kind`, `attempt`, `outcome`, `http_status`, `error`, `delivery_status`, `next_attempt_at`, `notification_id`) SELECT `id`, `created_at`, `api_key_id`, `uuid`, 'address', `payment_status`, `address_in`, `ticker`, `kind`, `attempt`, `outcome`, `http_status`, `error`, `delivery_status`, `next_attempt_at`, `notification_id` FROM `delivery_events`;
-- drop "delivery_events" table after copying rows
DROP TABLE `delivery_events`;
-- rename temporary table "new_delivery_events" to "delivery_events"
ALTER TABLE `new_delivery_events` RENAME TO `delivery_events`;
-- create index "deliveryevent_owner_id_id" to table: "delivery_events"
CREATE INDEX `deliveryevent_owner_id_id` ON `delivery_events` (`owner_id`, `id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "deliveryevent_owner_id_id" to table: "delivery_events"
DROP INDEX `deliveryevent_owner_id_id`;
-- reverse: create "new_delivery_events" table
DROP TABLE `new_delivery_events`;
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
