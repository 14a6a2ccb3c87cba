package signer

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/payhook/payhook/notifier/payload"
)

// SchemeWebhook names the merchant webhook scheme: the Standard Webhooks
// construction (https://www.standardwebhooks.com/) under payhook's header
// names.
const SchemeWebhook = "webhook-v1"

// Headers of the merchant webhook scheme: Standard Webhooks' webhook-id,
// webhook-timestamp and webhook-signature, renamed, so its verification
// libraries work once the headers are mapped back; and the event type.
const (
	// WebhookIDHeader carries the notification's uuid (the same at every
	// attempt).
	WebhookIDHeader = "x-service-id"
	// WebhookTimestampHeader carries the attempt's Unix time in seconds.
	WebhookTimestampHeader = "x-service-timestamp"
	// WebhookSignatureHeader carries one or more space-separated
	// "v1,<standard Base64 HMAC-SHA256>" signatures, one per secret valid at
	// the attempt (the current one first).
	WebhookSignatureHeader = "x-service-signature"
	// WebhookEventHeader carries the event type (Attempt.Event); it is not
	// signed (the payload carries the status it reports).
	WebhookEventHeader = "x-service-event"
)

// SecretPrefix starts every webhook secret; the Base64 after it is the
// HMAC key.
const SecretPrefix = "whsec_"

// MinSecretBytes is the shortest HMAC key (decoded) a webhook secret may
// hold. GenerateSecret makes keys of SecretBytes.
const MinSecretBytes = 16

// SecretBytes is the size of the keys GenerateSecret makes.
const SecretBytes = 32

// SignatureVersion prefixes each signature in WebhookSignatureHeader.
const SignatureVersion = "v1"

// SecretRing gives the webhook secrets a key reference names (a project's
// IPN secret), as they are at a moment. Rotation grace periods are the
// ring's to decide: after a rotation it returns the new secret and, until
// its grace period ends, the old one too.
type SecretRing interface {
	// Secrets returns the "whsec_..." secrets of key valid at at, current
	// first. None (and no error) fails the attempt with ErrNoSecret.
	Secrets(ctx context.Context, key string, at time.Time) ([]string, error)
}

// StaticSecrets returns a SecretRing with the same secrets, current first,
// for every key and every moment (tests, benchmarks).
func StaticSecrets(secrets ...string) SecretRing { return staticSecrets(slices.Clone(secrets)) }

type staticSecrets []string

func (s staticSecrets) Secrets(context.Context, string, time.Time) ([]string, error) {
	return s, nil
}

// SchemeStandardWebhooks names the endpoints' scheme: the Standard Webhooks
// construction under its own header names (webhook-id, webhook-timestamp,
// webhook-signature), so the Standard Webhooks libraries verify an endpoint's
// deliveries as they are.
const SchemeStandardWebhooks = "standard-webhooks-v1"

