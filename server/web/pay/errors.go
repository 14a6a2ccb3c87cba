package pay

import "errors"

// ErrConfig reports a Config that cannot serve pages; the message names
// the field.
var ErrConfig = errors.New("pay config")
