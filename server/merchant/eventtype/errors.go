package eventtype

import (
	"fmt"

	"github.com/payhook/payhook/internal/kind"
)

// ErrUnknown reports an event type the catalogue does not list.
var ErrUnknown = kind.New(kind.NotFound, "unknown event type", kind.Prefix("name: "))

// Unknown returns the error of the unknown event type name: it wraps
// ErrUnknown and names it.
func Unknown(name string) error {
	return fmt.Errorf("%w %q: GET /events/types/ lists them", ErrUnknown, name)
}
