-- +goose Up
-- modify "addresses" table
ALTER TABLE "addresses" ADD COLUMN "late_hold_from" timestamptz NULL;
-- modify "invoices" table
ALTER TABLE "invoices" ADD COLUMN "underpaid_tolerance" numeric(38,18) NOT NULL DEFAULT 0, ADD COLUMN "late_payments" character varying NOT NULL DEFAULT 'credit';
-- modify "projects" table
ALTER TABLE "projects" ADD COLUMN "underpaid_tolerance" numeric(38,18) NOT NULL DEFAULT 0, ADD COLUMN "late_payments" character varying NOT NULL DEFAULT 'credit';

-- +goose Down
-- reverse: modify "projects" table
ALTER TABLE "projects" DROP COLUMN "late_payments", DROP COLUMN "underpaid_tolerance";
-- reverse: modify "invoices" table
ALTER TABLE "invoices" DROP COLUMN "late_payments", DROP COLUMN "underpaid_tolerance";
-- reverse: modify "addresses" table
ALTER TABLE "addresses" DROP COLUMN "late_hold_from";
