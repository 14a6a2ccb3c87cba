-- +goose Up
-- drop index "address_api_key_id_ticker_callback_key" from table: "addresses"
DROP INDEX "address_api_key_id_ticker_callback_key";
-- drop index "address_project_id_ticker_callback_key" from table: "addresses"
DROP INDEX "address_project_id_ticker_callback_key";
-- create index "address_project_id_ticker_callback_key" to table: "addresses"
CREATE UNIQUE INDEX "address_project_id_ticker_callback_key" ON "addresses" ("project_id", "ticker", "callback_key");
-- modify "forwards" table
ALTER TABLE "forwards" DROP COLUMN "signed_tx", DROP COLUMN "landed_at";

-- +goose Down
-- reverse: modify "forwards" table
ALTER TABLE "forwards" ADD COLUMN "landed_at" timestamptz NULL, ADD COLUMN "signed_tx" bytea NULL;
-- reverse: create index "address_project_id_ticker_callback_key" to table: "addresses"
DROP INDEX "address_project_id_ticker_callback_key";
-- reverse: drop index "address_project_id_ticker_callback_key" from table: "addresses"
CREATE INDEX "address_project_id_ticker_callback_key" ON "addresses" ("project_id", "ticker", "callback_key");
-- reverse: drop index "address_api_key_id_ticker_callback_key" from table: "addresses"
CREATE UNIQUE INDEX "address_api_key_id_ticker_callback_key" ON "addresses" ("api_key_id", "ticker", "callback_key");
