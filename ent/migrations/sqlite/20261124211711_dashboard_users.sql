-- +goose Up
-- create "dashboard_sessions" table
CREATE TABLE `dashboard_sessions` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `token_hash` text NOT NULL, `user_id` integer NOT NULL, `csrf_token` text NOT NULL, `expires_at` datetime NOT NULL);
-- create index "dashboard_sessions_token_hash_key" to table: "dashboard_sessions"
CREATE UNIQUE INDEX `dashboard_sessions_token_hash_key` ON `dashboard_sessions` (`token_hash`);
-- create index "dashboardsession_user_id" to table: "dashboard_sessions"
CREATE INDEX `dashboardsession_user_id` ON `dashboard_sessions` (`user_id`);
-- create index "dashboardsession_expires_at" to table: "dashboard_sessions"
CREATE INDEX `dashboardsession_expires_at` ON `dashboard_sessions` (`expires_at`);
-- create "dashboard_users" table
CREATE TABLE `dashboard_users` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `project_id` integer NOT NULL, `email` text NOT NULL, `password_hash` text NOT NULL, `failed_signins` integer NOT NULL DEFAULT (0), `locked_until` datetime NULL);
-- create index "dashboard_users_email_key" to table: "dashboard_users"
CREATE UNIQUE INDEX `dashboard_users_email_key` ON `dashboard_users` (`email`);
-- create index "dashboarduser_project_id" to table: "dashboard_users"
CREATE INDEX `dashboarduser_project_id` ON `dashboard_users` (`project_id`);

-- +goose Down
-- reverse: create index "dashboarduser_project_id" to table: "dashboard_users"
DROP INDEX `dashboarduser_project_id`;
-- reverse: create index "dashboard_users_email_key" to table: "dashboard_users"
DROP INDEX `dashboard_users_email_key`;
-- reverse: create "dashboard_users" table
DROP TABLE `dashboard_users`;
-- reverse: create index "dashboardsession_expires_at" to table: "dashboard_sessions"
DROP INDEX `dashboardsession_expires_at`;
-- reverse: create index "dashboardsession_user_id" to table: "dashboard_sessions"
DROP INDEX `dashboardsession_user_id`;
-- reverse: create index "dashboard_sessions_token_hash_key" to table: "dashboard_sessions"
DROP INDEX `dashboard_sessions_token_hash_key`;
-- reverse: create "dashboard_sessions" table
DROP TABLE `dashboard_sessions`;
