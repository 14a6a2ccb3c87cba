package apikey

import (
	"errors"

	"github.com/payhook/payhook/internal/kind"
)

// ErrNotFound reports a key that does not exist or that the caller may not
// manage (another project's, or an operator key revoked as a merchant's);
// the cases are indistinguishable on purpose.
var ErrNotFound = errors.New("api key not found")

// ErrUnknownScope reports a scope name that is not one of AllScopes.
var ErrUnknownScope = kind.New(kind.Invalid, "unknown scope")