// The Standard Webhooks headers (SchemeStandardWebhooks).
const (
	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// webhookHeaders are the header names a WebhookSigner writes.
type webhookHeaders struct {
	scheme, id, timestamp, signature, event string
}

var (
	serviceHeaders  = webhookHeaders{SchemeWebhook, WebhookIDHeader, WebhookTimestampHeader, WebhookSignatureHeader, WebhookEventHeader}
	standardHeaders = webhookHeaders{SchemeStandardWebhooks, StandardIDHeader, StandardTimestampHeader, StandardSignatureHeader, ""}
)

// WebhookSigner signs every attempt of a merchant webhook with the Standard
// Webhooks construction: for each secret the ring gives at the attempt's
// time, "v1," + Base64(HMAC-SHA256(key, "<uuid>.<unix seconds>.<signed
// data>")), where the signed data is payload.SignedData (the raw POST body,
// or the full GET URL) and the key is the secret's decoded Base64. It sends
// x-service-id, x-service-timestamp, x-service-signature and, when the
// attempt has one, x-service-event.
type WebhookSigner struct {
	ring    SecretRing
	headers webhookHeaders
}

var _ AttemptSigner = (*WebhookSigner)(nil)

// NewWebhookSigner returns a signer taking its secrets from ring.
func NewWebhookSigner(ring SecretRing) *WebhookSigner {
	return &WebhookSigner{ring: ring, headers: serviceHeaders}
}

// NewStandardWebhookSigner returns the endpoints' signer
// (SchemeStandardWebhooks): the same construction as NewWebhookSigner's,
// sent as webhook-id, webhook-timestamp and webhook-signature, with no
// event header (the payload's type says it).
func NewStandardWebhookSigner(ring SecretRing) *WebhookSigner {
	return &WebhookSigner{ring: ring, headers: standardHeaders}
}

// Scheme implements Signer.
func (s *WebhookSigner) Scheme() string { return s.headers.scheme }

// SignAttempt implements AttemptSigner. It fails, naming the problem but
// never a secret, when the ring fails, has no secret for key, or gives a
// malformed one (ErrNoSecret, ErrBadSecret).
func (s *WebhookSigner) SignAttempt(ctx context.Context, key string, a Attempt) (http.Header, error) {
	secrets, err := s.ring.Secrets(ctx, key, a.Time)
	if err != nil {
		return nil, fmt.Errorf("webhook secrets of %q: %w", key, err)
	}
	if len(secrets) == 0 {
		return nil, fmt.Errorf("%w for %q", ErrNoSecret, key)
	}
	ts := a.Time.Unix()
	data := payload.SignedData(a.Request)
	sigs := make([]string, 0, len(secrets))
	for i, secret := range secrets {
		k, err := decodeSecret(secret)
		if err != nil {
			return nil, fmt.Errorf("webhook secret %d of %q: %w", i+1, key, err)
		}
		if sig := signature(k, a.UUID, ts, data); !slices.Contains(sigs, sig) {
			sigs = append(sigs, sig)
		}
	}
	h := http.Header{}
	h.Set(s.headers.id, a.UUID)
	h.Set(s.headers.timestamp, strconv.FormatInt(ts, 10))
	h.Set(s.headers.signature, strings.Join(sigs, " "))
	if a.Event != "" && s.headers.event != "" {
		h.Set(s.headers.event, a.Event)
	}
	return h, nil
}

// Sign returns one x-service-signature entry, "v1,<Base64 HMAC>", of the
// message id signed at Unix time ts over data with secret ("whsec_...").
// Errors wrap ErrBadSecret.
func Sign(secret, id string, ts int64, data []byte) (string, error) {
	k, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	return signature(k, id, ts, data), nil
}

// GenerateSecret returns a new webhook secret: SecretPrefix followed by the
// standard Base64 (padded) of SecretBytes random bytes.
func GenerateSecret() (string, error) {
	k := make([]byte, SecretBytes)
	if _, err := rand.Read(k); err != nil {
		return "", fmt.Errorf("generate webhook secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(k), nil
}

// decodeSecret returns the HMAC key of a "whsec_..." secret. Its errors
// describe the secret's shape, never its content.
func decodeSecret(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, SecretPrefix)
	switch {
	case secret == "":
		return nil, fmt.Errorf("%w: empty", ErrBadSecret)
	case !ok:
		return nil, fmt.Errorf("%w: does not start with %q", ErrBadSecret, SecretPrefix)
	}
	k, err := base64.StdEncoding.DecodeString(b64)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: not standard Base64 after %q", ErrBadSecret, SecretPrefix)
	case len(k) < MinSecretBytes:
		return nil, fmt.Errorf("%w: %d bytes after decoding, at least %d required", ErrBadSecret, len(k), MinSecretBytes)
	}
	return k, nil
}

// signature is "v1," + Base64(HMAC-SHA256(key, id + "." + ts + "." + data)).
func signature(key []byte, id string, ts int64, data []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, ts, 10))
	m.Write([]byte{'.'})
	m.Write(data)
	return SignatureVersion + "," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
