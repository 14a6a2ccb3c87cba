package invoice

import (
	"errors"

	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
)

// ErrNotFound reports an invoice (payment_id) that does not exist or
// belongs to another project; the two are indistinguishable on purpose.
// Its kind is NotFound.
var ErrNotFound = kind.New(kind.NotFound, "invoice not found")

// ErrNoKey reports a project without any API key, for which a hosted page
// cannot hand out an address (an address records the key that created it).
var ErrNoKey = errors.New("project has no API key")

// InvalidError reports a request parameter that breaks a rule of the
// checkout and deposit API: the address API's type, so that one error type names bad
// parameters across the API.
type InvalidError = address.InvalidError

// CapError reports an address a hosted page does not hand out: the
// invoice, or the subscription link, has as many as the page may hand out
// (Config.HostedAddresses, subscription.Config.HostedAddresses). Reason is
// written for the payer. Its kind is Conflict.
type CapError struct {
	// Reason says what is full and what the payer can do.
	Reason string
	// Payer is the same for a hosted page, in the payer's language.
	Payer *address.PayerText
}

func (e *CapError) Error() string { return e.Reason }

// Kind is kind.Conflict.
func (e *CapError) Kind() kind.Kind { return kind.Conflict }

// Message is the reason, whatever wraps it.
func (e *CapError) Message(error) string { return e.Reason }

func invalid(param, format string, args ...any) error { return address.Invalid(param, format, args...) }

// payerInvalid is invalid with the text a hosted page shows a payer (key
// and args of the pages' catalogue).
func payerInvalid(key string, args []any, param, format string, fargs ...any) error {
	return address.InvalidForPayer(address.ForPayer(key, args...), param, format, fargs...)
}
