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

// Errors of the live price feed. A provider's failure is a *ProviderError
// wrapping ErrUnavailable (it could not be asked) or ErrBadQuote (it answered
// with something unusable); match them with errors.Is and errors.As.
var (
	// ErrUnavailable reports a provider that could not be asked: a transport
	// error, a timeout or cancellation, or an HTTP status other than 200.
	ErrUnavailable = errors.New("price provider unavailable")
	// ErrBadQuote reports a provider answer that is not a valid quote:
	// malformed JSON, a field of the wrong type, a value that is not a
	// positive decimal within the table's limits. Nothing of such an answer
	// is used.
	ErrBadQuote = errors.New("invalid price quote")
	// ErrNoQuote reports a Refresh in which no provider answered with a
	// valid quote; the cache keeps what it had.
	ErrNoQuote = errors.New("no price provider answered")
	// ErrInvalidConfig reports a LiveConfig or provider configuration that
	// cannot be used; the message names the field.
	ErrInvalidConfig = errors.New("invalid price configuration")
)

// ProviderError is a failure of one provider. It names the provider and,
// for a bad answer, the JSON field at fault. Messages hold no API keys.
type ProviderError struct {
	// Provider is the provider's Name.
	Provider string
	// Field is the JSON path at fault ("bitcoin.usd", "data.rates.EUR");
	// "" when the request or the answer as a whole failed.
	Field string
	// Err wraps ErrUnavailable or ErrBadQuote.
	Err error
}

// Error implements error.
func (e *ProviderError) Error() string {
	s := "price provider " + e.Provider
	if e.Field != "" {
		s += ": field " + e.Field
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *ProviderError) Unwrap() error { return e.Err }
