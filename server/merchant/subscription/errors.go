package subscription

import (
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
)

// ErrNotFound reports a subscription (token) that does not exist or
// belongs to another project; the two are indistinguishable on purpose.
// Its kind is NotFound.
var ErrNotFound = kind.New(kind.NotFound, "subscription not found")

// InvalidError reports a request parameter that breaks a rule of the
// subscription API: the address API's type, so that one error type names bad
// parameters across the API.
type InvalidError = address.InvalidError

func invalid(param, format string, args ...any) error { return address.Invalid(param, format, args...) }
