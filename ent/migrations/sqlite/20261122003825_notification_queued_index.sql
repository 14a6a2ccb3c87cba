-- +goose Up
-- drop index "notification_status" from table: "notifications"
DROP INDEX `notification_status`;
-- create index "notification_queued" to table: "notifications"
CREATE INDEX `notification_queued` ON `notifications` (`status`) WHERE (next_attempt_at IS NOT NULL);

-- +goose Down
-- reverse: create index "notification_queued" to table: "notifications"
DROP INDEX `notification_queued`;
-- reverse: drop index "notification_status" from table: "notifications"
CREATE INDEX `notification_status` ON `notifications` (`status`);
