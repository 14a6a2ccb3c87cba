package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of merchant webhooks: Standard Webhooks' webhook-id,
// webhook-timestamp and webhook-signature under payhook's names, and the
// event type.
const (
	// WebhookIDHeader carries the notification's uuid, the same at every
	// attempt: deduplicate on it.
	WebhookIDHeader = "x-service-id"
	// WebhookTimestampHeader carries the attempt's Unix time in seconds.
	WebhookTimestampHeader = "x-service-timestamp"
	// WebhookSignatureHeader carries space-separated "v1,<Base64>"
	// signatures: one per secret the service signed with (two during a
	// rotation's grace period).
	WebhookSignatureHeader = "x-service-signature"
	// WebhookEventHeader carries the event type, e.g.
	// "checkout.payment.confirmed". It is not signed: trust the event the
	// verified payload reports.
	WebhookEventHeader = "x-service-event"
)

// WebhookSecretPrefix starts every webhook secret (the project's IPN
// secret); the standard Base64 after it is the HMAC key.
const WebhookSecretPrefix = "whsec_"

// MinWebhookSecretBytes is the shortest HMAC key (decoded) a webhook
// secret may hold; the service's secrets hold 32 bytes.
const MinWebhookSecretBytes = 16

// DefaultTolerance is how far x-service-timestamp may be from the
// verifier's clock, either way, unless WithTolerance says otherwise.
const DefaultTolerance = 5 * time.Minute

// WithTolerance sets how far a webhook's timestamp may be from the
// verifier's clock, in the past or in the future; d <= 0 keeps
// DefaultTolerance. It applies to WebhookVerifier, and to a Verifier given
// WithSecrets.
func WithTolerance(d time.Duration) Option {
	return func(s *settings) {
		s.timed = true
		if d > 0 {
			s.tolerance = d
		}
	}
}

// WithClock sets the clock timestamps are checked against (time.Now by
// default; nil keeps it). It applies to WebhookVerifier, and to a Verifier
// given WithSecrets.
func WithClock(now func() time.Time) Option {
	return func(s *settings) {
		s.timed = true
		if now != nil {
			s.now = now
		}
	}
}

// WebhookVerifier checks the x-service-signature of incoming merchant
// webhooks against the project's IPN secrets. It is safe for concurrent
// use.
type WebhookVerifier struct {
	keys [][]byte
	settings
}

// NewWebhookVerifier returns a verifier accepting a webhook signed with any
// of secrets ("whsec_..."): during a rotation give the new secret and the
// old one, then drop the old one. No secret, a malformed secret or a bad
// option does not panic: every Verify then fails with ErrConfig (and
// Middleware answers 500); the error never contains a secret.
func NewWebhookVerifier(secrets []string, opts ...Option) *WebhookVerifier {
	v := &WebhookVerifier{settings: newSettings(opts)}
	if len(v.previous) > 0 {
		v.fail(fmt.Errorf("%w: WithPreviousKey is for the RSA Verifier: webhooks carry no x-ca-signature", ErrConfig))
	}
	v.keys = v.webhookKeys(secrets)
	return v
}

