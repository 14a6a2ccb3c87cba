package server

import "errors"

// ErrStarted is returned by a second Start of a Server, or by a Start after
// Stop: a server runs once.
var ErrStarted = errors.New("server already started or stopped")

// ErrMigrationsBehind is returned by New with Store.Migrate off when the
// database lacks migrations this binary needs.
var ErrMigrationsBehind = errors.New("database migrations are behind")

// ErrAmbiguousAPIKey is returned by RevokeAPIKey when a name matches
// several keys: revoking one of them needs its id.
var ErrAmbiguousAPIKey = errors.New("ambiguous api key name")
