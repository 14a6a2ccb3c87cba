-- +goose Up
-- modify "delivery_attempts" table
ALTER TABLE "delivery_attempts" DROP CONSTRAINT "delivery_attempts_notifications_delivery_attempts";
-- modify "delivery_events" table
ALTER TABLE "delivery_events" DROP CONSTRAINT "delivery_events_notifications_events";

-- +goose Down
-- reverse: modify "delivery_events" table
ALTER TABLE "delivery_events" ADD CONSTRAINT "delivery_events_notifications_events" FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
-- reverse: modify "delivery_attempts" table
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_notifications_delivery_attempts" FOREIGN KEY ("notification_id") REFERENCES "notifications" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION;
