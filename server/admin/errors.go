package admin

import "errors"

// ErrAmbiguousAPIKey is returned by RevokeAPIKey when a name matches
// several keys: revoking one of them needs its id.
var ErrAmbiguousAPIKey = errors.New("ambiguous api key name")

// ErrNoDatabase is returned by every command but Migrate for a database
// payhook has not created: a SQLite file that does not exist, or a
// database without payhook's tables. Only payhook migrate and payhook
// serve create one.
var ErrNoDatabase = errors.New("no payhook database")
