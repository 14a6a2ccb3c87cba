package store

import (
	"errors"

	"entgo.io/ent/dialect/sql/sqlgraph"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/internal/kind"
)

// ErrUnsupportedDSN is wrapped by every error ParseDSN and Open return for a
// DSN whose form is not accepted.
var ErrUnsupportedDSN = errors.New("unsupported database DSN")

// UnavailableError is a database failure that says nothing about the
// request: the database is unreachable, read-only, full or busy (Unavailable
// says which). Its kind is Unavailable; a caller is told Why, never the
// driver's text.
type UnavailableError struct {
	// Why is the message for the caller, from Unavailable.
	Why string
	// Err is the driver's error.
	Err error
}

// Error returns the driver's error text (for logs).
func (e *UnavailableError) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Kind is kind.Unavailable.
func (e *UnavailableError) Kind() kind.Kind { return kind.Unavailable }

// Message is Why.
func (e *UnavailableError) Message(error) string { return e.Why }

// Classify returns err as an *UnavailableError when the database refused
// it for a reason of its own (see Unavailable), and err unchanged otherwise.
// The database's errors come from the drivers, through ent, at every query:
// the server applies Classify where it answers (the interceptor), rather
// than every caller wrapping every query.
func Classify(err error) error {
	if why := Unavailable(err); why != "" {
		return &UnavailableError{Why: why, Err: err}
	}
	return err
}

// IsConstraintError reports whether err is a constraint violation, from an
// ent builder or from a hand-written statement (InsertRows).
func IsConstraintError(err error) bool {
	return entdb.IsConstraintError(err) || sqlgraph.IsConstraintError(err)
}
