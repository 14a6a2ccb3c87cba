-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_notifications" table
CREATE TABLE `new_notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `ticker` text NOT NULL DEFAULT (''), `address_in` text NOT NULL DEFAULT (''), `host` text NOT NULL DEFAULT (''), `payment_status` text NOT NULL, `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `lease_until` datetime NULL, `lease_owner` text NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, `payment_id` integer NULL, CONSTRAINT `notifications_api_keys_notifications` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_addresses_notifications` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_payments_notifications` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE SET NULL);
-- copy rows from old table "notifications" to new temporary table "new_notifications"
INSERT INTO `new_notifications` (`id`, `created_at`, `updated_at`, `uuid`, `ticker`, `address_in`, `host`, `payment_status`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`, `api_key_id`, `address_id`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `uuid`, `ticker`, `address_in`, `host`, `payment_status`, `method`, `url`, `body`, `content_type`, `signature_scheme`, `signature`, `status`, `attempts`, `next_attempt_at`, `expires_at`, `lease_until`, `lease_owner`, `api_key_id`, `address_id`, `payment_id` FROM `notifications`;
-- drop "notifications" table after copying rows
DROP TABLE `notifications`;
-- rename temporary table "new_notifications" to "notifications"
ALTER TABLE `new_notifications` RENAME TO `notifications`;
-- create index "notifications_uuid_key" to table: "notifications"
CREATE UNIQUE INDEX `notifications_uuid_key` ON `notifications` (`uuid`);
-- create index "notification_due" to table: "notifications"
CREATE INDEX `notification_due` ON `notifications` (`next_attempt_at`, `id`) WHERE (next_attempt_at IS NOT NULL);
-- create index "notification_status" to table: "notifications"
CREATE INDEX `notification_status` ON `notifications` (`status`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "notification_status" to table: "notifications"
DROP INDEX `notification_status`;
-- reverse: create index "notification_due" to table: "notifications"
DROP INDEX `notification_due`;
-- reverse: create index "notifications_uuid_key" to table: "notifications"
DROP INDEX `notifications_uuid_key`;
-- reverse: create "new_notifications" table
DROP TABLE `new_notifications`;
