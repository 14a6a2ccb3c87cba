-- +goose Up
-- create "api_keys" table
CREATE TABLE `api_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `name` text NOT NULL, `prefix` text NOT NULL, `hash` text NOT NULL, `revoked_at` datetime NULL);
-- create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_hash_key` ON `api_keys` (`hash`);
-- create "addresses" table
CREATE TABLE `addresses` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `ticker` text NOT NULL, `family` text NOT NULL, `address_in` text NOT NULL, `derivation_index` integer NOT NULL, `callback_url` text NOT NULL, `callback_key` text NOT NULL, `destinations` json NOT NULL, `post` bool NOT NULL DEFAULT (false), `json` bool NOT NULL DEFAULT (false), `convert` bool NOT NULL DEFAULT (false), `custom_params` json NOT NULL, `required_confirmations` integer NOT NULL, `priority` text NOT NULL DEFAULT ('default'), `api_key_id` integer NOT NULL, CONSTRAINT `addresses_api_keys_addresses` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- create index "addresses_address_in_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_address_in_key` ON `addresses` (`address_in`);
-- create index "addresses_derivation_index_key" to table: "addresses"
CREATE UNIQUE INDEX `addresses_derivation_index_key` ON `addresses` (`derivation_index`);
-- create index "address_api_key_id_ticker_callback_key" to table: "addresses"
CREATE UNIQUE INDEX `address_api_key_id_ticker_callback_key` ON `addresses` (`api_key_id`, `ticker`, `callback_key`);
-- create "delivery_attempts" table
CREATE TABLE `delivery_attempts` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `number` integer NOT NULL, `started_at` datetime NOT NULL, `finished_at` datetime NULL, `request_method` text NOT NULL, `request_url` text NOT NULL, `response_status` integer NULL, `response_body` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''), `outcome` text NOT NULL DEFAULT ('in_flight'), `duration_ms` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `notification_id` integer NOT NULL, CONSTRAINT `delivery_attempts_notifications_delivery_attempts` FOREIGN KEY (`notification_id`) REFERENCES `notifications` (`id`) ON DELETE NO ACTION);
-- create index "deliveryattempt_notification_id_number" to table: "delivery_attempts"
CREATE UNIQUE INDEX `deliveryattempt_notification_id_number` ON `delivery_attempts` (`notification_id`, `number`);
-- create "notifications" table
CREATE TABLE `notifications` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `payment_status` text NOT NULL, `method` text NOT NULL, `url` text NOT NULL, `body` blob NOT NULL, `content_type` text NOT NULL DEFAULT (''), `signature_scheme` text NOT NULL DEFAULT (''), `signature` text NOT NULL DEFAULT (''), `status` text NOT NULL DEFAULT ('pending'), `attempts` integer NOT NULL DEFAULT (0), `next_attempt_at` datetime NULL, `expires_at` datetime NOT NULL, `lease_until` datetime NULL, `lease_owner` text NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, `payment_id` integer NULL, CONSTRAINT `notifications_api_keys_notifications` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_addresses_notifications` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION, CONSTRAINT `notifications_payments_notifications` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE SET NULL);
-- create index "notifications_uuid_key" to table: "notifications"
CREATE UNIQUE INDEX `notifications_uuid_key` ON `notifications` (`uuid`);
-- create index "notification_status_next_attempt_at" to table: "notifications"
CREATE INDEX `notification_status_next_attempt_at` ON `notifications` (`status`, `next_attempt_at`);
-- create index "notification_api_key_id_created_at" to table: "notifications"
CREATE INDEX `notification_api_key_id_created_at` ON `notifications` (`api_key_id`, `created_at`);
-- create "payments" table
CREATE TABLE `payments` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `txid_in` text NOT NULL, `output_index` integer NOT NULL DEFAULT (0), `value_coin` text NOT NULL, `confirmations` integer NOT NULL DEFAULT (0), `status` text NOT NULL DEFAULT ('pending'), `txid_out` text NULL, `value_forwarded_coin` text NULL, `fee_coin` text NULL, `network_fee` text NULL, `credited_at` datetime NULL, `forwarded_at` datetime NULL, `api_key_id` integer NOT NULL, `address_id` integer NOT NULL, CONSTRAINT `payments_api_keys_payments` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION, CONSTRAINT `payments_addresses_payments` FOREIGN KEY (`address_id`) REFERENCES `addresses` (`id`) ON DELETE NO ACTION);
-- create index "payment_address_id_txid_in_output_index" to table: "payments"
CREATE UNIQUE INDEX `payment_address_id_txid_in_output_index` ON `payments` (`address_id`, `txid_in`, `output_index`);
-- create index "payment_api_key_id_created_at" to table: "payments"
CREATE INDEX `payment_api_key_id_created_at` ON `payments` (`api_key_id`, `created_at`);
-- create "signing_keys" table
CREATE TABLE `signing_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `algorithm` text NOT NULL, `private_pem` text NOT NULL, `public_pem` text NOT NULL, `active` bool NOT NULL DEFAULT (false));

-- +goose Down
-- reverse: create "signing_keys" table
DROP TABLE `signing_keys`;
-- reverse: create index "payment_api_key_id_created_at" to table: "payments"
DROP INDEX `payment_api_key_id_created_at`;
-- reverse: create index "payment_address_id_txid_in_output_index" to table: "payments"
DROP INDEX `payment_address_id_txid_in_output_index`;
-- reverse: create "payments" table
DROP TABLE `payments`;
-- reverse: create index "notification_api_key_id_created_at" to table: "notifications"
DROP INDEX `notification_api_key_id_created_at`;
-- reverse: create index "notification_status_next_attempt_at" to table: "notifications"
DROP INDEX `notification_status_next_attempt_at`;
-- reverse: create index "notifications_uuid_key" to table: "notifications"
DROP INDEX `notifications_uuid_key`;
-- reverse: create "notifications" table
DROP TABLE `notifications`;
-- reverse: create index "deliveryattempt_notification_id_number" to table: "delivery_attempts"
DROP INDEX `deliveryattempt_notification_id_number`;
-- reverse: create "delivery_attempts" table
DROP TABLE `delivery_attempts`;
-- reverse: create index "address_api_key_id_ticker_callback_key" to table: "addresses"
DROP INDEX `address_api_key_id_ticker_callback_key`;
-- reverse: create index "addresses_derivation_index_key" to table: "addresses"
DROP INDEX `addresses_derivation_index_key`;
-- reverse: create index "addresses_address_in_key" to table: "addresses"
DROP INDEX `addresses_address_in_key`;
-- reverse: create "addresses" table
DROP TABLE `addresses`;
-- reverse: create index "api_keys_hash_key" to table: "api_keys"
DROP INDEX `api_keys_hash_key`;
-- reverse: create "api_keys" table
DROP TABLE `api_keys`;
