-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_notifications" table
CREATE TABLE `new_notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `ticker` text NOT NULL DEFAULT (''), `address_in` text NOT NULL DEFAULT (''), `host` text NOT NULL DEFAULT (''), `payment_status` text NOT NULL, `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `lease_until` datetime NULL, `lease_owner` text NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, `payment_id` integer NULL, CONSTRAINT `notifications_api_keys_notifications` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_addresses_notifications` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_payments_notifications` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE SET NULL);
-- copy rows from old table "notifications" to new temporary table "new_notifications"
INSERT INTO `new_notifications` (`id`, `created_at`, `updated_at`, `uuid`, `payment_status`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`, `api_key_id`, `address_id`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `payment_status`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`, `api_key_id`, `address_id`, `payment_id` FROM `notifications`;
-- drop "notifications" table after copying rows
DROP TABLE `notifications`;
-- rename temporary table "new_notifications" to "notifications"
ALTER TABLE `new_notifications` RENAME TO `notifications`;
-- create index "notifications_uuid_key" to table: "notifications"
CREATE UNIQUE INDEX `notifications_uuid_key` ON `notifications` (`uuid`);
-- create index "notification_status_next_attempt_at" to table: "notifications"
CREATE INDEX `notification_status_next_attempt_at` ON `notifications` (`status`, `next_attempt_at`);
-- create index "notification_api_key_id_created_at" to table: "notifications"
CREATE INDEX `notification_api_key_id_created_at` ON `notifications` (`api_key_id`, `created_at`);
-- create "delivery_events" table
CREATE TABLE `delivery_events` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `api_key_id` integer NOT NULL, `uuid` text NOT NULL, `ticker` text NOT NULL, `address_in` text NOT NULL, `payment_status` text NOT NULL, `kind` text NOT NULL, `attempt` integer NOT NULL DEFAULT (0), `outcome` text NOT NULL DEFAULT (''), `http_status` integer NULL, `error` text NOT NULL DEFAULT (''), `delivery_status` text NOT NULL, `next_attempt_at` datetime NULL, `notification_id` integer NOT NULL, CONSTRAINT `delivery_events_notifications_events` FOREIGN KEY (`notification_id`) REFERENCES `notifications` (`id`) ON DELETE NO ACTION);
-- create index "deliveryevent_api_key_id_id" to table: "delivery_events"
CREATE INDEX `deliveryevent_api_key_id_id` ON `delivery_events` (`api_key_id`, `id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "deliveryevent_api_key_id_id" to table: "delivery_events"
DROP INDEX `deliveryevent_api_key_id_id`;
-- reverse: create "delivery_events" table
DROP TABLE `delivery_events`;
-- reverse: create index "notification_api_key_id_created_at" to table: "notifications"
DROP INDEX `notification_api_key_id_created_at`;
-- reverse: create index "notification_status_next_attempt_at" to table: "notifications"
DROP INDEX `notification_status_next_attempt_at`;
-- reverse: create index "notifications_uuid_key" to table: "notifications"
DROP INDEX `notifications_uuid_key`;
-- reverse: create "new_notifications" table
DROP TABLE `new_notifications`;
