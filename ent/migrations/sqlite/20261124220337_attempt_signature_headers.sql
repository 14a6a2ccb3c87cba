-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_delivery_attempts" table
CREATE TABLE `new_delivery_attempts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `number` integer NOT NULL, `started_at` datetime NOT NULL, `finished_at` datetime NULL, `request_method` text NOT NULL, `request_url` text NOT NULL, `response_status` integer NULL, `response_body` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''), `outcome` text NOT NULL DEFAULT ('in_flight'), `duration_ms` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `signature_headers` text NOT NULL DEFAULT (''), `notification_id` integer NOT NULL);
-- copy rows from old table "delivery_attempts" to new temporary table "new_delivery_attempts"
INSERT INTO `new_delivery_attempts` (`id`, `number`, `started_at`, `finished_at`, `request_method`, `request_url`, `response_status`, `response_body`, `error`, `outcome`, `duration_ms`, `next_attempt_at`, `notification_id`) SELECT `id`, `number`, `started_at`, `finished_at`, `request_method`, `request_url`, `response_status`, `response_body`, `error`, `outcome`, `duration_ms`, `next_attempt_at`, `notification_id` FROM `delivery_attempts`;
-- drop "delivery_attempts" table after copying rows
DROP TABLE `delivery_attempts`;
-- rename temporary table "new_delivery_attempts" to "delivery_attempts"
ALTER TABLE `new_delivery_attempts` RENAME TO `delivery_attempts`;
-- create index "deliveryattempt_notification_id_number" to table: "delivery_attempts"
CREATE UNIQUE INDEX `deliveryattempt_notification_id_number` ON `delivery_attempts` (`notification_id`, `number`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "deliveryattempt_notification_id_number" to table: "delivery_attempts"
DROP INDEX `deliveryattempt_notification_id_number`;
-- reverse: create "new_delivery_attempts" table
DROP TABLE `new_delivery_attempts`;
