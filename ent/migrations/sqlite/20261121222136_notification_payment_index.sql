-- +goose Up
-- create index "notification_payment_undelivered" to table: "notifications"
CREATE INDEX `notification_payment_undelivered` ON `notifications` (`payment_id`) WHERE ((payment_id IS NOT NULL) AND (next_attempt_at IS NOT NULL));

-- +goose Down
-- reverse: create index "notification_payment_undelivered" to table: "notifications"
DROP INDEX `notification_payment_undelivered`;
