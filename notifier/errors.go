package notifier

import (
	"errors"

	"github.com/payhook/payhook/internal/kind"
)

// ErrInvalidMessage reports a message that cannot be stored; the wrapping
// error says why.
var ErrInvalidMessage = errors.New("invalid message")

// ErrUnknownSigner reports a message naming a signer the notifier was not
// configured with.
var ErrUnknownSigner = errors.New("unknown signer")

// ErrNotFound reports a notification that its owner does not have: an
// unknown uuid and another owner's uuid are the same error, with the same
// text, so an owner cannot learn which uuids exist. Its kind is NotFound,
// answered with one fixed message naming the uuid parameter.
var ErrNotFound = kind.New(kind.NotFound, "notification not found",
	kind.Public("uuid: no notification of this project has this uuid"))

// ErrInvalidFilter reports a list filter that cannot be used (an unknown
// status, a negative limit, a cursor List did not return); the wrapping
// error names the field. Its kind is Invalid.
var ErrInvalidFilter = kind.New(kind.Invalid, "invalid list filter")
