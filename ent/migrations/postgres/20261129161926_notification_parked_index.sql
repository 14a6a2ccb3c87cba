-- +goose NO TRANSACTION
-- +goose Up
-- The notification queue can hold millions of rows: the index is built
-- without blocking deliveries (CONCURRENTLY, outside a transaction). The
-- build first drops an index of that name left INVALID by a failed
-- concurrent build, so a rerun after a failure completes.
-- create index "notification_parked" to table: "notifications"
DROP INDEX CONCURRENTLY IF EXISTS "notification_parked";
CREATE INDEX CONCURRENTLY "notification_parked" ON "notifications" ("host", "next_attempt_at", "id") WHERE ((attempts = 0) AND (lease_until IS NULL) AND (next_attempt_at IS NOT NULL));

-- +goose Down
-- reverse: create index "notification_parked" to table: "notifications"
DROP INDEX CONCURRENTLY "notification_parked";
