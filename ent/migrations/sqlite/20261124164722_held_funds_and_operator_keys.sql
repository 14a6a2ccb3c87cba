-- +goose Up
-- disable the enforcement of foreign-keys constraints
PRAGMA foreign_keys = off;
-- create "new_api_keys" table
CREATE TABLE `new_api_keys` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `name` text NOT NULL, `prefix` text NOT NULL, `hash` text NOT NULL, `revoked_at` datetime NULL, `operator` bool NOT NULL DEFAULT (false));
-- copy rows from old table "api_keys" to new temporary table "new_api_keys"
INSERT INTO `new_api_keys` (`id`, `created_at`, `name`, `prefix`, `hash`, `revoked_at`) SELECT `id`, `created_at`, `name`, `prefix`, `hash`, `revoked_at` FROM `api_keys`;
-- drop "api_keys" table after copying rows
DROP TABLE `api_keys`;
-- rename temporary table "new_api_keys" to "api_keys"
ALTER TABLE `new_api_keys` RENAME TO `api_keys`;
-- create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX `api_keys_hash_key` ON `api_keys` (`hash`);
-- create "new_forwards" table
CREATE TABLE `new_forwards` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `intent_id` text NOT NULL, `status` text NOT NULL DEFAULT ('intent'), `outputs` json NOT NULL, `fee_coin` text NOT NULL, `network_fee` text NOT NULL, `value_forwarded_coin` text NOT NULL, `txid_out` text NOT NULL DEFAULT (''), `held` bool NOT NULL DEFAULT (false), `payment_id` integer NOT NULL, CONSTRAINT `forwards_payments_forward` FOREIGN KEY (`payment_id`) REFERENCES `payments` (`id`) ON DELETE NO ACTION);
-- copy rows from old table "forwards" to new temporary table "new_forwards"
INSERT INTO `new_forwards` (`id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `payment_id`) SELECT `id`, `created_at`, `updated_at`, `intent_id`, `status`, `outputs`, `fee_coin`, `network_fee`, `value_forwarded_coin`, `txid_out`, `payment_id` FROM `forwards`;
-- drop "forwards" table after copying rows
DROP TABLE `forwards`;
-- rename temporary table "new_forwards" to "forwards"
ALTER TABLE `new_forwards` RENAME TO `forwards`;
-- create index "forwards_intent_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_intent_id_key` ON `forwards` (`intent_id`);
-- create index "forwards_payment_id_key" to table: "forwards"
CREATE UNIQUE INDEX `forwards_payment_id_key` ON `forwards` (`payment_id`);
-- enable back the enforcement of foreign-keys constraints
PRAGMA foreign_keys = on;

-- +goose Down
-- reverse: create index "forwards_payment_id_key" to table: "forwards"
DROP INDEX `forwards_payment_id_key`;
-- reverse: create index "forwards_intent_id_key" to table: "forwards"
DROP INDEX `forwards_intent_id_key`;
-- reverse: create "new_forwards" table
DROP TABLE `new_forwards`;
-- reverse: create index "api_keys_hash_key" to table: "api_keys"
DROP INDEX `api_keys_hash_key`;
-- reverse: create "new_api_keys" table
DROP TABLE `new_api_keys`;
