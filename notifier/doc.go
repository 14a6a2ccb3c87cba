// Package notifier delivers payment notifications to merchants' servers.
//
// This first part holds the callback signing keys: the RSA key that signs
// low-level callbacks (header x-ca-signature, RSA PKCS#1 v1.5 over SHA-256,
// Base64) and whose public half GET /pubkey/ serves. The key is generated on
// first start and persisted in the database, so every instance on the same
// database signs with the same key, or it is loaded from a PEM file the
// operator names.
package notifier