// webhookKeys decodes secrets and those WithSecrets gave, recording the
// first error (which never contains a secret).
func (s *settings) webhookKeys(secrets []string) [][]byte {
	all := append(append([]string(nil), secrets...), s.secrets...)
	if len(all) == 0 {
		s.fail(fmt.Errorf("%w: no webhook secret", ErrConfig))
	}
	keys := make([][]byte, 0, len(all))
	for i, secret := range all {
		k, err := webhookKey(secret)
		if err != nil {
			s.fail(fmt.Errorf("webhook secret %d: %w", i+1, err))
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

// Verify checks the webhook headers of r and returns the data the signature
// covers: the full URL for GET (rebuilt as Verifier does, see WithBaseURL),
// the raw body for POST, restored in r.Body so the handler can read it
// again. It checks that x-service-id is present, that x-service-timestamp
// is within the tolerance of the clock (before reading the body), and that
// one of the v1 signatures of x-service-signature is the HMAC-SHA256 of
// "<id>.<timestamp>.<data>" under one of the secrets (compared in constant
// time). Errors wrap ErrMissingWebhookHeader, ErrBadTimestamp,
// ErrStaleTimestamp, ErrBadWebhookSignature, ErrBodyTooLarge, ErrMethod or
// ErrConfig, or report a failure to read the body.
func (v *WebhookVerifier) Verify(r *http.Request) ([]byte, error) {
	if v.err != nil {
		return nil, v.err
	}
	wh, err := v.webhookHeaders(r.Header)
	if err != nil {
		return nil, err
	}
	data, err := v.signedData(r)
	if err != nil {
		return nil, err
	}
	if !matches(v.keys, wh.id, wh.ts, data, wh.sig) {
		return nil, fmt.Errorf("%w: no v1 signature matches the %s", ErrBadWebhookSignature, signedName(r.Method))
	}
	return data, nil
}

// webhookSignature is what the webhook headers of a request say.
type webhookSignature struct {
	id  string
	ts  int64
	sig string // the space-separated signature list
}

// webhookHeaders reads x-service-id, x-service-timestamp (checked against
// the clock) and x-service-signature.
func (v *settings) webhookHeaders(h http.Header) (webhookSignature, error) {
	id, err := oneHeader(h, WebhookIDHeader)
	if err != nil {
		return webhookSignature{}, err
	}
	tsHeader, err := oneHeader(h, WebhookTimestampHeader)
	if err != nil {
		return webhookSignature{}, err
	}
	sig := strings.Join(h.Values(WebhookSignatureHeader), " ")
	if strings.TrimSpace(sig) == "" {
		return webhookSignature{}, fmt.Errorf("%w: %s", ErrMissingWebhookHeader, WebhookSignatureHeader)
	}
	ts, err := v.timestamp(tsHeader)
	if err != nil {
		return webhookSignature{}, err
	}
	return webhookSignature{id: id, ts: ts, sig: sig}, nil
}

// VerifySigned is Verify for callers that hold the parts of a webhook
// rather than an *http.Request: the values of x-service-id,
// x-service-timestamp and x-service-signature, and the signed data (the
// raw body of a POST, the full URL of a GET, exactly as received).
func (v *WebhookVerifier) VerifySigned(id, timestamp string, data []byte, signature string) error {
	if v.err != nil {
		return v.err
	}
	if err := present(id, signature); err != nil {
		return err
	}
	ts, err := v.timestamp(timestamp)
	if err != nil {
		return err
	}
	if !matches(v.keys, id, ts, data, signature) {
		return fmt.Errorf("%w: no v1 signature matches the data", ErrBadWebhookSignature)
	}
	return nil
}

// Middleware verifies every request before next sees it, answering the
// ones that fail as Verifier.Middleware does (401 for a missing, invalid or
// stale signature).
func (v *WebhookVerifier) Middleware(next http.Handler) http.Handler {
	return middleware(v.Verify, next)
}

// VerifyWebhookSignature reports whether signature (an x-service-signature
// value) holds a v1 signature of id and timestamp (the x-service-id and
// x-service-timestamp values) over data made with secret ("whsec_..."). It
// does not look at the clock: check the timestamp yourself, or use
// WebhookVerifier, or a captured webhook can be replayed. Errors wrap
// ErrMissingWebhookHeader, ErrBadTimestamp, ErrBadWebhookSignature or
// ErrConfig (a malformed secret; the error never contains it).
func VerifyWebhookSignature(secret, id, timestamp string, data []byte, signature string) error {
	k, err := webhookKey(secret)
	if err != nil {
		return err
	}
	if err := present(id, signature); err != nil {
		return err
	}
	ts, err := parseTimestamp(timestamp)
	if err != nil {
		return err
	}
	if !matches([][]byte{k}, id, ts, data, signature) {
		return fmt.Errorf("%w: no v1 signature matches the data", ErrBadWebhookSignature)
	}
	return nil
}

// oneHeader returns the value of a header that must be given once.
func oneHeader(h http.Header, name string) (string, error) {
	vals := h.Values(name)
	switch {
	case len(vals) == 0 || len(vals) == 1 && strings.TrimSpace(vals[0]) == "":
		return "", fmt.Errorf("%w: %s", ErrMissingWebhookHeader, name)
	case len(vals) > 1:
		return "", fmt.Errorf("%w: %s given %d times", ErrBadWebhookSignature, name, len(vals))
	}
	return strings.TrimSpace(vals[0]), nil
}

// present checks that the id and signature values are not empty.
func present(id, signature string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: %s", ErrMissingWebhookHeader, WebhookIDHeader)
	case strings.TrimSpace(signature) == "":
		return fmt.Errorf("%w: %s", ErrMissingWebhookHeader, WebhookSignatureHeader)
	}
	return nil
}

// timestamp parses an x-service-timestamp value and checks it against the
// clock, both ways.
func (v *settings) timestamp(s string) (int64, error) {
	ts, err := parseTimestamp(s)
	if err != nil {
		return 0, err
	}
	now := v.now()
	at := time.Unix(ts, 0)
	switch d := now.Sub(at); {
	case d > v.tolerance:
		return 0, fmt.Errorf("%w: %s old, tolerance %s", ErrStaleTimestamp, d.Truncate(time.Second), v.tolerance)
	case d < -v.tolerance:
		return 0, fmt.Errorf("%w: %s in the future, tolerance %s", ErrStaleTimestamp, (-d).Truncate(time.Second), v.tolerance)
	}
	return ts, nil
}

// parseTimestamp parses a Unix time in decimal seconds (digits only).
func parseTimestamp(s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("%w: %s", ErrMissingWebhookHeader, WebhookTimestampHeader)
	}
	if strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%w: not a Unix time in decimal seconds", ErrBadTimestamp)
	}
	ts, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: out of range", ErrBadTimestamp)
	}
	return ts, nil
}

