package receiver

import "errors"

var (
	// ErrMissingSignature reports a request without an x-ca-signature header.
	ErrMissingSignature = errors.New("missing x-ca-signature header")
	// ErrBadSignature reports a signature that is malformed or does not
	// verify against the pinned key for the data received.
	ErrBadSignature = errors.New("invalid x-ca-signature")
	// ErrBodyTooLarge reports a POST body over the verifier's limit.
	ErrBodyTooLarge = errors.New("callback body too large")
	// ErrMethod reports a method callbacks do not use (only GET and POST).
	ErrMethod = errors.New("method not used by callbacks")
	// ErrConfig reports a Verifier built with a nil key or a bad option.
	ErrConfig = errors.New("receiver misconfigured")
	// ErrBadKey reports a public key that cannot be used.
	ErrBadKey = errors.New("unusable public key")
)
