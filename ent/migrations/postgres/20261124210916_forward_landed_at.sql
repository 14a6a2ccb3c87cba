-- +goose Up
-- modify "forwards" table
ALTER TABLE "forwards" ADD COLUMN "landed_at" timestamptz NULL;

-- +goose Down
-- reverse: modify "forwards" table
ALTER TABLE "forwards" DROP COLUMN "landed_at";
