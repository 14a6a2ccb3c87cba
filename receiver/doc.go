// Package receiver is for merchants: it verifies the signatures of
// payhook's notifications before they are processed. It imports the
// standard library only.
//
// Low-level callbacks (Verifier) carry x-ca-signature: the standard Base64
// of an RSA PKCS#1 v1.5 signature over the SHA-256 of the signed data.
// Each project signs with its own key: fetch yours once from GET /pubkey/
// on the API origin you trust, sending your project's API key (header
// apikey), or ship it with your configuration; parse it with
// ParsePublicKeyPEM and keep using it: do not fetch it per callback.
// Without an API key /pubkey/ answers the server's key, which verifies
// only the default project's callbacks. After a rotation of the project's
// key, /pubkey/ also gives previous_pubkey until previous_until: pass it
// with WithPreviousKey until then, as callbacks signed before the rotation
// are still retried.
//
// Low-level callbacks also carry the project's HMAC headers (below). Give
// the Verifier your IPN secret with WithSecrets and it requires both: the
// RSA signature says payhook sent the callback, the HMAC that it was sent
// for your project, recently. Neither says that you created the address
// the callback is about: anyone can create an address whose callback is
// your URL. Put your own token in the callback's custom parameters
// (cb_params, e.g. an order id and an HMAC of it under a key of yours) and
// check it before processing.
//
// Merchant webhooks (WebhookVerifier) follow the Standard Webhooks
// construction under payhook's header names: x-service-id (the
// notification's uuid), x-service-timestamp (Unix seconds of the attempt)
// and x-service-signature, a space-separated list of
// "v1,<Base64 HMAC-SHA256(key, id + "." + timestamp + "." + signed data)>",
// where key is the Base64 after the "whsec_" of the project's IPN secret.
// Every attempt is signed anew, so the timestamp is fresh and is checked
// against a tolerance (DefaultTolerance, either way). After a rotation the
// service signs with the new and the old secret for a grace period: give
// the verifier both while you switch. A Standard Webhooks library verifies
// them too once the headers are renamed webhook-id, webhook-timestamp and
// webhook-signature.
//
// For both schemes the signed data is, for GET, the full URL as requested
// (scheme, host, path and query, byte for byte) and, for POST, the raw
// body.
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
//   - Signatures are compared in constant time.
//   - Failures are typed: ErrMissingSignature, ErrBadSignature,
//     ErrMissingWebhookHeader, ErrBadTimestamp, ErrStaleTimestamp,
//     ErrBadWebhookSignature, ErrBodyTooLarge, ErrMethod, ErrConfig;
//     Middleware maps them to 401 (the signature ones), 413, 405 and 500.
//     Errors never contain a secret.
//
// x-ca-signature carries no timestamp and retries reuse it, and a webhook
// can be replayed within the tolerance: process notifications idempotently,
// keyed by their uuid, and never credit a payment twice.
package receiver
