package project

import (
	"fmt"

	"github.com/payhook/payhook/internal/kind"
)

// Errors of the package.
var (
	// ErrNotFound reports a project that does not exist. Its kind is
	// NotFound.
	ErrNotFound = kind.New(kind.NotFound, "project not found")
	// ErrInvalid reports a bad argument; the message names it. Its kind is
	// Invalid.
	ErrInvalid = kind.New(kind.Invalid, "invalid project setting")
	// ErrConcurrent reports a change that raced another one; try again. Its
	// kind is Aborted.
	ErrConcurrent = kind.New(kind.Aborted, "changed concurrently")
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
