package address

import (
	"fmt"
	"strings"

	"github.com/payhook/payhook/internal/kind"
)

// ErrNotFound reports an address that does not exist or belongs to another
// API key; the two are indistinguishable to the caller on purpose. Its kind
// is NotFound, answered with one fixed message.
var ErrNotFound = kind.New(kind.NotFound, "address not found",
	kind.Public("no address was created with this callback URL for this ticker"))

// ErrChainNotReady reports a ticker whose node payhook has not yet read:
// its first poll records where watching starts, and an address handed out
// before that could be paid in a block the watcher never reads. Its kind is
// Unavailable.
var ErrChainNotReady = kind.New(kind.Unavailable, "the chain node of this ticker has not been reached yet; try again shortly")

// InvalidError reports a request parameter that breaks a rule of the address
// API. Its message names the parameter and what is wrong with it.
type InvalidError struct {
	// Param is the request parameter, e.g. "callback".
	Param string
	// Reason says what is wrong.
	Reason string
	// Payer, when set, is what a hosted page tells a payer instead of
	// Reason, in the payer's language.
	Payer *PayerText
}

// PayerText is a refusal as a hosted page says it to a payer: Key names
// the message in the pages' catalogue (server/web/pay/i18n), Args are its
// arguments.
type PayerText struct {
	Key  string
	Args []any
}

// ForPayer returns what a hosted page says of an error: the key of its
// message and the message's arguments.
func ForPayer(key string, args ...any) *PayerText { return &PayerText{Key: key, Args: args} }

// InvalidForPayer is Invalid with the text a hosted page shows a payer.
func InvalidForPayer(payer *PayerText, param, format string, args ...any) error {
	return &InvalidError{Param: param, Reason: fmt.Sprintf(format, args...), Payer: payer}
}

func (e *InvalidError) Error() string { return fmt.Sprintf("%s: %s", e.Param, e.Reason) }

// Kind is kind.Invalid.
func (e *InvalidError) Kind() kind.Kind { return kind.Invalid }

// Message is the error's own text, whatever wraps it: it names the
// parameter.
func (e *InvalidError) Message(error) string { return e.Error() }

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

// Kind is kind.Conflict.
func (e *ConflictError) Kind() kind.Kind { return kind.Conflict }

// Message is the error's own text, whatever wraps it.
func (e *ConflictError) Message(error) string { return e.Error() }
