package payload

import (
	"errors"
	"fmt"
)

// ErrInvalid reports a Callback, callback URL or transport that cannot be
// encoded. Errors returned by Encode wrap it; most are a *FieldError.
var ErrInvalid = errors.New("invalid callback payload")

// FieldError names the payload field (or "callback_url", "transport",
// "params[i]") whose value cannot be encoded, and why.
type FieldError struct {
	// Field is the wire name of the offending field.
	Field string
	// Reason says what is wrong, in words a merchant or operator can act on.
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Reason) }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
