// Package signer signs notifications. A signer signs in one of two ways,
// and the notifier asks each which:
//
//   - once, when a message is stored (StoredSigner): the signature covers
//     the exact bytes built once and goes out unchanged with every attempt.
//     RSASigner is the low-level callback scheme: RSA PKCS#1 v1.5 over
//     SHA-256 of the GET URL or the POST body, in x-ca-signature; its key is
//     loaded from a PEM file or generated once and kept in the database.
//   - at every attempt (AttemptSigner): with that attempt's time and the key
//     current at that moment, so a rotated secret signs the next attempt.
//     HMACSigner is the engine's per-attempt scheme (x-service-signature
//     with a timestamp).
//
// A signer knows keys only by the reference a message names; what a
// reference means is the signer's (the HMAC signer asks a SecretSource).
package signer
