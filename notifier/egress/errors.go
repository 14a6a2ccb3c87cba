package egress

import "errors"

// ErrInvalidURL reports a destination URL that the URL rules refuse (see
// CheckURL). The wrapping error says which rule.
var ErrInvalidURL = errors.New("URL not accepted")

// ErrInvalidEndpoint reports an operator exception (--allow-private-endpoint)
// that is not an exact endpoint (see ParseEndpoint).
var ErrInvalidEndpoint = errors.New("invalid private endpoint")

// ErrInvalidConfig reports a Config field that cannot be used; the wrapping
// error names the field.
var ErrInvalidConfig = errors.New("invalid egress config")

// ErrTimeout reports an attempt that did not complete within
// Config.Timeout (connect, TLS, request and response together).
var ErrTimeout = errors.New("attempt timed out")

// BlockedError reports a destination that the destination rules refuse:
// a URL that fails CheckURL, or an address that Classify blocks, found when
// the connection was about to be made (so it covers addresses from DNS
// answers). It is never retried into success: the same destination is
// refused again unless its DNS answer changes.
type BlockedError struct {
	// Reason says what was refused and why, without the word
	// "destination", e.g. "10.0.0.5 is a private address (RFC 1918)".
	Reason string
}

// Error returns "destination " followed by the reason.
func (e *BlockedError) Error() string { return "destination " + e.Reason }
