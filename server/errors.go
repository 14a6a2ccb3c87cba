package server

import "errors"

// ErrMigrationsBehind is returned by New with Store.Migrate off when the
// database lacks migrations this binary needs.
var ErrMigrationsBehind = errors.New("database migrations are behind")
