-- +goose Up
-- drop index "notification_status_next_attempt_at" from table: "notifications"
DROP INDEX "notification_status_next_attempt_at";
-- create index "notification_due" to table: "notifications"
CREATE INDEX "notification_due" ON "notifications" ("next_attempt_at", "id") WHERE ((status)::text = ANY ((ARRAY['pending'::character varying, 'retrying'::character varying])::text[]));
-- create index "notification_status" to table: "notifications"
CREATE INDEX "notification_status" ON "notifications" ("status");

-- +goose Down
-- reverse: create index "notification_status" to table: "notifications"
DROP INDEX "notification_status";
-- reverse: create index "notification_due" to table: "notifications"
DROP INDEX "notification_due";
-- reverse: drop index "notification_status_next_attempt_at" from table: "notifications"
CREATE INDEX "notification_status_next_attempt_at" ON "notifications" ("status", "next_attempt_at");
