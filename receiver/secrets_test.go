package receiver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server/address"
)

// signedCallback is a low-level callback as the service sends it: the
// request, its stored x-ca-signature by rsaKey and the HMAC headers of one
// attempt at the time at, by secrets (the service's combined signer).
func signedCallback(t *testing.T, tr payload.Transport, rsaKeyFile string, at time.Time, secrets ...string) *http.Request {
	t.Helper()
	pending, _ := vectorCallbacks()
	req, err := address.EncodeCallback("https://shop.example/ipn?order=42&token=abc", tr, pending)
	if err != nil {
		t.Fatal(err)
	}
	both := signer.NewBoth(signer.SchemeRSAWebhook, signer.NewRSASigner(testKey(t, rsaKeyFile)), signer.NewWebhookSigner(signer.StaticSecrets(secrets...)))
	sig, err := both.Sign("", req)
	if err != nil {
		t.Fatal(err)
	}
	h, err := both.SignAttempt(context.Background(), "", signer.Attempt{UUID: pending.UUID, Time: at, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	r := httptest.NewRequest(req.Method, req.URL, body)
	if req.ContentType != "" {
		r.Header.Set("Content-Type", req.ContentType)
	}
	for k, vs := range h {
		r.Header[k] = vs
	}
	r.Header.Set(receiver.SignatureHeader, sig)
	return r
}

// TestVerifierWithSecrets: issue 24, finding 1. With the project's secret
// configured, a callback must carry a valid x-ca-signature AND the
// project's HMAC: a callback another project made payhook send to this
// URL (signed by payhook's key, but with that project's secret) is
// refused, and so is one whose HMAC headers were stripped.
func TestVerifierWithSecrets(t *testing.T) {
	key := testKey(t, "test_key.pem")
	old := testKey(t, "other_key.pem")
	at := time.Unix(1795000000, 0)
	clock := receiver.WithClock(func() time.Time { return at.Add(time.Minute) })
	withSecret := receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent), clock)
	tests := []struct {
		name    string
		v       *receiver.Verifier
		keyFile string   // signs x-ca-signature
		secrets []string // sign the HMAC headers
		mutate  func(*http.Request)
		want    error // nil: accepted
		code    int
	}{
		{"valid RSA and HMAC", withSecret, "test_key.pem", []string{whCurrent}, nil, nil, 200},
		{"valid RSA, HMAC of the new and the old secret", withSecret, "test_key.pem", []string{whCurrent, whOld}, nil, nil, 200},
		{"receiver holding the old and the new secret", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whOld, whCurrent), clock),
			"test_key.pem", []string{whCurrent}, nil, nil, 200},
		{"valid RSA, HMAC of another project", withSecret, "test_key.pem", []string{whOther}, nil, receiver.ErrBadWebhookSignature, 401},
		{"valid RSA, HMAC headers stripped", withSecret, "test_key.pem", []string{whCurrent}, func(r *http.Request) {
			for _, h := range []string{receiver.WebhookIDHeader, receiver.WebhookTimestampHeader, receiver.WebhookSignatureHeader} {
				r.Header.Del(h)
			}
		}, receiver.ErrMissingWebhookHeader, 401},
		{"valid RSA, no x-service-signature", withSecret, "test_key.pem", []string{whCurrent}, func(r *http.Request) {
			r.Header.Del(receiver.WebhookSignatureHeader)
		}, receiver.ErrMissingWebhookHeader, 401},
		{"valid RSA, HMAC of another uuid", withSecret, "test_key.pem", []string{whCurrent}, func(r *http.Request) {
			r.Header.Set(receiver.WebhookIDHeader, "another-uuid")
		}, receiver.ErrBadWebhookSignature, 401},
		{"valid RSA and HMAC, timestamp outside the tolerance", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent),
			receiver.WithClock(func() time.Time { return at.Add(time.Hour) })), "test_key.pem", []string{whCurrent}, nil, receiver.ErrStaleTimestamp, 401},
		{"the same within a 2 h tolerance", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent), receiver.WithTolerance(2*time.Hour),
			receiver.WithClock(func() time.Time { return at.Add(time.Hour) })), "test_key.pem", []string{whCurrent}, nil, nil, 200},
		{"valid HMAC, x-ca-signature stripped", withSecret, "test_key.pem", []string{whCurrent}, func(r *http.Request) {
			r.Header.Del(receiver.SignatureHeader)
		}, receiver.ErrMissingSignature, 401},
		{"valid HMAC, x-ca-signature by another key", withSecret, "other_key.pem", []string{whCurrent}, nil, receiver.ErrBadSignature, 401},
		{"without secrets the HMAC is not looked at", receiver.NewVerifier(&key.PublicKey), "test_key.pem", []string{whOther}, nil, nil, 200},
		{"previous key configured: its signature is accepted", receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey), receiver.WithSecrets(whCurrent), clock),
			"other_key.pem", []string{whCurrent}, nil, nil, 200},
		{"previous key configured: the current key's too", receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey), receiver.WithSecrets(whCurrent), clock),
			"test_key.pem", []string{whCurrent}, nil, nil, 200},
		{"previous key configured: still the project's HMAC", receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey), receiver.WithSecrets(whCurrent), clock),
			"other_key.pem", []string{whOther}, nil, receiver.ErrBadWebhookSignature, 401},
		{"previous key alone, without secrets", receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey)), "other_key.pem", []string{whOther}, nil, nil, 200},
		{"previous key no longer configured", withSecret, "other_key.pem", []string{whCurrent}, nil, receiver.ErrBadSignature, 401},
	}
	for _, tc := range tests {
		for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportForm, payload.TransportJSON} {
			t.Run(tc.name+"/"+tr.String(), func(t *testing.T) {
				r := signedCallback(t, tr, tc.keyFile, at, tc.secrets...)
				if tc.mutate != nil {
					tc.mutate(r)
				}
				var want []byte
				if r.Method == http.MethodPost {
					want, _ = io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(want))
				}
				data, err := tc.v.Verify(r)
				if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
					t.Fatalf("Verify: %v, want %v", err, tc.want)
				}
				if err == nil && r.Method == http.MethodPost && !bytes.Equal(data, want) {
					t.Fatalf("Verify returned %q, want the body", data)
				}

				// The Middleware answers the same, and next reads the body.
				r = signedCallback(t, tr, tc.keyFile, at, tc.secrets...)
				if tc.mutate != nil {
					tc.mutate(r)
				}
				called := false
				w := httptest.NewRecorder()
				tc.v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					called = true
					if b, _ := io.ReadAll(r.Body); !bytes.Equal(b, want) {
						t.Errorf("next read %q", b)
					}
				})).ServeHTTP(w, r)
				if w.Code != tc.code || called != (tc.code == 200) {
					t.Fatalf("Middleware: %d (next called %v), want %d", w.Code, called, tc.code)
				}
			})
		}
	}
}

