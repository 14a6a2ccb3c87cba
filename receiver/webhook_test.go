package receiver_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/receiver"
)

// Test secrets (TEST-ONLY).
var (
	whCurrent = "whsec_" + base64.StdEncoding.EncodeToString([]byte("current test secret of 32 bytes!"))
	whOld     = "whsec_" + base64.StdEncoding.EncodeToString([]byte("old test secret, rotated away..."))
	whOther   = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a secret of some other project.."))
)

// whSign is the Standard Webhooks signature entry, computed here from its
// definition (not by the service's signer).
func whSign(t testing.TB, secret, id string, ts int64, data string) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + data))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestWebhookVerify covers what WebhookVerifier.Verify accepts and refuses,
// one named row per case, on requests built as a server receives them.
func TestWebhookVerify(t *testing.T) {
	const (
		id   = "0b4c3a52-7d4e-4c1b-9e2a-5b6c7d8e9f01"
		ts   = int64(1795000000)
		body = `{"uuid":"0b4c3a52-7d4e-4c1b-9e2a-5b6c7d8e9f01","payment_status":"confirmed","value_coin":"0.0015"}`
		get  = "https://shop.example/ipn?order=42&note=caf%C3%A9+%26+more&uuid=0b4c3a52"
	)
	at := time.Unix(ts, 0)
	good := whSign(t, whCurrent, id, ts, body)
	type request struct {
		method, url, body string
		id, ts            []string // header values (nil: absent)
		sig               []string
	}
	post := func(mutate ...func(*request)) request {
		r := request{method: "POST", url: "http://shop.example/ipn", body: body, id: []string{id}, ts: []string{strconv.FormatInt(ts, 10)}, sig: []string{good}}
		for _, m := range mutate {
			m(&r)
		}
		return r
	}
	sig := func(s ...string) func(*request) { return func(r *request) { r.sig = s } }
	tests := []struct {
		name    string
		secrets []string
		opts    []receiver.Option
		now     time.Time
		req     request
		want    error
	}{
		{name: "valid POST", req: post()},
		{name: "valid GET: the signed data is the full URL", opts: []receiver.Option{receiver.WithBaseURL("https://shop.example")},
			req: request{method: "GET", url: get, id: []string{id}, ts: []string{strconv.FormatInt(ts, 10)}, sig: []string{whSign(t, whCurrent, id, ts, get)}}},
		{name: "GET received over http while https was signed", req: request{method: "GET", url: get, id: []string{id}, ts: []string{strconv.FormatInt(ts, 10)}, sig: []string{whSign(t, whCurrent, id, ts, get)}}, want: receiver.ErrBadWebhookSignature},
		{name: "GET signed over the body's empty string", opts: []receiver.Option{receiver.WithBaseURL("https://shop.example")},
			req: request{method: "GET", url: get, id: []string{id}, ts: []string{strconv.FormatInt(ts, 10)}, sig: []string{whSign(t, whCurrent, id, ts, "")}}, want: receiver.ErrBadWebhookSignature},
		{name: "wrong secret", secrets: []string{whOther}, req: post(), want: receiver.ErrBadWebhookSignature},
		{name: "tampered body", req: post(func(r *request) { r.body = strings.Replace(body, "0.0015", "1.5", 1) }), want: receiver.ErrBadWebhookSignature},
		{name: "body re-serialised", req: post(func(r *request) { r.body = strings.ReplaceAll(body, ",", ", ") }), want: receiver.ErrBadWebhookSignature},
		{name: "another message's id", req: post(func(r *request) { r.id = []string{"another-uuid"} }), want: receiver.ErrBadWebhookSignature},
		{name: "another timestamp within the tolerance", req: post(func(r *request) { r.ts = []string{strconv.FormatInt(ts+1, 10)} }), want: receiver.ErrBadWebhookSignature},
		{name: "stale: just over the tolerance", now: at.Add(5*time.Minute + time.Second), req: post(), want: receiver.ErrStaleTimestamp},
		{name: "stale: a day old", now: at.Add(24 * time.Hour), req: post(), want: receiver.ErrStaleTimestamp},
		{name: "at the tolerance, past", now: at.Add(5 * time.Minute), req: post()},
		{name: "at the tolerance, future", now: at.Add(-5 * time.Minute), req: post()},
		{name: "future: just over the tolerance", now: at.Add(-5*time.Minute - time.Second), req: post(), want: receiver.ErrStaleTimestamp},
		{name: "custom tolerance", opts: []receiver.Option{receiver.WithTolerance(time.Minute)}, now: at.Add(2 * time.Minute), req: post(), want: receiver.ErrStaleTimestamp},
		{name: "custom tolerance, within", opts: []receiver.Option{receiver.WithTolerance(10 * time.Minute)}, now: at.Add(9 * time.Minute), req: post()},
		{name: "rotation: receiver still holds only the old secret", secrets: []string{whOld},
			req: post(sig(good + " " + whSign(t, whOld, id, ts, body)))},
		{name: "rotation: receiver already holds only the new secret", secrets: []string{whCurrent},
			req: post(sig(good + " " + whSign(t, whOld, id, ts, body)))},
		{name: "rotation: receiver holds both, signed with the old one only", secrets: []string{whCurrent, whOld},
			req: post(sig(whSign(t, whOld, id, ts, body)))},
		{name: "rotation over: the old secret no longer signs", secrets: []string{whOld}, req: post(), want: receiver.ErrBadWebhookSignature},
		{name: "multiple signatures, other versions skipped", req: post(sig("v2,AAAA v1a," + good[3:] + " v1,not*base64 " + good))},
		{name: "multiple signatures, none matching", req: post(sig(whSign(t, whOther, id, ts, body) + " " + whSign(t, whOld, id, ts, body))), want: receiver.ErrBadWebhookSignature},
		{name: "signature in two header lines", req: post(sig(whSign(t, whOther, id, ts, body), good))},
		{name: "extra spaces between signatures", req: post(sig("  " + whSign(t, whOther, id, ts, body) + "   " + good + " "))},
		{name: "right MAC, wrong version", req: post(sig("v2," + good[3:])), want: receiver.ErrBadWebhookSignature},
		{name: "unpadded Base64", req: post(sig(strings.TrimRight(good, "="))), want: receiver.ErrBadWebhookSignature},
		{name: "hex instead of Base64 (the old format)", req: post(sig("v1=0123abcd")), want: receiver.ErrBadWebhookSignature},
		{name: "missing id", req: post(func(r *request) { r.id = nil }), want: receiver.ErrMissingWebhookHeader},
		{name: "empty id", req: post(func(r *request) { r.id = []string{" "} }), want: receiver.ErrMissingWebhookHeader},
		{name: "id given twice", req: post(func(r *request) { r.id = []string{id, "x"} }), want: receiver.ErrBadWebhookSignature},
		{name: "missing timestamp", req: post(func(r *request) { r.ts = nil }), want: receiver.ErrMissingWebhookHeader},
		{name: "missing signature", req: post(sig()), want: receiver.ErrMissingWebhookHeader},
		{name: "empty signature", req: post(sig(" ")), want: receiver.ErrMissingWebhookHeader},
		{name: "timestamp in milliseconds", req: post(func(r *request) { r.ts = []string{strconv.FormatInt(ts*1000, 10)} }), want: receiver.ErrStaleTimestamp},
		{name: "timestamp not a number", req: post(func(r *request) { r.ts = []string{"yesterday"} }), want: receiver.ErrBadTimestamp},
		{name: "timestamp with a sign", req: post(func(r *request) { r.ts = []string{"+" + strconv.FormatInt(ts, 10)} }), want: receiver.ErrBadTimestamp},
		{name: "timestamp with a fraction", req: post(func(r *request) { r.ts = []string{strconv.FormatInt(ts, 10) + ".5"} }), want: receiver.ErrBadTimestamp},
		{name: "timestamp out of range", req: post(func(r *request) { r.ts = []string{"99999999999999999999"} }), want: receiver.ErrBadTimestamp},
		{name: "body over the limit", opts: []receiver.Option{receiver.WithMaxBodyBytes(16)}, req: post(), want: receiver.ErrBodyTooLarge},
		{name: "PUT", req: post(func(r *request) { r.method = "PUT" }), want: receiver.ErrMethod},
		{name: "no secret", secrets: []string{}, req: post(), want: receiver.ErrConfig},
		{name: "bad base URL", opts: []receiver.Option{receiver.WithBaseURL("shop.example")}, req: post(), want: receiver.ErrConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secrets := tc.secrets
			if secrets == nil {
				secrets = []string{whCurrent}
			}
			now := tc.now
			if now.IsZero() {
				now = at
			}
			v := receiver.NewWebhookVerifier(secrets, append([]receiver.Option{receiver.WithClock(func() time.Time { return now })}, tc.opts...)...)
			r := httptest.NewRequest(tc.req.method, tc.req.url, strings.NewReader(tc.req.body))
			r.RequestURI = strings.TrimPrefix(tc.req.url, "https://shop.example") // origin form, as received
			r.RequestURI = strings.TrimPrefix(r.RequestURI, "http://shop.example")
			r.TLS = nil // plain HTTP in: https only through the base URL
			for _, h := range []struct {
				name string
				vals []string
			}{{receiver.WebhookIDHeader, tc.req.id}, {receiver.WebhookTimestampHeader, tc.req.ts}, {receiver.WebhookSignatureHeader, tc.req.sig}} {
				for _, v := range h.vals {
					r.Header.Add(h.name, v)
				}
			}
			data, err := v.Verify(r)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				want := tc.req.body
				if tc.req.method == "GET" {
					want = tc.req.url
				}
				if string(data) != want {
					t.Fatalf("Verify returned %q, want the signed data %q", data, want)
				}
				if tc.req.method == "POST" {
					if b, _ := io.ReadAll(r.Body); string(b) != tc.req.body {
						t.Fatalf("body not restored for the handler: %q", b)
					}
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestWebhookSecretErrors: a malformed secret is a configuration error that
// says what is wrong with it and never shows it.
func TestWebhookSecretErrors(t *testing.T) {
	short := "whsec_" + base64.StdEncoding.EncodeToString([]byte("fifteen bytes!!"))
	for name, secret := range map[string]string{
		"empty":                  "",
		"no whsec_ prefix":       strings.TrimPrefix(whCurrent, "whsec_"),
		"another prefix":         "wh_sec" + strings.TrimPrefix(whCurrent, "whsec_"),
		"not Base64":             "whsec_s3cr3t-p4ss!word",
		"URL-safe Base64":        "whsec_" + base64.URLEncoding.EncodeToString([]byte("\xfb\xff\xfe secret with URL-safe chars")),
		"nothing after whsec_":   "whsec_",
		"shorter than 16 bytes":  short,
		"whitespace around":      " " + whCurrent,
		"a raw string as secret": "my webhook secret of many bytes",
	} {
		t.Run(name, func(t *testing.T) {
			shown := func(err error) bool {
				tail := strings.TrimSpace(strings.TrimPrefix(secret, "whsec_"))
				return tail != "" && strings.Contains(err.Error(), tail)
			}
			v := receiver.NewWebhookVerifier([]string{whCurrent, secret})
			r := httptest.NewRequest("POST", "http://shop.example/ipn", strings.NewReader("{}"))
			_, err := v.Verify(r)
			if !errors.Is(err, receiver.ErrConfig) {
				t.Fatalf("Verify = %v, want ErrConfig", err)
			}
			if shown(err) {
				t.Fatalf("error shows the secret: %v", err)
			}
			err = receiver.VerifyWebhookSignature(secret, "id", "1", []byte("{}"), "v1,AAAA")
			if !errors.Is(err, receiver.ErrConfig) {
				t.Fatalf("VerifyWebhookSignature = %v, want ErrConfig", err)
			}
			if shown(err) {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
}

// TestWebhookVerifySigned: the parts-only entry points, with and without
// the clock.
func TestWebhookVerifySigned(t *testing.T) {
	const id, data = "msg-1", "body"
	ts := int64(1795000000)
	good := whSign(t, whCurrent, id, ts, data)
	tsText := strconv.FormatInt(ts, 10)
	v := receiver.NewWebhookVerifier([]string{whCurrent}, receiver.WithClock(func() time.Time { return time.Unix(ts+60, 0) }))
	for _, tc := range []struct {
		name              string
		id, ts, data, sig string
		want, wantOffline error // VerifySigned, VerifyWebhookSignature
	}{
		{"valid", id, tsText, data, good, nil, nil},
		{"stale (only the verifier checks the clock)", id, strconv.FormatInt(ts-3600, 10), data, whSign(t, whCurrent, id, ts-3600, data), receiver.ErrStaleTimestamp, nil},
		{"tampered", id, tsText, data + "!", good, receiver.ErrBadWebhookSignature, receiver.ErrBadWebhookSignature},
		{"no id", "", tsText, data, good, receiver.ErrMissingWebhookHeader, receiver.ErrMissingWebhookHeader},
		{"no timestamp", id, "", data, good, receiver.ErrMissingWebhookHeader, receiver.ErrMissingWebhookHeader},
		{"bad timestamp", id, "1e9", data, good, receiver.ErrBadTimestamp, receiver.ErrBadTimestamp},
		{"no signature", id, tsText, data, "", receiver.ErrMissingWebhookHeader, receiver.ErrMissingWebhookHeader},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := v.VerifySigned(tc.id, tc.ts, []byte(tc.data), tc.sig); !errors.Is(err, tc.want) {
				t.Errorf("VerifySigned = %v, want %v", err, tc.want)
			}
			if err := receiver.VerifyWebhookSignature(whCurrent, tc.id, tc.ts, []byte(tc.data), tc.sig); !errors.Is(err, tc.wantOffline) {
				t.Errorf("VerifyWebhookSignature = %v, want %v", err, tc.wantOffline)
			}
		})
	}
}

// TestWebhookMiddleware: refusals are answered before the handler runs,
// with the status the RSA verifier's Middleware uses; a webhook signed now
// passes with the real clock.
func TestWebhookMiddleware(t *testing.T) {
	const id, body = "msg-2", `{"status":"confirmed"}`
	v := receiver.NewWebhookVerifier([]string{whCurrent})
	var called int
	h := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called++
		if b, _ := io.ReadAll(r.Body); string(b) != body {
			t.Errorf("handler read %q", b)
		}
	}))
	now := time.Now().Unix()
	for _, tc := range []struct {
		name   string
		method string
		ts     int64
		sig    string
		want   int
	}{
		{"valid", "POST", now, whSign(t, whCurrent, id, now, body), 200},
		{"bad signature", "POST", now, whSign(t, whOther, id, now, body), 401},
		{"stale", "POST", now - 3600, whSign(t, whCurrent, id, now-3600, body), 401},
		{"missing signature", "POST", now, "", 401},
		{"PUT", "PUT", now, whSign(t, whCurrent, id, now, body), 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := called
			r := httptest.NewRequest(tc.method, "http://shop.example/ipn", strings.NewReader(body))
			r.Header.Set(receiver.WebhookIDHeader, id)
			r.Header.Set(receiver.WebhookTimestampHeader, strconv.FormatInt(tc.ts, 10))
			if tc.sig != "" {
				r.Header.Set(receiver.WebhookSignatureHeader, tc.sig)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want || (called > before) != (tc.want == 200) {
				t.Fatalf("status %d (%s), handler called %v; want %d", w.Code, w.Body, called > before, tc.want)
			}
		})
	}
	bad := receiver.NewWebhookVerifier([]string{"not a secret"}).Middleware(http.NotFoundHandler())
	w := httptest.NewRecorder()
	bad.ServeHTTP(w, httptest.NewRequest("POST", "http://shop.example/ipn", strings.NewReader(body)))
	if w.Code != 500 || strings.Contains(w.Body.String(), "not a secret") {
		t.Fatalf("misconfigured: %d %s", w.Code, w.Body)
	}
}

// TestRSAVerifierRefusesTimedOptions: x-ca-signature has no timestamp, so a
// tolerance given to the RSA verifier is a configuration mistake, not
// something silently ignored.
func TestRSAVerifierRefusesTimedOptions(t *testing.T) {
	key := testKey(t, "test_key.pem")
	for name, o := range map[string]receiver.Option{
		"WithTolerance": receiver.WithTolerance(time.Minute),
		"WithClock":     receiver.WithClock(time.Now),
	} {
		r := httptest.NewRequest("POST", "http://shop.example/ipn", strings.NewReader("{}"))
		r.Header.Set(receiver.SignatureHeader, sign(t, key, []byte("{}")))
		if _, err := receiver.NewVerifier(&key.PublicKey, o).Verify(r); !errors.Is(err, receiver.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}
