-- +goose Up
-- create index "notification_parked" to table: "notifications"
CREATE INDEX `notification_parked` ON `notifications` (`host`, `next_attempt_at`, `id`) WHERE ((attempts = 0) AND (lease_until IS NULL) AND (next_attempt_at IS NOT NULL));

-- +goose Down
-- reverse: create index "notification_parked" to table: "notifications"
DROP INDEX `notification_parked`;
