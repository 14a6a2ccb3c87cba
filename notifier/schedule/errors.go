package schedule

import "errors"

// ErrInvalidPolicy reports a retry policy that cannot be used: no delays, a
// delay that is not positive or does not parse, or a window that is not
// positive. The wrapping error names the bad element.
var ErrInvalidPolicy = errors.New("invalid retry policy")
