package address

import (
	"errors"
	"fmt"
)

// ErrNotFound reports an address that does not exist or belongs to another
// API key; the two are indistinguishable to the caller on purpose.
var ErrNotFound = errors.New("address not found")

// InvalidError reports a request parameter that breaks a rule of the address
// API. Its message names the parameter and what is wrong with it.
type InvalidError struct {
	// Param is the request parameter, e.g. "callback".
	Param string
	// Reason says what is wrong.
	Reason string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

func invalid(param, format string, args ...any) error {
	return &InvalidError{Param: param, Reason: fmt.Sprintf(format, args...)}
}
