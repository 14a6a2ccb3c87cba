package receiver

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SignatureHeader is the header that carries a callback's signature.
const SignatureHeader = "x-ca-signature"

// DefaultMaxBodyBytes bounds the POST body Verify reads, unless
// WithMaxBodyBytes says otherwise. Callbacks are a few kilobytes.
const DefaultMaxBodyBytes = 1 << 20

// Verifier checks the x-ca-signature of incoming callbacks against the
// pinned public key (and the previous one during a rotation, see
// WithPreviousKey) and, given WithSecrets, their project HMAC as well. It
// is safe for concurrent use.
type Verifier struct {
	pubs []*rsa.PublicKey // the pinned key first, then WithPreviousKey's
	hmac [][]byte         // WithSecrets' keys; nil: x-ca-signature only
	settings
}

// settings are what options set, for both verifiers.
type settings struct {
	base       string // scheme://host[:port], or "" to use the request's
	maxBody    int64
	tolerance  time.Duration    // webhook verifiers, and Verifier with secrets
	now        func() time.Time // webhook verifiers, and Verifier with secrets
	timed      bool             // WithTolerance or WithClock was given
	secrets    []string         // WithSecrets, not yet decoded
	secretsSet bool             // WithSecrets was given
	previous   []*rsa.PublicKey // WithPreviousKey: the Verifier only
	err        error            // configuration error, reported by every Verify
}

func newSettings(opts []Option) settings {
	s := settings{maxBody: DefaultMaxBodyBytes, tolerance: DefaultTolerance, now: time.Now}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// Option configures a Verifier or a WebhookVerifier.
type Option func(*settings)

// NewVerifier returns a Verifier for pub, the key GET /pubkey/ gives your
// project's API key. A nil key or a bad option does not panic: every
// Verify then fails with ErrConfig (and Middleware answers 500).
//
// Give WithSecrets whenever you hold the project's IPN secret: a callback
// must then carry the project's HMAC headers as well, signed with one of
// the secrets. Give WithPreviousKey during a rotation of the callback key.
// WithTolerance and WithClock are bad options without WithSecrets:
// x-ca-signature has no timestamp.
func NewVerifier(pub *rsa.PublicKey, opts ...Option) *Verifier {
	v := &Verifier{settings: newSettings(opts)}
	v.pubs = append([]*rsa.PublicKey{pub}, v.previous...)
	if v.secretsSet {
		v.hmac = v.webhookKeys(nil)
	}
	switch {
	case v.err != nil:
	case pub == nil:
		v.err = fmt.Errorf("%w: nil public key", ErrConfig)
	case v.timed && !v.secretsSet:
		v.err = fmt.Errorf("%w: x-ca-signature has no timestamp: WithTolerance and WithClock are for webhook verifiers, or a Verifier given WithSecrets", ErrConfig)
	}
	return v
}

// WithSecrets makes a Verifier require, beside x-ca-signature, the
// project's HMAC headers (x-service-id, x-service-timestamp,
// x-service-signature, checked as WebhookVerifier checks them) signed with
// one of secrets, the project's IPN secrets ("whsec_..."; the new and the
// old one during a rotation). The RSA key proves payhook sent a callback;
// the HMAC proves it was sent for your project, with a fresh timestamp.
// WithSecrets with no secret, or a malformed one, is a bad option
// (ErrConfig). Given to NewWebhookVerifier, secrets are added to its own.
func WithSecrets(secrets ...string) Option {
	return func(s *settings) {
		s.secretsSet = true
		s.secrets = append(s.secrets, secrets...)
	}
}

// WithPreviousKey makes a Verifier also accept x-ca-signature made with
// pub: the previous_pubkey of GET /pubkey/ during a rotation of the
// project's callback key, when callbacks signed before it are still
// retried. Drop it (build a new Verifier) once previous_until has passed.
// It may be given more than once. A nil key is a bad option (ErrConfig),
// and so is WithPreviousKey given to NewWebhookVerifier.
func WithPreviousKey(pub *rsa.PublicKey) Option {
	return func(s *settings) {
		if pub == nil {
			s.fail(fmt.Errorf("%w: nil previous public key", ErrConfig))
			return
		}
		s.previous = append(s.previous, pub)
	}
}

// WithBaseURL sets the scheme and host (scheme://host[:port]) under which
// the service reaches this server, for GET callbacks received behind a
// TLS-terminating proxy. The signed URL is then base + r.RequestURI.
// Without it the scheme is https when r.TLS is set, http otherwise, and the
// host is r.Host.
func WithBaseURL(base string) Option {
	return func(s *settings) {
		u, err := url.Parse(base)
		switch {
		case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Host == "", u.User != nil,
			u.Path != "" && u.Path != "/", u.RawQuery != "", u.ForceQuery, u.Fragment != "",
			!strings.HasPrefix(base, u.Scheme+"://"):
			s.fail(fmt.Errorf("%w: base URL %q is not scheme://host[:port]", ErrConfig, base))
			return
		}
		s.base = u.Scheme + "://" + u.Host
	}
}

// WithMaxBodyBytes sets the largest POST body Verify reads; n <= 0 keeps
// DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(s *settings) {
		if n > 0 {
			s.maxBody = n
		}
	}
}

