package receiver_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server/address"
)

// TestVerifierAcceptsPayload sends what address.EncodeCallback builds, signed as the
// service signs it, through a real server, for every transport; the handler
// behind the Middleware parses the verified callback.
func TestVerifierAcceptsPayload(t *testing.T) {
	key := testKey(t, "test_key.pem")
	v := receiver.NewVerifier(&key.PublicKey)
	var mu sync.Mutex
	var got []string // uuid and order, as the handler parsed them
	srv := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var uuid, order string
		switch {
		case r.Method == http.MethodGet:
			uuid, order = r.URL.Query().Get("uuid"), r.URL.Query().Get("order")
		case strings.HasPrefix(r.Header.Get("Content-Type"), payload.ContentTypeJSON):
			var m map[string]any
			if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			uuid, _ = m["uuid"].(string)
			order, _ = m["order"].(string)
		default:
			uuid, order = r.PostFormValue("uuid"), r.PostFormValue("order")
		}
		mu.Lock()
		got = append(got, uuid+" "+order)
		mu.Unlock()
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})))
	defer srv.Close()

	pending, completed := vectorCallbacks()
	for _, cb := range []address.Callback{pending, completed} {
		for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportForm, payload.TransportJSON} {
			t.Run(cb.PaymentStatus+"/"+tr.String(), func(t *testing.T) {
				req, err := address.EncodeCallback(srv.URL+"/cb?order=42&note=caf%C3%A9+%26+more", tr, cb)
				if err != nil {
					t.Fatal(err)
				}
				sig := sign(t, key, payload.SignedData(req))
				if code := deliver(t, srv, req, sig); code != http.StatusOK {
					t.Fatalf("status %d, want 200", code)
				}
				mu.Lock()
				last := got[len(got)-1]
				mu.Unlock()
				if last != cb.UUID+" 42" {
					t.Fatalf("handler parsed %q", last)
				}
				// The same signature on altered data is refused.
				bad := req
				if tr == payload.TransportGET {
					bad.URL = strings.Replace(req.URL, "order=42", "order=43", 1)
				} else {
					bad.Body = bytes.Replace(req.Body, []byte("42"), []byte("43"), 1)
				}
				if code := deliver(t, srv, bad, sig); code != http.StatusUnauthorized {
					t.Fatalf("tampered request: status %d, want 401", code)
				}
			})
		}
	}
}

// deliver sends req as the service would and returns the status code.
func deliver(t *testing.T, srv *httptest.Server, r payload.Request, sig string) int {
	t.Helper()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequest(r.Method, r.URL, body)
	if err != nil {
		t.Fatal(err)
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	req.Header.Set(receiver.SignatureHeader, sig)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func TestParsePublicKeyPEM(t *testing.T) {
	key := testKey(t, "test_key.pem")
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&key.PublicKey)})
	pinned, err := os.ReadFile(filepath.Join("testdata", "test_key.pub.pem"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := os.ReadFile(filepath.Join("testdata", "test_key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ec.PublicKey)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallDER, _ := x509.MarshalPKIXPublicKey(&small.PublicKey)

	tests := []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"SubjectPublicKeyInfo with text around it", pinned, true},
		{"as generated", []byte(publicPEM(t, &key.PublicKey)), true},
		{"PKCS#1", pkcs1, true},
		{"empty", nil, false},
		{"not PEM", []byte("MIIBIjANBgkq"), false},
		{"private key", priv, false},
		{"EC key", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}), false},
		{"1024-bit RSA", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: smallDER}), false},
		{"corrupt DER", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pub, err := receiver.ParsePublicKeyPEM(tc.in)
			if tc.ok {
				if err != nil || !pub.Equal(&key.PublicKey) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if !errors.Is(err, receiver.ErrBadKey) {
				t.Fatalf("err = %v, want ErrBadKey", err)
			}
		})
	}
}

