// Package signer signs notifications. A signer signs in one of two ways,
// or both, and the notifier asks each which:
//
//   - once, when a message is stored (StoredSigner): the signature covers
//     the exact bytes built once and goes out unchanged with every attempt.
//     RSASigner is the low-level callback scheme: RSA PKCS#1 v1.5 over
//     SHA-256 of the GET URL or the POST body, in x-ca-signature; its key is
//     loaded from a PEM file or generated once and kept in the database.
//   - at every attempt (AttemptSigner): with that attempt's time and the
//     secrets valid at that moment, so a rotated secret signs the next
//     attempt. WebhookSigner is the merchant webhook scheme: the Standard
//     Webhooks construction (HMAC-SHA256 over "<uuid>.<unix
//     seconds>.<signed data>", "v1,<Base64>") under the headers
//     x-service-id, x-service-timestamp and x-service-signature, plus
//     x-service-event. During a rotation's grace period the old secret
//     signs too: "v1,<current> v1,<old>".
//   - both (Both): the custom payment flow's callbacks carry the RSA
//     x-ca-signature of the low-level API and the merchant headers.
//
// A signer knows keys only by the reference a message names; what a
// reference means is the signer's (the webhook signer asks a SecretRing).
// Errors name keys and describe malformed secrets, never a secret.
// The receiver package verifies both schemes.
package signer
