-- +goose Up
-- create index "outbound_ticker_txid" to table: "outbounds"
CREATE INDEX "outbound_ticker_txid" ON "outbounds" ("ticker", "txid");

-- +goose Down
-- reverse: create index "outbound_ticker_txid" to table: "outbounds"
DROP INDEX "outbound_ticker_txid";
