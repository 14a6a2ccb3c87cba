// Package receiver is for merchants: it verifies the x-ca-signature header
// of payhook's low-level callbacks before the callback is processed.
//
// The header is the standard Base64 of an RSA PKCS#1 v1.5 signature over
// the SHA-256 of the signed data: for GET the full URL as requested
// (scheme, host, path and query, byte for byte), for POST the raw body.
// Fetch the public key once from GET /pubkey/ on the API origin you trust
// (or ship it with your configuration), parse it with ParsePublicKeyPEM and
// keep using it: do not fetch it per callback.
//
// Guarantees:
//
//   - Nothing is parsed before it is verified. A POST body is read once
//     (bounded, 1 MiB by default), verified as raw bytes, and put back in
//     r.Body so the next handler can parse it as form or JSON.
//   - A GET URL is rebuilt from the request as received: r.RequestURI is
//     used unchanged, never re-encoded. Behind a TLS-terminating proxy or
//     load balancer, the scheme and host the service called are not those
//     your process sees: configure them with WithBaseURL. Forwarded headers
//     (X-Forwarded-Proto, X-Forwarded-Host) are not trusted.
//   - Failures are typed: ErrMissingSignature, ErrBadSignature,
//     ErrBodyTooLarge, ErrMethod, ErrConfig; Middleware maps them to 401,
//     401, 413, 405 and 500.
//
// The signature carries no timestamp and retries reuse it: a valid callback
// can be replayed. Process callbacks idempotently, keyed by their uuid, and
// never credit a payment twice.
package receiver
