package receiver_test

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/receiver"
)

// fuzzBase is the base URL the fuzzed verifiers rebuild GET URLs under.
const fuzzBase = "https://shop.example"

// fuzzTS is the webhook timestamp of the fuzz seeds; the verifiers' clock
// is a minute later.
const fuzzTS = int64(1795000000)

// FuzzVerify builds a callback from fuzzed parts (method, request target,
// body, x-ca-signature, and the x-service-id, -timestamp and -signature
// headers; a value holding a newline is sent as several headers) and runs
// Verifier.Verify (RSA, with and without WithSecrets),
// WebhookVerifier.Verify, VerifySigned and VerifyWebhookSignature on it.
// None may panic, and each may answer ok only for a correctly signed
// payload, checked here from the definitions: the data returned is the body
// of a POST or the base URL and target of a GET, x-ca-signature is one
// Base64 RSA PKCS#1 v1.5 SHA-256 signature of it by the current or previous
// key, x-service-timestamp is within the tolerance of the clock, and one v1
// entry of x-service-signature is the HMAC-SHA256 of "id.ts.data" under one
// of the secrets.
func FuzzVerify(f *testing.F) {
	key := testKey(f, "test_key.pem")
	old := testKey(f, "other_key.pem")
	const id = "0b4c3a52-7d4e-4c1b-9e2a-5b6c7d8e9f01"
	ts := strconv.FormatInt(fuzzTS, 10)
	body := `{"uuid":"0b4c3a52-7d4e-4c1b-9e2a-5b6c7d8e9f01","payment_status":"confirmed","value_coin":"0.0015"}`
	get := "/hook?order=17&status=paid"
	for _, s := range []struct {
		post              bool
		target, body, sig string
		id, ts, whSig     string
	}{
		{true, "/hook", body, sign(f, key, []byte(body)), id, ts, whSign(f, whCurrent, id, fuzzTS, body)},
		{true, "/hook", body, sign(f, old, []byte(body)), id, ts, "v2,xx " + whSign(f, whOld, id, fuzzTS, body)},
		{true, "/hook", body + " ", sign(f, key, []byte(body)), id, ts, whSign(f, whCurrent, id, fuzzTS, body)},
		{false, get, "", sign(f, key, []byte(fuzzBase+get)), id, ts, whSign(f, whCurrent, id, fuzzTS, fuzzBase+get)},
		{false, "http://evil.example" + get, "", sign(f, key, []byte(fuzzBase+get)), id, ts, whSign(f, whCurrent, id, fuzzTS, fuzzBase+get)},
		{false, get, "", sign(f, key, []byte(fuzzBase+get)) + "\n" + sign(f, key, []byte(fuzzBase+get)), id, ts + "\n" + ts, ""},
		{true, "/hook", "", "", "", "", ""},
		{true, "/hook", body, " !!notbase64 ", id, "+1795000000", "v1,"},
		{true, "/hook", body, sign(f, key, []byte(body)), id, "99999999999999999999", whSign(f, whCurrent, id, fuzzTS, body)},
	} {
		f.Add(s.post, s.target, []byte(s.body), s.sig, s.id, s.ts, s.whSig)
	}
	clock := receiver.WithClock(func() time.Time { return time.Unix(fuzzTS, 0).Add(time.Minute) })
	base := receiver.WithBaseURL(fuzzBase)
	rsaOnly := receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey), base)
	both := receiver.NewVerifier(&key.PublicKey, receiver.WithPreviousKey(&old.PublicKey), receiver.WithSecrets(whCurrent, whOld), base, clock)
	hmacOnly := receiver.NewWebhookVerifier([]string{whCurrent, whOld}, base, clock)
	pubs := []*rsa.PublicKey{&key.PublicKey, &old.PublicKey}

	f.Fuzz(func(t *testing.T, post bool, target string, body []byte, sig, id, ts, whSig string) {
		request := func() *http.Request {
			r := &http.Request{Method: http.MethodGet, RequestURI: target, Host: "internal:8080", Header: http.Header{}}
			if post {
				r.Method = http.MethodPost
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
			}
			for name, v := range map[string]string{
				receiver.SignatureHeader:        sig,
				receiver.WebhookIDHeader:        id,
				receiver.WebhookTimestampHeader: ts,
				receiver.WebhookSignatureHeader: whSig,
			} {
				if v == "" {
					continue
				}
				for _, part := range strings.Split(v, "\n") {
					r.Header.Add(name, part)
				}
			}
			return r
		}
		// dataOK checks the data a Verify accepted against the request.
		dataOK := func(name string, data []byte) {
			t.Helper()
			switch {
			case post && !bytes.Equal(data, body):
				t.Fatalf("%s: accepted data %q is not the body %q", name, data, body)
			case !post && strings.HasPrefix(target, "/") && string(data) != fuzzBase+target:
				t.Fatalf("%s: accepted data %q is not the URL %q", name, data, fuzzBase+target)
			case !post && !strings.HasPrefix(string(data), fuzzBase+"/"):
				t.Fatalf("%s: accepted data %q is not under %s/", name, data, fuzzBase)
			}
		}
		rsaOK := func(data []byte) bool {
			if strings.Contains(sig, "\n") {
				return false
			}
			raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
			if err != nil {
				return false
			}
			sum := sha256.Sum256(data)
			for _, pub := range pubs {
				if rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], raw) == nil {
					return true
				}
			}
			return false
		}
		hmacOK := func(id, ts string, data []byte, list string) bool {
			n, err := strconv.ParseInt(ts, 10, 64)
			if err != nil || strings.Trim(ts, "0123456789") != "" || strings.TrimSpace(id) == "" {
				return false
			}
			if d := time.Unix(fuzzTS, 0).Add(time.Minute).Sub(time.Unix(n, 0)); d > receiver.DefaultTolerance || d < -receiver.DefaultTolerance {
				return false
			}
			for _, secret := range []string{whCurrent, whOld} {
				k, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, receiver.WebhookSecretPrefix))
				m := hmac.New(sha256.New, k)
				m.Write([]byte(id + "." + strconv.FormatInt(n, 10) + "."))
				m.Write(data)
				want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
				for _, entry := range strings.Fields(list) {
					if entry == want {
						return true
					}
				}
			}
			return false
		}
		oneValue := func(v string) (string, bool) {
			return strings.TrimSpace(v), !strings.Contains(v, "\n")
		}

		if data, err := rsaOnly.Verify(request()); err == nil {
			dataOK("Verifier", data)
			if !rsaOK(data) {
				t.Fatalf("Verifier accepted %q with x-ca-signature %q, not a signature of it", data, sig)
			}
		}
		wid, idOne := oneValue(id)
		wts, tsOne := oneValue(ts)
		wlist := strings.ReplaceAll(whSig, "\n", " ")
		if data, err := both.Verify(request()); err == nil {
			dataOK("Verifier WithSecrets", data)
			if !rsaOK(data) || !idOne || !tsOne || !hmacOK(wid, wts, data, wlist) {
				t.Fatalf("Verifier WithSecrets accepted %q with x-ca-signature %q, id %q, timestamp %q, signature %q", data, sig, id, ts, whSig)
			}
		}
		if data, err := hmacOnly.Verify(request()); err == nil {
			dataOK("WebhookVerifier", data)
			if !idOne || !tsOne || !hmacOK(wid, wts, data, wlist) {
				t.Fatalf("WebhookVerifier accepted %q with id %q, timestamp %q, signature %q", data, id, ts, whSig)
			}
		}
		if err := hmacOnly.VerifySigned(id, ts, body, whSig); err == nil && !hmacOK(id, ts, body, whSig) {
			t.Fatalf("VerifySigned accepted %q with id %q, timestamp %q, signature %q", body, id, ts, whSig)
		}
		if err := receiver.VerifyWebhookSignature(whCurrent, id, ts, body, whSig); err == nil {
			// No clock here: check with the timestamp as the clock.
			n, perr := strconv.ParseInt(ts, 10, 64)
			if perr != nil || strings.Trim(ts, "0123456789") != "" {
				t.Fatalf("VerifyWebhookSignature accepted timestamp %q", ts)
			}
			k, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(whCurrent, receiver.WebhookSecretPrefix))
			m := hmac.New(sha256.New, k)
			m.Write([]byte(id + "." + strconv.FormatInt(n, 10) + "."))
			m.Write(body)
			if !slices.Contains(strings.Fields(whSig), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil))) {
				t.Fatalf("VerifyWebhookSignature accepted %q with id %q, timestamp %q, signature %q", body, id, ts, whSig)
			}
		}
	})
}
