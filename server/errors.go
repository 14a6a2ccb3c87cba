package server

import "errors"

// ErrMigrationsBehind is returned by New with Store.Migrate off when the
// database lacks migrations this binary needs.
var ErrMigrationsBehind = errors.New("database migrations are behind")

// ErrAmbiguousAPIKey is returned by RevokeAPIKey when a name matches
// several keys: revoking one of them needs its id.
var ErrAmbiguousAPIKey = errors.New("ambiguous api key name")
