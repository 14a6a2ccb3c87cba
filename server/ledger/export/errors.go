package export

import (
	"github.com/payhook/payhook/internal/kind"
)

// ErrRange reports a date range that is malformed, empty, reversed or too
// long; the wrapping error names the parameter.
var ErrRange = kind.New(kind.Invalid, "invalid date range")

// rangeError is an ErrRange naming what is wrong.
type rangeError struct{ msg string }

func (e *rangeError) Error() string { return e.msg }

// Kind is kind.Invalid: a 400.
func (e *rangeError) Kind() kind.Kind { return kind.Invalid }

// Is makes errors.Is(err, ErrRange) true.
func (e *rangeError) Is(target error) bool { return target == ErrRange }

// ErrFormat reports an unknown export format.
var ErrFormat = kind.New(kind.Invalid, "unknown format", kind.Public("format: must be csv or json"))
