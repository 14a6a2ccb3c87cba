package watchonly

import (
	"fmt"

	"github.com/payhook/payhook/internal/kind"
)

// ErrInvalidKey reports a watch-only key or descriptor that cannot be used
// for the ticker. The concrete error is a *KeyError saying what is wrong.
// Its kind is Invalid.
var ErrInvalidKey = kind.New(kind.Invalid, "invalid watch-only key")

// KeyError describes why Parse refused a key or descriptor. It wraps
// ErrInvalidKey. The message reads like
// `invalid ltc watch-only key: bad checksum #abcdefgh: ...`; it never
// repeats the input (which may be a private key pasted by mistake), only
// the parts of it that are safe to show (a function name, a path).
type KeyError struct {
	// Ticker is the canonical ticker the key was given for.
	Ticker string
	// Reason says what is wrong, in words fit for a merchant.
	Reason string
}

// Error implements error.
func (e *KeyError) Error() string {
	return fmt.Sprintf("invalid %s watch-only key: %s", e.Ticker, e.Reason)
}

// Unwrap returns ErrInvalidKey.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }
