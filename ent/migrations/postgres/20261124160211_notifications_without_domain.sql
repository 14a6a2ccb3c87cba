-- +goose Up
-- Notifications and delivery events no longer know addresses or payments:
-- the owner, what a notification reports and what it is about become
-- labels its producer chose. Existing rows keep their values (renamed
-- columns), low-level callbacks are labelled service 'address', and a
-- payment's notifications keep their order through a sequence derived from
-- the payment. Written by hand (the generator would drop the columns and
-- their data); checked against the schema by TestMigrationsMatchSchema and
-- against data written by the previous schema by TestMigrationKeepsNotifications.

-- modify "delivery_events" table
ALTER TABLE "delivery_events" RENAME COLUMN "api_key_id" TO "owner_id";
ALTER TABLE "delivery_events" RENAME COLUMN "ticker" TO "topic";
ALTER TABLE "delivery_events" RENAME COLUMN "address_in" TO "subject";
ALTER TABLE "delivery_events" RENAME COLUMN "payment_status" TO "event";
ALTER TABLE "delivery_events" ALTER COLUMN "topic" SET DEFAULT '', ALTER COLUMN "subject" SET DEFAULT '', ALTER COLUMN "event" SET DEFAULT '',
  ADD COLUMN "service" character varying NOT NULL DEFAULT 'address';
ALTER TABLE "delivery_events" ALTER COLUMN "service" SET DEFAULT '';
ALTER INDEX "deliveryevent_api_key_id_id" RENAME TO "deliveryevent_owner_id_id";

-- modify "notifications" table
ALTER TABLE "notifications" DROP CONSTRAINT "notifications_api_keys_notifications";
ALTER TABLE "notifications" RENAME COLUMN "api_key_id" TO "owner_id";
ALTER TABLE "notifications" RENAME COLUMN "ticker" TO "topic";
ALTER TABLE "notifications" RENAME COLUMN "address_in" TO "subject";
ALTER TABLE "notifications" RENAME COLUMN "payment_status" TO "event";
ALTER TABLE "notifications" ALTER COLUMN "event" SET DEFAULT '',
  ADD COLUMN "service" character varying NOT NULL DEFAULT 'address',
  ADD COLUMN "sequence" character varying NULL,
  ADD COLUMN "signing_key" character varying NOT NULL DEFAULT '';
ALTER TABLE "notifications" ALTER COLUMN "service" SET DEFAULT '';
UPDATE "notifications" SET "sequence" = 'address-payment:' || "payment_id" WHERE "payment_id" IS NOT NULL;
-- drops the foreign keys to addresses and payments and the index
-- notification_payment_undelivered with them
ALTER TABLE "notifications" DROP COLUMN "address_id", DROP COLUMN "payment_id";
-- create index "notification_owner_id_subject" to table: "notifications"
CREATE INDEX "notification_owner_id_subject" ON "notifications" ("owner_id", "subject");
-- create index "notification_sequence_undelivered" to table: "notifications"
CREATE INDEX "notification_sequence_undelivered" ON "notifications" ("sequence") WHERE ((sequence IS NOT NULL) AND (next_attempt_at IS NOT NULL));

-- +goose Down
DROP INDEX "notification_sequence_undelivered";
DROP INDEX "notification_owner_id_subject";
ALTER TABLE "notifications" ADD COLUMN "address_id" bigint NULL, ADD COLUMN "payment_id" bigint NULL;
UPDATE "notifications" AS n SET "address_id" = a."id" FROM "addresses" AS a WHERE a."address_in" = n."subject" AND n."service" = 'address';
UPDATE "notifications" SET "payment_id" = substring("sequence" from 'address-payment:(\d+)')::bigint WHERE "sequence" LIKE 'address-payment:%';
DELETE FROM "notifications" WHERE "address_id" IS NULL;
ALTER TABLE "notifications" ALTER COLUMN "address_id" SET NOT NULL,
  DROP COLUMN "signing_key", DROP COLUMN "sequence", DROP COLUMN "service",
  ALTER COLUMN "event" DROP DEFAULT;
ALTER TABLE "notifications" RENAME COLUMN "event" TO "payment_status";
ALTER TABLE "notifications" RENAME COLUMN "subject" TO "address_in";
ALTER TABLE "notifications" RENAME COLUMN "topic" TO "ticker";
ALTER TABLE "notifications" RENAME COLUMN "owner_id" TO "api_key_id";
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_api_keys_notifications" FOREIGN KEY ("api_key_id") REFERENCES "api_keys" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION,
  ADD CONSTRAINT "notifications_addresses_notifications" FOREIGN KEY ("address_id") REFERENCES "addresses" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION,
  ADD CONSTRAINT "notifications_payments_notifications" FOREIGN KEY ("payment_id") REFERENCES "payments" ("id") ON UPDATE NO ACTION ON DELETE SET NULL;
CREATE INDEX "notification_payment_undelivered" ON "notifications" ("payment_id") WHERE ((payment_id IS NOT NULL) AND (next_attempt_at IS NOT NULL));
ALTER INDEX "deliveryevent_owner_id_id" RENAME TO "deliveryevent_api_key_id_id";
ALTER TABLE "delivery_events" DROP COLUMN "service",
  ALTER COLUMN "topic" DROP DEFAULT, ALTER COLUMN "subject" DROP DEFAULT, ALTER COLUMN "event" DROP DEFAULT;
ALTER TABLE "delivery_events" RENAME COLUMN "event" TO "payment_status";
ALTER TABLE "delivery_events" RENAME COLUMN "subject" TO "address_in";
ALTER TABLE "delivery_events" RENAME COLUMN "topic" TO "ticker";
ALTER TABLE "delivery_events" RENAME COLUMN "owner_id" TO "api_key_id";