// fail keeps the first configuration error.
func (s *settings) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Verify checks the signature of r and returns the data it covers: the full
// URL for GET, the raw body for POST. For POST the body is read (at most the
// configured limit), verified before any parsing, and restored in r.Body so
// the handler can read it again. With WithSecrets the project's HMAC
// headers are required too (their timestamp is checked before the body is
// read), and both signatures must match the same data. Errors wrap
// ErrMissingSignature, ErrBadSignature, ErrBodyTooLarge, ErrMethod or
// ErrConfig, with WithSecrets also ErrMissingWebhookHeader,
// ErrBadTimestamp, ErrStaleTimestamp or ErrBadWebhookSignature, or report
// a failure to read the body.
func (v *Verifier) Verify(r *http.Request) ([]byte, error) {
	if v.err != nil {
		return nil, v.err
	}
	sig, err := signature(r.Header)
	if err != nil {
		return nil, err
	}
	var wh webhookSignature
	if v.hmac != nil {
		if wh, err = v.webhookHeaders(r.Header); err != nil {
			return nil, err
		}
	}
	data, err := v.signedData(r)
	if err != nil {
		return nil, err
	}
	if !v.rsaMatches(data, sig) {
		return nil, fmt.Errorf("%w: does not match the %s", ErrBadSignature, signedName(r.Method))
	}
	if v.hmac != nil && !matches(v.hmac, wh.id, wh.ts, data, wh.sig) {
		return nil, fmt.Errorf("%w: no v1 signature matches the %s", ErrBadWebhookSignature, signedName(r.Method))
	}
	return data, nil
}

// rsaMatches reports whether sig is a signature of data by one of the
// verifier's keys.
func (v *Verifier) rsaMatches(data, sig []byte) bool {
	sum := sha256.Sum256(data)
	for _, pub := range v.pubs {
		if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil {
			return true
		}
	}
	return false
}

func signedName(method string) string {
	if method == http.MethodPost {
		return "body"
	}
	return "URL"
}

// signature decodes the one x-ca-signature header of h.
func signature(h http.Header) ([]byte, error) {
	vals := h.Values(SignatureHeader)
	switch {
	case len(vals) == 0 || strings.TrimSpace(vals[0]) == "" && len(vals) == 1:
		return nil, ErrMissingSignature
	case len(vals) > 1:
		return nil, fmt.Errorf("%w: header given %d times", ErrBadSignature, len(vals))
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(vals[0]))
	if err != nil {
		return nil, fmt.Errorf("%w: not standard Base64", ErrBadSignature)
	}
	return sig, nil
}

// requestURL is the URL the service requested: scheme and host from the
// base URL or the request, then the request target exactly as received.
func (v *settings) requestURL(r *http.Request) string {
	target := r.RequestURI
	if target == "" { // a request built in-process, not received by a server
		target = r.URL.RequestURI()
	}
	if !strings.HasPrefix(target, "/") {
		// Absolute form ("GET http://host/path HTTP/1.1"): the URL is given.
		if v.base == "" {
			return target
		}
		if i := strings.Index(target, "://"); i >= 0 {
			rest := target[i+3:]
			if j := strings.IndexAny(rest, "/?"); j >= 0 {
				return v.base + rest[j:]
			}
			return v.base + "/"
		}
	}
	if v.base != "" {
		return v.base + target
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + target
}

// signedData reads what a request's signature covers: the full URL for
// GET, the raw body for POST (read up to the limit and put back).
func (v *settings) signedData(r *http.Request) ([]byte, error) {
	switch r.Method {
	case http.MethodGet, "":
		return []byte(v.requestURL(r)), nil
	case http.MethodPost:
		return v.readBody(r)
	default:
		return nil, fmt.Errorf("%w: %s", ErrMethod, r.Method)
	}
}

// readBody reads r.Body up to the limit and puts the bytes back.
func (v *settings) readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		r.Body = http.NoBody
		return []byte{}, nil
	}
	if r.ContentLength > v.maxBody {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrBodyTooLarge, r.ContentLength, v.maxBody)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, v.maxBody+1))
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("read callback body: %w", err)
	}
	if int64(len(body)) > v.maxBody {
		return nil, fmt.Errorf("%w: limit %d bytes", ErrBodyTooLarge, v.maxBody)
	}
	return body, nil
}

// Middleware verifies every request before next sees it. A request that
// fails is answered with a JSON error body {"status":"error","error":...}
// and 401 (missing or bad signature), 413 (body too large), 405 (method),
// 400 (unreadable body) or 500 (ErrConfig); next is not called. The service
// treats any of these as a failed delivery, so a genuine callback rejected
// by a misconfigured receiver is retried.
func (v *Verifier) Middleware(next http.Handler) http.Handler { return middleware(v.Verify, next) }

// middleware answers the requests verify refuses, and passes the others to
// next.
func middleware(verify func(*http.Request) ([]byte, error), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := verify(r); err != nil {
			status, msg := http.StatusBadRequest, "unreadable body"
			switch {
			case errors.Is(err, ErrMissingSignature), errors.Is(err, ErrMissingWebhookHeader):
				status, msg = http.StatusUnauthorized, "missing signature"
			case errors.Is(err, ErrBadSignature), errors.Is(err, ErrBadWebhookSignature):
				status, msg = http.StatusUnauthorized, "invalid signature"
			case errors.Is(err, ErrBadTimestamp):
				status, msg = http.StatusUnauthorized, "invalid timestamp"
			case errors.Is(err, ErrStaleTimestamp):
				status, msg = http.StatusUnauthorized, "timestamp outside tolerance"
			case errors.Is(err, ErrBodyTooLarge):
				status, msg = http.StatusRequestEntityTooLarge, "body too large"
			case errors.Is(err, ErrMethod):
				w.Header().Set("Allow", "GET, POST")
				status, msg = http.StatusMethodNotAllowed, "method not allowed"
			case errors.Is(err, ErrConfig):
				status, msg = http.StatusInternalServerError, "receiver misconfigured"
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, `{"status":"error","error":"`+msg+`"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
