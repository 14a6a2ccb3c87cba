package idempotency

import (
	"errors"

	"github.com/payhook/payhook/internal/kind"
)

var (
	// ErrInProgress refuses a call whose Idempotency-Key is claimed by a
	// call still running (409; retrying later gets its response).
	ErrInProgress = kind.New(kind.Aborted, "a call with this Idempotency-Key is in progress: retry once it has finished")
	// ErrInterrupted refuses a call whose Idempotency-Key was claimed by a
	// call that never finished (its instance stopped while it ran, past the
	// lease): whether that call took effect is unknown, so it is never run
	// a second time under the same key (409). The client looks up what it
	// asked for and, if nothing was done, retries with a new key.
	ErrInterrupted = kind.New(kind.Conflict, "the call made with this Idempotency-Key was interrupted (the server stopped while it ran) and may or may not have taken effect: look up what it was to do, and if it was not done, retry with a new Idempotency-Key")
	// ErrMismatch refuses a call whose Idempotency-Key was used with
	// another method or other parameters (409).
	ErrMismatch = kind.New(kind.Conflict, "Idempotency-Key reused with a different request: a key names one call, with its parameters")
	// errLost reports a claim that was no longer the caller's when it
	// completed (its lease ended and a retry took the key).
	errLost = errors.New("the Idempotency-Key's claim was taken over after its lease")
)
