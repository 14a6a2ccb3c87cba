package store

import "errors"

// ErrUnsupportedDSN is wrapped by every error ParseDSN and Open return for a
// DSN whose form is not accepted.
var ErrUnsupportedDSN = errors.New("unsupported database DSN")
