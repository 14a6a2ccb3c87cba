package main

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/payhook/payhook/receiver"
)

// TestEveryRequestIsLogged: the receiver logs "verified" for a request
// whose signature checks out and "rejected (why)" for every other.
func TestEveryRequestIsLogged(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := logRequests(log, receiver.NewVerifier(&key.PublicKey).Middleware(&handler{log: log, done: map[string]bool{}}))
	const target = "http://shop.example/hook?uuid=u1&payment_status=confirmed&value_coin=0.01&coin=btc"
	sign := func(data string) string {
		sum := sha256.Sum256([]byte(data))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(sig)
	}
	rows := []struct {
		name, sig, want string
		code            int
	}{
		{"signed", sign(target), `msg=verified`, 200},
		{"unsigned", "", `msg="rejected (missing signature)"`, 401},
		{"signed by another key", sign(target + "&x=1"), `msg="rejected (invalid signature)"`, 401},
	}
	for _, r := range rows {
		logs.Reset()
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if r.sig != "" {
			req.Header.Set(receiver.SignatureHeader, r.sig)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != r.code || strings.Count(logs.String(), "\n") < 1 || !strings.Contains(logs.String(), r.want) {
			t.Errorf("%s: HTTP %d, logged %q; want %d and %s", r.name, w.Code, logs.String(), r.code, r.want)
		}
	}
	// A request of another method is rejected too, and says why.
	logs.Reset()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, target, nil))
	if !strings.Contains(logs.String(), `rejected (`) {
		t.Errorf("a PUT: logged %q", logs.String())
	}
}
