package payment

import "errors"

// ErrStarted reports a Start of a watcher that is already running.
var ErrStarted = errors.New("already started")
