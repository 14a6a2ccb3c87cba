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

	// ErrMissingWebhookHeader reports a webhook without one of
	// x-service-id, x-service-timestamp or x-service-signature.
	ErrMissingWebhookHeader = errors.New("missing webhook signature header")
	// ErrBadTimestamp reports an x-service-timestamp that is not a Unix
	// time in decimal seconds.
	ErrBadTimestamp = errors.New("invalid x-service-timestamp")
	// ErrStaleTimestamp reports an x-service-timestamp further from the
	// verifier's clock than its tolerance, in the past or in the future: a
	// replayed or delayed webhook (or a skewed clock).
	ErrStaleTimestamp = errors.New("x-service-timestamp outside the tolerance")
	// ErrBadWebhookSignature reports an x-service-signature none of whose
	// v1 signatures matches a configured secret for the data received.
	ErrBadWebhookSignature = errors.New("invalid x-service-signature")
)
