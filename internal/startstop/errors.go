package startstop

import "errors"

// ErrStarted is returned by a second Start of a part, or by a Start after
// Stop: every long-running part runs once.
var ErrStarted = errors.New("already started or stopped")

// ErrStopped is the cause (context.Cause) of a part's run context once its
// Stop begins, telling a deliberate stop from any other cancellation.
var ErrStopped = errors.New("stopped")
