package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
)

// TEST-ONLY secrets: this project's, and another project's.
var (
	ours   = "whsec_" + base64.StdEncoding.EncodeToString([]byte("our project's TEST-ONLY secret.."))
	theirs = "whsec_" + base64.StdEncoding.EncodeToString([]byte("another project's TEST-ONLY key."))
)

// testKey loads a TEST-ONLY private key of the receiver package's testdata.
func testKey(t *testing.T, name string) *rsa.PrivateKey {
	t.Helper()
	b, err := os.ReadFile("../../receiver/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

func publicPEM(t *testing.T, k *rsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// send builds a JSON POST as the service sends it: x-ca-signature by
// rsaKey (nil: none) and the HMAC headers of an attempt at at by secret
// ("": none), and returns the status verified answers.
func send(t *testing.T, h http.Handler, rsaKey *rsa.PrivateKey, secret string, at time.Time) int {
	t.Helper()
	req := payload.Request{Method: http.MethodPost, URL: "http://shop.example/ipn?order=42", ContentType: payload.ContentTypeJSON,
		Body: []byte(`{"uuid":"6f1c2d3e-0000-4000-8000-000000000001","payment_status":"confirmed","value_coin":"0.5"}`)}
	r := httptest.NewRequest(req.Method, req.URL, bytes.NewReader(req.Body))
	r.Header.Set("Content-Type", req.ContentType)
	if rsaKey != nil {
		sig, err := signer.NewRSASigner(rsaKey).Sign("", req)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set(receiver.SignatureHeader, sig)
	}
	if secret != "" {
		hd, err := signer.NewWebhookSigner(signer.StaticSecrets(secret)).SignAttempt(context.Background(), "",
			signer.Attempt{UUID: "6f1c2d3e-0000-4000-8000-000000000001", Time: at, Request: req})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hd {
			r.Header[k] = v
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// TestVerified: issue 24, finding 1. With --secret every request must
// carry the project's HMAC, and a callback (x-ca-signature) must verify
// against the pinned key as well; the previous key is accepted until
// previous_until.
func TestVerified(t *testing.T) {
	key, old := testKey(t, "test_key.pem"), testKey(t, "other_key.pem")
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1795000000, 0)
	until := now.Add(time.Hour)
	c := clock.NewManual(now)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); len(b) == 0 {
			t.Error("next got no body")
		}
	})
	withSecret := verified(next, pinned{pub: &key.PublicKey, prev: &old.PublicKey, prevUntil: until}, ours, nil, c.Now)
	noSecret := verified(next, pinned{pub: &key.PublicKey}, "", nil, c.Now)
	for _, tc := range []struct {
		name   string
		h      http.Handler
		rsa    *rsa.PrivateKey
		secret string
		after  bool // at a clock past previous_until
		want   int
	}{
		{"callback: valid RSA and HMAC", withSecret, key, ours, false, 200},
		{"callback: valid RSA, no HMAC", withSecret, key, "", false, 401},
		{"callback: valid RSA, another project's HMAC", withSecret, key, theirs, false, 401},
		{"callback: valid HMAC, RSA by a key not pinned", withSecret, stranger, ours, false, 401},
		{"callback: previous key before previous_until", withSecret, old, ours, false, 200},
		{"callback: previous key after previous_until", withSecret, old, ours, true, 401},
		{"callback: current key after previous_until", withSecret, key, ours, true, 200},
		{"webhook: HMAC only", withSecret, nil, ours, false, 200},
		{"webhook: another project's HMAC", withSecret, nil, theirs, false, 401},
		{"nothing signed", withSecret, nil, "", false, 401},
		{"no secret: valid RSA", noSecret, key, "", false, 200},
		{"no secret: RSA by a key not pinned", noSecret, old, "", false, 401},
		{"no secret: webhook", noSecret, nil, ours, false, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.Set(now)
			if tc.after {
				c.Set(until.Add(time.Second))
			}
			if got := send(t, tc.h, tc.rsa, tc.secret, c.Now()); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
}

// TestLoadKeys: /pubkey/ is asked with the project's API key, and the
// previous key is pinned while previous_until is ahead.
func TestLoadKeys(t *testing.T) {
	key, old := testKey(t, "test_key.pem"), testKey(t, "other_key.pem")
	now := time.Unix(1795000000, 0)
	until := now.Add(72 * time.Hour).UTC().Truncate(time.Second)
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("apikey")
		body := map[string]string{"pubkey": publicPEM(t, key)}
		if gotKey != "" {
			body["previous_pubkey"] = publicPEM(t, old)
			body["previous_until"] = until.Format(time.RFC3339)
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer srv.Close()

	keys, err := loadKeys(context.Background(), srv.URL+"/pubkey/", "", "project-key", now)
	if err != nil {
		t.Fatal(err)
	}
	if gotKey != "project-key" {
		t.Errorf("apikey header %q, want the project's key", gotKey)
	}
	if !keys.pub.Equal(&key.PublicKey) || keys.prev == nil || !keys.prev.Equal(&old.PublicKey) || !keys.prevUntil.Equal(until) {
		t.Errorf("pinned %+v, want the key, the previous one and its time", keys)
	}

	keys, err = loadKeys(context.Background(), srv.URL+"/pubkey/", "", "project-key", until.Add(time.Second))
	if err != nil || keys.prev != nil {
		t.Errorf("after previous_until: previous pinned %v (%v), want none", keys.prev != nil, err)
	}
	keys, err = loadKeys(context.Background(), srv.URL+"/pubkey/", "", "", now)
	if err != nil || gotKey != "" || keys.prev != nil {
		t.Errorf("without an API key: header %q, previous pinned %v (%v)", gotKey, keys.prev != nil, err)
	}
}
