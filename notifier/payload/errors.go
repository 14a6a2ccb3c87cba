package payload

import (
	"errors"
	"fmt"
)

// ErrInvalid reports fields, a URL or a transport that cannot be
// encoded. Errors returned by Encode wrap it; most are a *FieldError.
var ErrInvalid = errors.New("invalid notification payload")

// FieldError names the payload field (or "notify_url", "transport",
// "fields[i]", "params[i]") whose value cannot be encoded, and why.
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

// Invalid returns a *FieldError on field; payload builders outside this
// package report their own fields' errors with it.
func Invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
