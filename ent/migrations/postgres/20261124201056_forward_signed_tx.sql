-- +goose Up
-- modify "forwards" table
ALTER TABLE "forwards" ADD COLUMN "signed_tx" bytea NULL;

-- +goose Down
-- reverse: modify "forwards" table
ALTER TABLE "forwards" DROP COLUMN "signed_tx";
