-- +goose Up
-- create index "notification_event" to table: "notifications"
CREATE INDEX `notification_event` ON `notifications` (`event_id`) WHERE (event_id IS NOT NULL);

-- +goose Down
-- reverse: create index "notification_event" to table: "notifications"
DROP INDEX `notification_event`;
