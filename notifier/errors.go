package notifier

import "errors"

// ErrInvalidMessage reports a message that cannot be stored; the wrapping
// error says why.
var ErrInvalidMessage = errors.New("invalid message")

// ErrUnknownSigner reports a message naming a signer the notifier was not
// configured with.
var ErrUnknownSigner = errors.New("unknown signer")

// ErrNotFound reports a notification that its owner does not have: an
// unknown uuid and another owner's uuid are the same error, with the same
// text, so an owner cannot learn which uuids exist.
var ErrNotFound = errors.New("notification not found")

// ErrInvalidFilter reports a list filter that cannot be used (an unknown
// status, a negative limit, a cursor List did not return); the wrapping
// error names the field.
var ErrInvalidFilter = errors.New("invalid list filter")
