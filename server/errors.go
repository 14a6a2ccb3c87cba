package server

import "errors"

// ErrStarted is returned by a second Start of a Server, or by a Start after
// Stop: a server runs once.
var ErrStarted = errors.New("server already started or stopped")
