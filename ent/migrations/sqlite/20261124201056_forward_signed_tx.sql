-- +goose Up
-- add column "signed_tx" to table: "forwards"
ALTER TABLE `forwards` ADD COLUMN `signed_tx` blob NULL;

-- +goose Down
-- reverse: add column "signed_tx" to table: "forwards"
ALTER TABLE `forwards` DROP COLUMN `signed_tx`;
