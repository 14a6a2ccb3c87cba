-- +goose Up
-- drop index "notification_api_key_id_created_at" from table: "notifications"
DROP INDEX "notification_api_key_id_created_at";
-- drop index "notification_due" from table: "notifications"
DROP INDEX "notification_due";
-- create index "notification_due" to table: "notifications"
CREATE INDEX "notification_due" ON "notifications" ("next_attempt_at", "id") WHERE (next_attempt_at IS NOT NULL);

-- +goose Down
-- reverse: create index "notification_due" to table: "notifications"
DROP INDEX "notification_due";
-- reverse: drop index "notification_due" from table: "notifications"
CREATE INDEX "notification_due" ON "notifications" ("next_attempt_at", "id") WHERE ((status)::text = ANY (ARRAY[('pending'::character varying)::text, ('retrying'::character varying)::text]));
-- reverse: drop index "notification_api_key_id_created_at" from table: "notifications"
CREATE INDEX "notification_api_key_id_created_at" ON "notifications" ("api_key_id", "created_at");
