package price

import (
	"errors"
	"fmt"
)

// ErrInvalidTable reports a price file that cannot be used. The concrete
// error is a *LoadError naming the entry and field, or a wrapped JSON syntax
// error.
var ErrInvalidTable = errors.New("invalid price table")

// LoadError describes a price file entry that failed validation. It wraps
// ErrInvalidTable.
type LoadError struct {
	// Section is the JSON array at fault, "coins" or "fiat"; "" for the file
	// as a whole.
	Section string
	// Entry is the 1-based position in Section; 0 for the file as a whole.
	Entry int
	// Name is the entry's coin or currency code as written, "" if it has
	// none.
	Name string
	// Field is the JSON field at fault, "" when the entry as a whole is.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *LoadError) Error() string {
	where := "price table"
	if e.Section != "" {
		where += fmt.Sprintf(" %s entry %d", e.Section, e.Entry)
		if e.Name != "" {
			where += fmt.Sprintf(" (%q)", e.Name)
		}
	}
	if e.Field != "" {
		where += ": field " + e.Field
	}
	return where + ": " + e.Reason
}

// Unwrap returns ErrInvalidTable.
func (e *LoadError) Unwrap() error { return ErrInvalidTable }
