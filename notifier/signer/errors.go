package signer

import "errors"

var (
	// ErrBadKey reports a signing key file that cannot be used.
	ErrBadKey = errors.New("unusable signing key")
	// ErrBadSecret reports a webhook secret that is not "whsec_" followed
	// by the standard Base64 of at least MinSecretBytes bytes. The wrapping
	// error says what is wrong, never what the secret is.
	ErrBadSecret = errors.New("unusable webhook secret")
	// ErrNoSecret reports a key reference for which a SecretRing has no
	// secret valid at the attempt's time.
	ErrNoSecret = errors.New("no webhook secret")
)
