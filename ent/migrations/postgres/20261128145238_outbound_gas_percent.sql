-- +goose Up
-- modify "outbounds" table
ALTER TABLE "outbounds" ADD COLUMN "gas_percent" bigint NOT NULL DEFAULT 0;

-- +goose Down
-- reverse: modify "outbounds" table
ALTER TABLE "outbounds" DROP COLUMN "gas_percent";
