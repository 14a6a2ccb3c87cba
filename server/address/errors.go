package address

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound reports an address that does not exist or belongs to another
// API key; the two are indistinguishable to the caller on purpose.
var ErrNotFound = errors.New("address not found")

// ErrChainNotReady reports a ticker whose node payhook has not yet read:
// its first poll records where watching starts, and an address handed out
// before that could be paid in a block the watcher never reads.
var ErrChainNotReady = errors.New("the chain node of this ticker has not been reached yet; try again shortly")

// InvalidError reports a request parameter that breaks a rule of the address
// API. Its message names the parameter and what is wrong with it.
type InvalidError struct {
	// Param is the request parameter, e.g. "callback".
	Param string
	// Reason says what is wrong.
	Reason string
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

// Invalid returns an *InvalidError naming param. The merchant interface's
// packages report their parameter errors with it too, so one type is
// translated to InvalidArgument everywhere.
func Invalid(param, format string, args ...any) error {
	return &InvalidError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

func invalid(param, format string, args ...any) error { return Invalid(param, format, args...) }

// ConflictError reports a create with a callback URL that already has an
// address with other settings. This API family identifies an address by its
// callback URL, so the settings of an existing address are never changed
// silently, nor silently ignored: the caller is told which differ.
type ConflictError struct {
	// Fields names the settings that differ, e.g. ["confirmations", "json"].
	Fields []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("callback: this callback URL already has an address with other settings (%s differ); "+
		"repeat the original settings, or use another callback URL (for example with a query parameter of your own) for an address with these",
		strings.Join(e.Fields, ", "))
}
