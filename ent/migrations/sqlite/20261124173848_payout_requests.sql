-- +goose Up
-- create "payout_requests" table
CREATE TABLE `payout_requests` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `ticker` text NOT NULL, `address` text NOT NULL, `value` text NOT NULL, `status` text NOT NULL DEFAULT ('requested'), `api_key_id` integer NOT NULL, CONSTRAINT `payout_requests_api_keys_api_key` FOREIGN KEY (`api_key_id`) REFERENCES `api_keys` (`id`) ON DELETE NO ACTION);
-- create index "payout_requests_uuid_key" to table: "payout_requests"
CREATE UNIQUE INDEX `payout_requests_uuid_key` ON `payout_requests` (`uuid`);
-- create index "payoutrequest_api_key_id_created_at" to table: "payout_requests"
CREATE INDEX `payoutrequest_api_key_id_created_at` ON `payout_requests` (`api_key_id`, `created_at`);

-- +goose Down
-- reverse: create index "payoutrequest_api_key_id_created_at" to table: "payout_requests"
DROP INDEX `payoutrequest_api_key_id_created_at`;
-- reverse: create index "payout_requests_uuid_key" to table: "payout_requests"
DROP INDEX `payout_requests_uuid_key`;
-- reverse: create "payout_requests" table
DROP TABLE `payout_requests`;
