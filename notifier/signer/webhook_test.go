package signer_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

// The Standard Webhooks specification's published test vector: matching it
// is what lets its libraries verify payhook's webhooks.
const (
	stdSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	stdID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	stdTimestamp = 1614265330
	stdPayload   = `{"test": 2432232314}`
	stdSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignStandardWebhooksVector(t *testing.T) {
	got, err := signer.Sign(stdSecret, stdID, stdTimestamp, []byte(stdPayload))
	if err != nil || got != stdSignature {
		t.Fatalf("Sign = %q, %v; want %q", got, err, stdSignature)
	}
}

// TestBadSecrets: a malformed secret is refused, the error says why and
// never shows the secret.
func TestBadSecrets(t *testing.T) {
	tests := []struct{ name, secret, says string }{
		{"empty", "", "empty"},
		{"no prefix", strings.TrimPrefix(stdSecret, "whsec_"), `does not start with "whsec_"`},
		{"prefix in capitals", "WHSEC_" + strings.TrimPrefix(stdSecret, "whsec_"), `does not start with "whsec_"`},
		{"not Base64", "whsec_s3cr3t!p4ssw0rd", "not standard Base64"},
		{"unpadded Base64", "whsec_" + base64.RawStdEncoding.EncodeToString([]byte("seventeen bytes!!")), "not standard Base64"},
		{"nothing after the prefix", "whsec_", "0 bytes"},
		{"too short", "whsec_" + base64.StdEncoding.EncodeToString([]byte("fifteen bytes!!")), "15 bytes after decoding, at least 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := signer.Sign(tc.secret, "id", 1, nil)
			if !errors.Is(err, signer.ErrBadSecret) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Sign = %v, want ErrBadSecret saying %q", err, tc.says)
			}
			if tail := strings.TrimPrefix(tc.secret, "whsec_"); len(tail) > 3 && strings.Contains(err.Error(), tail) {
				t.Fatalf("error shows the secret: %v", err)
			}
			s := signer.NewWebhookSigner(signer.StaticSecrets(stdSecret, tc.secret))
			_, err = s.SignAttempt(context.Background(), "project:9", signer.Attempt{UUID: "id", Time: time.Unix(1, 0)})
			if !errors.Is(err, signer.ErrBadSecret) || !strings.Contains(err.Error(), `webhook secret 2 of "project:9"`) {
				t.Fatalf("SignAttempt = %v, want ErrBadSecret naming the key and which secret", err)
			}
		})
	}
}

func TestGenerateSecret(t *testing.T) {
	a, err := signer.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := signer.GenerateSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two secrets are equal")
	}
	for _, s := range []string{a, b} {
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, signer.SecretPrefix))
		if !strings.HasPrefix(s, signer.SecretPrefix) || err != nil || len(k) != signer.SecretBytes {
			t.Fatalf("%q: want whsec_ + standard Base64 of %d bytes (%v)", s, signer.SecretBytes, err)
		}
		if _, err := signer.Sign(s, "id", 1, nil); err != nil {
			t.Fatalf("a generated secret does not sign: %v", err)
		}
	}
}

// ring is a SecretRing that records what it was asked.
type ring struct {
	secrets []string
	err     error
	key     string
	at      time.Time
}

func (r *ring) Secrets(_ context.Context, key string, at time.Time) ([]string, error) {
	r.key, r.at = key, at
	return r.secrets, r.err
}

func TestWebhookSignerHeaders(t *testing.T) {
	old := "whsec_" + base64.StdEncoding.EncodeToString([]byte("the previous secret, in grace"))
	at := time.Unix(stdTimestamp, 999_000_000) // seconds are signed, not the fraction
	post := payload.Request{Method: http.MethodPost, URL: "https://shop.example/ipn", ContentType: payload.ContentTypeJSON, Body: []byte(stdPayload)}
	get := payload.Request{Method: http.MethodGet, URL: "https://shop.example/ipn?uuid=1&value_coin=0.5"}
	sign := func(secret string, data string) string {
		s, err := signer.Sign(secret, stdID, stdTimestamp, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name    string
		secrets []string
		req     payload.Request
		event   string
		sig     string
	}{
		{"POST signs the body", []string{stdSecret}, post, "checkout.payment.confirmed", stdSignature},
		{"GET signs the full URL", []string{stdSecret}, get, "deposit.payment.pending", sign(stdSecret, get.URL)},
		{"rotation: current then old", []string{stdSecret, old}, post, "custom.payment.completed", stdSignature + " " + sign(old, stdPayload)},
		{"the same secret twice signs once", []string{stdSecret, stdSecret}, post, "", stdSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &ring{secrets: tc.secrets}
			s := signer.NewWebhookSigner(r)
			if s.Scheme() != signer.SchemeWebhook {
				t.Fatalf("scheme %q", s.Scheme())
			}
			h, err := s.SignAttempt(context.Background(), "project:1", signer.Attempt{UUID: stdID, Time: at, Request: tc.req, Event: tc.event})
			if err != nil {
				t.Fatal(err)
			}
			if r.key != "project:1" || !r.at.Equal(at) {
				t.Fatalf("ring asked for %q at %v, want the message's key at the attempt's time", r.key, r.at)
			}
			want := http.Header{}
			want.Set("x-service-id", stdID)
			want.Set("x-service-timestamp", "1614265330")
			want.Set("x-service-signature", tc.sig)
			if tc.event != "" {
				want.Set("x-service-event", tc.event)
			}
			if len(h) != len(want) {
				t.Fatalf("headers %v, want %v", h, want)
			}
			for k := range want {
				if h.Get(k) != want.Get(k) {
					t.Errorf("%s = %q, want %q", k, h.Get(k), want.Get(k))
				}
			}
		})
	}
}