// TestVerifierSecretOptions: what a Verifier given WithSecrets or
// WithPreviousKey refuses to be built with, and that WithTolerance and
// WithClock are allowed once the HMAC (which has a timestamp) is checked.
func TestVerifierSecretOptions(t *testing.T) {
	key := testKey(t, "test_key.pem")
	r := func() *http.Request {
		return signedCallback(t, payload.TransportJSON, "test_key.pem", time.Now(), whCurrent)
	}
	for _, tc := range []struct {
		name string
		v    interface {
			Verify(*http.Request) ([]byte, error)
		}
		wantConfig bool
	}{
		{"WithSecrets and no secret", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets()), true},
		{"WithSecrets of an empty string", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets("")), true},
		{"WithSecrets of a malformed secret", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets("whsec_not a secret")), true},
		{"WithSecrets and a nil key", receiver.NewVerifier(nil, receiver.WithSecrets(whCurrent)), true},
		{"WithPreviousKey(nil)", receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(nil)), true},
		{"WithPreviousKey on a webhook verifier", receiver.NewWebhookVerifier([]string{whCurrent}, receiver.WithPreviousKey(&key.PublicKey)), true},
		{"WithSecrets and WithTolerance", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent), receiver.WithTolerance(time.Minute)), false},
		{"WithTolerance and WithSecrets, in that order", receiver.NewVerifier(&key.PublicKey, receiver.WithTolerance(time.Minute), receiver.WithSecrets(whCurrent)), false},
		{"WithSecrets and WithClock", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent), receiver.WithClock(time.Now)), false},
		{"WithSecrets given twice", receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whOld), receiver.WithSecrets(whCurrent)), false},
		{"WithSecrets on a webhook verifier adds to its secrets", receiver.NewWebhookVerifier(nil, receiver.WithSecrets(whCurrent)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.v.Verify(r())
			if errors.Is(err, receiver.ErrConfig) != tc.wantConfig || !tc.wantConfig && err != nil {
				t.Fatalf("Verify: %v, want ErrConfig %v", err, tc.wantConfig)
			}
			if err != nil && strings.Contains(err.Error(), "not a secret") {
				t.Fatalf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestVerifierWithSecretsChecksTimeBeforeBody: a stale HMAC timestamp is
// refused before the body is read, as WebhookVerifier does.
func TestVerifierWithSecretsChecksTimeBeforeBody(t *testing.T) {
	key := testKey(t, "test_key.pem")
	v := receiver.NewVerifier(&key.PublicKey, receiver.WithSecrets(whCurrent))
	r := httptest.NewRequest("POST", "https://shop.example/ipn", errReader{})
	r.Header.Set(receiver.SignatureHeader, sign(t, key, []byte("{}")))
	r.Header.Set(receiver.WebhookIDHeader, "x")
	r.Header.Set(receiver.WebhookTimestampHeader, strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10))
	r.Header.Set(receiver.WebhookSignatureHeader, "v1,AAAA")
	if _, err := v.Verify(r); !errors.Is(err, receiver.ErrStaleTimestamp) {
		t.Fatalf("Verify: %v, want ErrStaleTimestamp", err)
	}
}

// errReader fails the test's request body if it is read.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("the body was read") }
