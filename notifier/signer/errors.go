package signer

import "errors"

// ErrBadKey reports a signing key file that cannot be used.
var ErrBadKey = errors.New("unusable signing key")