func TestWebhookSignerFailures(t *testing.T) {
	a := signer.Attempt{UUID: stdID, Time: time.Unix(stdTimestamp, 0)}
	boom := errors.New("store down")
	for _, tc := range []struct {
		name string
		ring signer.SecretRing
		want error
	}{
		{"no secret", &ring{}, signer.ErrNoSecret},
		{"ring fails", &ring{err: boom}, boom},
		{"static ring without secrets", signer.StaticSecrets(), signer.ErrNoSecret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := signer.NewWebhookSigner(tc.ring).SignAttempt(context.Background(), "project:4", a)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "project:4") {
				t.Fatalf("SignAttempt = %v, want %v naming the key", err, tc.want)
			}
		})
	}
}

// TestStaticSecretsCopies: the ring keeps its own copy of the secrets.
func TestStaticSecretsCopies(t *testing.T) {
	in := []string{stdSecret}
	r := signer.StaticSecrets(in...)
	in[0] = "changed"
	got, err := r.Secrets(context.Background(), "any", time.Time{})
	if err != nil || len(got) != 1 || got[0] != stdSecret {
		t.Fatalf("Secrets = %v, %v", got, err)
	}
}

// storedSpy is a StoredSigner that records the key it signs with.
type storedSpy struct{ key string }

func (s *storedSpy) Scheme() string { return "spy" }
func (s *storedSpy) Header() string { return "x-spy" }
func (s *storedSpy) Sign(key string, _ payload.Request) (string, error) {
	s.key = key
	return "spied", nil
}

// TestBoth: a combined signer signs once with the stored signer (the
// message's key: each owner has its own RSA key) and at every attempt with the attempt signer (the message's
// key).
func TestBoth(t *testing.T) {
	spy := &storedSpy{key: "unset"}
	r := &ring{secrets: []string{stdSecret}}
	b := signer.NewBoth(signer.SchemeRSAWebhook, spy, signer.NewWebhookSigner(r))
	if b.Scheme() != "rsa-sha256+webhook-v1" || b.Header() != "x-spy" {
		t.Fatalf("scheme %q, header %q", b.Scheme(), b.Header())
	}
	if sig, err := b.Sign("project:5", payload.Request{Method: http.MethodPost}); err != nil || sig != "spied" || spy.key != "project:5" {
		t.Fatalf("Sign = %q, %v with key %q; want the message's key (each owner's RSA key)", sig, err, spy.key)
	}
	h, err := b.SignAttempt(context.Background(), "project:5", signer.Attempt{UUID: stdID, Time: time.Unix(stdTimestamp, 0), Request: payload.Request{Method: http.MethodPost, Body: []byte(stdPayload)}})
	if err != nil || h.Get(signer.WebhookSignatureHeader) != stdSignature || r.key != "project:5" {
		t.Fatalf("SignAttempt = %v, %v (ring asked for %q)", h, err, r.key)
	}

	// With the RSA signer, as the custom payment flow uses it.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaSigner := signer.NewRSASigner(key)
	both := signer.NewBoth(signer.SchemeRSAWebhook, rsaSigner, signer.NewWebhookSigner(r))
	req := payload.Request{Method: http.MethodPost, Body: []byte(stdPayload)}
	want, _ := rsaSigner.Sign("", req)
	if got, err := both.Sign("project:5", req); err != nil || got != want || both.Header() != signer.SignatureHeader {
		t.Fatalf("Sign = %q, %v; want the RSA signature in %s", got, err, signer.SignatureHeader)
	}
}
