-- +goose Up
-- modify "addresses" table
ALTER TABLE "addresses" ADD COLUMN "multi_token" boolean NOT NULL DEFAULT false, ADD COLUMN "multi_chain" boolean NOT NULL DEFAULT false;

-- +goose Down
-- reverse: modify "addresses" table
ALTER TABLE "addresses" DROP COLUMN "multi_chain", DROP COLUMN "multi_token";