// webhookKey returns the HMAC key of a "whsec_..." secret. Its errors wrap
// ErrConfig and describe the secret's shape, never its content.
func webhookKey(secret string) ([]byte, error) {
	b64, ok := strings.CutPrefix(secret, WebhookSecretPrefix)
	switch {
	case secret == "":
		return nil, fmt.Errorf("%w: empty webhook secret", ErrConfig)
	case !ok:
		return nil, fmt.Errorf("%w: webhook secret does not start with %q", ErrConfig, WebhookSecretPrefix)
	}
	k, err := base64.StdEncoding.DecodeString(b64)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: webhook secret is not standard Base64 after %q", ErrConfig, WebhookSecretPrefix)
	case len(k) < MinWebhookSecretBytes:
		return nil, fmt.Errorf("%w: webhook secret holds %d bytes, at least %d required", ErrConfig, len(k), MinWebhookSecretBytes)
	}
	return k, nil
}

// matches reports whether a v1 entry of the space-separated signature list
// is the HMAC-SHA256 of "<id>.<ts>.<data>" under one of keys. Entries of
// other versions, or not Base64, are skipped, as Standard Webhooks says.
func matches(keys [][]byte, id string, ts int64, data []byte, signatures string) bool {
	macs := make([][]byte, len(keys))
	for i, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(id))
		m.Write([]byte{'.'})
		m.Write(strconv.AppendInt(nil, ts, 10))
		m.Write([]byte{'.'})
		m.Write(data)
		macs[i] = m.Sum(nil)
	}
	for _, entry := range strings.Fields(signatures) {
		version, b64, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			continue
		}
		for _, mac := range macs {
			if hmac.Equal(got, mac) {
				return true
			}
		}
	}
	return false
}
