-- +goose Up
-- Leave room in each page so the dispatcher's claim (attempts, lease) is a
-- HOT update that touches no index. Hand-written: atlas does not manage
-- storage parameters.
ALTER TABLE "notifications" SET (fillfactor = 70);

-- +goose Down
ALTER TABLE "notifications" RESET (fillfactor);
