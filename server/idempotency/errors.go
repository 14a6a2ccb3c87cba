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
	// lease, or it failed) after it had committed a write: its answer was
	// never stored, and running it again would act twice (409). The client
	// looks up what it asked for.
	ErrInterrupted = kind.New(kind.Conflict, "the call made with this Idempotency-Key was interrupted (the server stopped, or the call failed, after it had taken effect) and its answer was not kept: look up what it did (the checkout, the payout); it is never run a second time under this key")
	// ErrMismatch refuses a call whose Idempotency-Key was used with
	// another method or other parameters (409).
	ErrMismatch = kind.New(kind.Conflict, "Idempotency-Key reused with a different request: a key names one call, with its parameters")
	// errLost reports a claim that was no longer the caller's when it
	// completed (its lease ended and a retry took the key).
	errLost = errors.New("the Idempotency-Key's claim was taken over after its lease")
)
