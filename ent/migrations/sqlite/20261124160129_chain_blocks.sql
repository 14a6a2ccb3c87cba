-- +goose Up
-- create "chain_blocks" table
CREATE TABLE `chain_blocks` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `ticker` text NOT NULL, `height` integer NOT NULL, `hash` text NOT NULL);
-- create index "chainblock_ticker_height" to table: "chain_blocks"
CREATE UNIQUE INDEX `chainblock_ticker_height` ON `chain_blocks` (`ticker`, `height`);
-- create "watched_transfers" table
CREATE TABLE `watched_transfers` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `ticker` text NOT NULL, `address_in` text NOT NULL, `txid` text NOT NULL, `output_index` integer NOT NULL DEFAULT (0), `value_coin` text NOT NULL, `height` integer NOT NULL DEFAULT (0), `due` integer NULL, `payment_id` integer NULL);
-- create index "watchedtransfer_ticker_address_in_txid_output_index" to table: "watched_transfers"
CREATE UNIQUE INDEX `watchedtransfer_ticker_address_in_txid_output_index` ON `watched_transfers` (`ticker`, `address_in`, `txid`, `output_index`);
-- create index "watchedtransfer_ticker_due" to table: "watched_transfers"
CREATE INDEX `watchedtransfer_ticker_due` ON `watched_transfers` (`ticker`, `due`);
-- create index "watchedtransfer_ticker_height" to table: "watched_transfers"
CREATE INDEX `watchedtransfer_ticker_height` ON `watched_transfers` (`ticker`, `height`);
-- create index "watchedtransfer_payment_id" to table: "watched_transfers"
CREATE INDEX `watchedtransfer_payment_id` ON `watched_transfers` (`payment_id`);

-- +goose Down
-- reverse: create index "watchedtransfer_payment_id" to table: "watched_transfers"
DROP INDEX `watchedtransfer_payment_id`;
-- reverse: create index "watchedtransfer_ticker_height" to table: "watched_transfers"
DROP INDEX `watchedtransfer_ticker_height`;
-- reverse: create index "watchedtransfer_ticker_due" to table: "watched_transfers"
DROP INDEX `watchedtransfer_ticker_due`;
-- reverse: create index "watchedtransfer_ticker_address_in_txid_output_index" to table: "watched_transfers"
DROP INDEX `watchedtransfer_ticker_address_in_txid_output_index`;
-- reverse: create "watched_transfers" table
DROP TABLE `watched_transfers`;
-- reverse: create index "chainblock_ticker_height" to table: "chain_blocks"
DROP INDEX `chainblock_ticker_height`;
-- reverse: create "chain_blocks" table
DROP TABLE `chain_blocks`;
