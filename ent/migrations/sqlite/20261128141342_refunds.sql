-- +goose Up
-- create "refunds" table
CREATE TABLE `refunds` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `updated_at` datetime NOT NULL, `uuid` text NOT NULL, `project_id` integer NOT NULL, `invoice_id` integer NOT NULL, `payment_id` integer NOT NULL, `ticker` text NOT NULL, `address` text NOT NULL, `value` text NOT NULL, `status` text NOT NULL DEFAULT ('pending'), `payout_id` integer NULL, `txid` text NOT NULL DEFAULT (''), `error` text NOT NULL DEFAULT (''));
-- create index "refunds_uuid_key" to table: "refunds"
CREATE UNIQUE INDEX `refunds_uuid_key` ON `refunds` (`uuid`);
-- create index "refund_payment_id" to table: "refunds"
CREATE INDEX `refund_payment_id` ON `refunds` (`payment_id`);
-- create index "refund_payout_id" to table: "refunds"
CREATE INDEX `refund_payout_id` ON `refunds` (`payout_id`);
-- create index "refund_project_id_id" to table: "refunds"
CREATE INDEX `refund_project_id_id` ON `refunds` (`project_id`, `id`);

-- +goose Down
-- reverse: create index "refund_project_id_id" to table: "refunds"
DROP INDEX `refund_project_id_id`;
-- reverse: create index "refund_payout_id" to table: "refunds"
DROP INDEX `refund_payout_id`;
-- reverse: create index "refund_payment_id" to table: "refunds"
DROP INDEX `refund_payment_id`;
-- reverse: create index "refunds_uuid_key" to table: "refunds"
DROP INDEX `refunds_uuid_key`;
-- reverse: create "refunds" table
DROP TABLE `refunds`;
