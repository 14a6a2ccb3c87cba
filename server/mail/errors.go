package mail

import "errors"

// ErrInvalidEmail reports an email Enqueue refuses: a part missing, or a
// recipient that is no email address. Its text names which.
var ErrInvalidEmail = errors.New("invalid email")
