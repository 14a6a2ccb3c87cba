package subscription

import (
	"errors"
	"fmt"
)

// ErrNotFound reports a subscription (token) that does not exist or
// belongs to another project; the two are indistinguishable on purpose.
var ErrNotFound = errors.New("subscription not found")

// InvalidError reports a request parameter that breaks a rule of the
// subscription API. Its message names the parameter and what is wrong.
type InvalidError struct {
	// Param is the request parameter, e.g. "option".
	Param string
	// Reason says what is wrong.
	Reason string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

func invalid(param, format string, args ...any) error {
	return &InvalidError{Param: param, Reason: fmt.Sprintf(format, args...)}
}