func TestMiddlewareRefusals(t *testing.T) {
	key := testKey(t, "test_key.pem")
	body := []byte(`{"uuid":"x"}`)
	good := sign(t, key, body)
	tests := []struct {
		name   string
		v      *receiver.Verifier
		method string
		body   string
		sigs   []string
		want   int
	}{
		{"valid", receiver.NewVerifier(&key.PublicKey), "POST", string(body), []string{good}, 200},
		{"valid with whitespace around the header", receiver.NewVerifier(&key.PublicKey), "POST", string(body), []string{" " + good + " "}, 200},
		{"missing signature", receiver.NewVerifier(&key.PublicKey), "POST", string(body), nil, 401},
		{"empty signature", receiver.NewVerifier(&key.PublicKey), "POST", string(body), []string{""}, 401},
		{"two signatures", receiver.NewVerifier(&key.PublicKey), "POST", string(body), []string{good, good}, 401},
		{"not standard Base64", receiver.NewVerifier(&key.PublicKey), "POST", string(body), []string{strings.NewReplacer("+", "-", "/", "_").Replace(good) + "*"}, 401},
		{"body over the limit", receiver.NewVerifier(&key.PublicKey, receiver.WithMaxBodyBytes(8)), "POST", string(body), []string{good}, 413},
		{"body at the limit", receiver.NewVerifier(&key.PublicKey, receiver.WithMaxBodyBytes(int64(len(body)))), "POST", string(body), []string{good}, 200},
		{"PUT", receiver.NewVerifier(&key.PublicKey), "PUT", string(body), []string{good}, 405},
		{"nil key", receiver.NewVerifier(nil), "POST", string(body), []string{good}, 500},
		{"bad base URL", receiver.NewVerifier(&key.PublicKey, receiver.WithBaseURL("shop.example")), "GET", "", []string{good}, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			h := tc.v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				called = true
				b, _ := io.ReadAll(r.Body)
				if !bytes.Equal(b, body) {
					t.Errorf("handler read %q", b)
				}
			}))
			r := httptest.NewRequest(tc.method, "http://merchant.example/cb", strings.NewReader(tc.body))
			for _, s := range tc.sigs {
				r.Header.Add(receiver.SignatureHeader, s)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d (%s)", w.Code, tc.want, w.Body)
			}
			if called != (tc.want == 200) {
				t.Fatalf("next called = %v", called)
			}
			if tc.want != 200 {
				var m map[string]string
				if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m["status"] != "error" || m["error"] == "" {
					t.Fatalf("error body %q", w.Body)
				}
			}
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	key := testKey(t, "test_key.pem")
	v := receiver.NewVerifier(&key.PublicKey)
	r := httptest.NewRequest("GET", "http://merchant.example/cb?a=1", nil)
	if _, err := v.Verify(r); !errors.Is(err, receiver.ErrMissingSignature) {
		t.Errorf("no header: %v", err)
	}
	r.Header.Set(receiver.SignatureHeader, sign(t, testKey(t, "other_key.pem"), []byte("http://merchant.example/cb?a=1")))
	if _, err := v.Verify(r); !errors.Is(err, receiver.ErrBadSignature) {
		t.Errorf("other key: %v", err)
	}
}

// TestGETURLReconstruction covers how the signed URL is rebuilt from a
// request: origin-form with and without TLS and base URL, absolute-form,
// and requests built in-process.
func TestGETURLReconstruction(t *testing.T) {
	key := testKey(t, "test_key.pem")
	tests := []struct {
		name   string
		base   string
		build  func() *http.Request
		signed string
	}{
		{"origin form over http", "", func() *http.Request {
			r := httptest.NewRequest("GET", "/cb?a=%2F+b", nil)
			r.Host = "shop.example:8080"
			return r
		}, "http://shop.example:8080/cb?a=%2F+b"},
		{"origin form over TLS", "", func() *http.Request {
			r := httptest.NewRequest("GET", "https://shop.example/cb?a=1", nil)
			r.RequestURI = "/cb?a=1"
			return r
		}, "https://shop.example/cb?a=1"},
		{"base URL replaces scheme and host", "https://shop.example/", func() *http.Request {
			r := httptest.NewRequest("GET", "/cb?a=1", nil)
			r.Host = "10.0.0.5:3000"
			return r
		}, "https://shop.example/cb?a=1"},
		{"absolute form as received", "", func() *http.Request {
			return httptest.NewRequest("GET", "http://shop.example/cb?a=1", nil)
		}, "http://shop.example/cb?a=1"},
		{"absolute form with base URL", "https://shop.example", func() *http.Request {
			return httptest.NewRequest("GET", "http://internal:3000/cb?a=1", nil)
		}, "https://shop.example/cb?a=1"},
		{"built in-process (no RequestURI)", "", func() *http.Request {
			r, _ := http.NewRequest("GET", "http://shop.example/cb?a=%2F", nil)
			return r
		}, "http://shop.example/cb?a=%2F"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []receiver.Option
			if tc.base != "" {
				opts = append(opts, receiver.WithBaseURL(tc.base))
			}
			r := tc.build()
			r.Header.Set(receiver.SignatureHeader, sign(t, key, []byte(tc.signed)))
			data, err := receiver.NewVerifier(&key.PublicKey, opts...).Verify(r)
			if err != nil || string(data) != tc.signed {
				t.Fatalf("Verify = %q, %v; want %q", data, err, tc.signed)
			}
		})
	}
}

func TestWithBaseURL(t *testing.T) {
	key := testKey(t, "test_key.pem")
	for base, ok := range map[string]bool{
		"https://shop.example":        true,
		"https://shop.example/":       true,
		"http://127.0.0.1:8080":       true,
		"http://[::1]:3000":           true,
		"shop.example":                false,
		"ftp://shop.example":          false,
		"https://shop.example/prefix": false,
		"https://shop.example?x=1":    false,
		"https://shop.example/#x":     false,
		"https://user@shop.example":   false,
		"HTTPS://shop.example":        false,
		"":                            false,
	} {
		r := httptest.NewRequest("GET", "/cb", nil)
		r.Header.Set(receiver.SignatureHeader, sign(t, key, []byte(strings.TrimSuffix(base, "/")+"/cb")))
		_, err := receiver.NewVerifier(&key.PublicKey, receiver.WithBaseURL(base)).Verify(r)
		if ok && err != nil {
			t.Errorf("%q: %v", base, err)
		}
		if !ok && !errors.Is(err, receiver.ErrConfig) {
			t.Errorf("%q: err = %v, want ErrConfig", base, err)
		}
	}
}
