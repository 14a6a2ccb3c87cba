-- +goose Up
-- add column "last_used_at" to table: "api_keys"
ALTER TABLE `api_keys` ADD COLUMN `last_used_at` datetime NULL;

-- +goose Down
-- reverse: add column "last_used_at" to table: "api_keys"
ALTER TABLE `api_keys` DROP COLUMN `last_used_at`;
