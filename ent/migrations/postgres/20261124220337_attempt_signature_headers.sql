-- +goose Up
-- modify "delivery_attempts" table
ALTER TABLE "delivery_attempts" ADD COLUMN "signature_headers" text NOT NULL DEFAULT '';

-- +goose Down
-- reverse: modify "delivery_attempts" table
ALTER TABLE "delivery_attempts" DROP COLUMN "signature_headers";
