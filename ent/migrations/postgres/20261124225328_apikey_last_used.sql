-- +goose Up
-- modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "api_keys" table
ALTER TABLE "api_keys" DROP COLUMN "last_used_at";
