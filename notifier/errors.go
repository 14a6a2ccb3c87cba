package notifier

import "errors"

// ErrInvalidMessage reports a message that cannot be stored; the wrapping
// error says why.
var ErrInvalidMessage = errors.New("invalid message")

// ErrUnknownSigner reports a message naming a signer the notifier was not
// configured with.
var ErrUnknownSigner = errors.New("unknown signer")
