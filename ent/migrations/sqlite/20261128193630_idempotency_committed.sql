-- +goose Up
-- add column "committed_at" to table: "idempotency_keys"
ALTER TABLE `idempotency_keys` ADD COLUMN `committed_at` datetime NULL;

-- +goose Down
-- reverse: add column "committed_at" to table: "idempotency_keys"
ALTER TABLE `idempotency_keys` DROP COLUMN `committed_at`;
