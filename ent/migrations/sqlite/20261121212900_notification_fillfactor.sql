-- +goose Up
-- PostgreSQL storage parameter only; kept so both dialects share versions.
SELECT 1;

-- +goose Down
SELECT 1;
