-- +goose Up
-- add column "landed_at" to table: "forwards"
ALTER TABLE `forwards` ADD COLUMN `landed_at` datetime NULL;

-- +goose Down
-- reverse: add column "landed_at" to table: "forwards"
ALTER TABLE `forwards` DROP COLUMN `landed_at`;
