-- +goose Up
-- modify "api_keys" table
ALTER TABLE "api_keys" ADD COLUMN "operator" boolean NOT NULL DEFAULT false;
-- modify "forwards" table
ALTER TABLE "forwards" ADD COLUMN "held" boolean NOT NULL DEFAULT false;

-- +goose Down
-- reverse: modify "forwards" table
ALTER TABLE "forwards" DROP COLUMN "held";
-- reverse: modify "api_keys" table
ALTER TABLE "api_keys" DROP COLUMN "operator";
