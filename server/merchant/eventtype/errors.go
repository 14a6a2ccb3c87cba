package eventtype

import "github.com/payhook/payhook/internal/kind"

// ErrUnknown reports an event type the catalogue does not list.
var ErrUnknown = kind.New(kind.NotFound, "unknown event type", kind.Prefix("name: "))
