-- +goose Up
-- modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" ADD COLUMN "committed_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "idempotency_keys" table
ALTER TABLE "idempotency_keys" DROP COLUMN "committed_at";
