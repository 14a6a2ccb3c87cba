package admin

import "errors"

// ErrAmbiguousAPIKey is returned by RevokeAPIKey when a name matches
// several keys: revoking one of them needs its id.
var ErrAmbiguousAPIKey = errors.New("ambiguous api key name")
