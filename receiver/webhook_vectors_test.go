package receiver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server/address"
)

const webhookVectorsPath = "testdata/webhook_vectors.json"

// webhookVectorFile is the layout of testdata/webhook_vectors.json, meant to
// be read by receivers in any language (clients/sdkcompat checks it with the
// standardwebhooks npm package).
type webhookVectorFile struct {
	Comment          string          `json:"comment"`
	Construction     string          `json:"construction"`
	Secret           string          `json:"secret"`
	SignedData       string          `json:"signed_data"`
	ToleranceSeconds int             `json:"tolerance_seconds"`
	Vectors          []webhookVector `json:"vectors"`
}

// webhookVector is one webhook as received, the secret a receiver holds
// and the time it verifies at.
type webhookVector struct {
	Description string `json:"description"`
	// Secret is the receiver's secret (the service may have signed with
	// others too).
	Secret string `json:"secret"`
	// VerifyAt is the receiver's clock, Unix seconds.
	VerifyAt    int64          `json:"verify_at"`
	Method      string         `json:"method"`
	URL         string         `json:"url"`
	ContentType string         `json:"content_type"`
	SignedData  string         `json:"signed_data"`
	Headers     webhookHeaders `json:"headers"`
	Valid       bool           `json:"valid"`
}

// webhookHeaders are the headers of one attempt, as sent.
type webhookHeaders struct {
	ID        string `json:"x-service-id"`
	Timestamp string `json:"x-service-timestamp"`
	Signature string `json:"x-service-signature"`
	Event     string `json:"x-service-event,omitempty"`
}

// TEST-ONLY webhook secrets of the vectors.
var (
	vecSecret      = "whsec_" + base64.StdEncoding.EncodeToString([]byte("payhook TEST-ONLY webhook secret"))
	vecOldSecret   = "whsec_" + base64.StdEncoding.EncodeToString([]byte("payhook TEST-ONLY rotated secret"))
	vecOtherSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("another project's TEST-ONLY key."))
)

// vecTime is when the vectors' attempts are made.
const vecTime = int64(1795000000)

// The Standard Webhooks specification's published test vector.
const (
	stdWebhookSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	stdWebhookID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	stdWebhookTimestamp = int64(1614265330)
	stdWebhookPayload   = `{"test": 2432232314}`
	stdWebhookSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// buildWebhookVectors derives every vector with the service's signer
// (notifier/signer.WebhookSigner), so the file is what the service sends.
func buildWebhookVectors(t *testing.T) webhookVectorFile {
	t.Helper()
	pending, completed := vectorCallbacks()
	enc := func(u string, tr payload.Transport, cb address.Callback) payload.Request {
		req, err := address.EncodeCallback(u, tr, cb)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	signed := func(r payload.Request, id, event string, ts int64, secrets ...string) webhookHeaders {
		h, err := signer.NewWebhookSigner(signer.StaticSecrets(secrets...)).SignAttempt(context.Background(), "vectors",
			signer.Attempt{UUID: id, Time: time.Unix(ts, 0), Request: r, Event: event})
		if err != nil {
			t.Fatal(err)
		}
		return webhookHeaders{ID: h.Get(signer.WebhookIDHeader), Timestamp: h.Get(signer.WebhookTimestampHeader), Signature: h.Get(signer.WebhookSignatureHeader), Event: h.Get(signer.WebhookEventHeader)}
	}
	vec := func(desc, secret string, r payload.Request, h webhookHeaders, verifyAt int64, valid bool) webhookVector {
		return webhookVector{Description: desc, Secret: secret, VerifyAt: verifyAt, Method: r.Method, URL: r.URL, ContentType: r.ContentType,
			SignedData: string(payload.SignedData(r)), Headers: h, Valid: valid}
	}

	js := enc("https://merchant.example/ipn?order=42", payload.TransportJSON, completed)
	form := enc("https://merchant.example/ipn?order=42", payload.TransportForm, completed)
	get := enc("http://merchant.example:8080/callback.php?order=42&note=caf%C3%A9+%26+more", payload.TransportGET, pending)
	getTLS := enc("https://merchant.example/ipn?order=42", payload.TransportGET, completed)
	const evCompleted, evPending = "custom.payment.completed", "custom.payment.pending"
	jsH := signed(js, completed.UUID, evCompleted, vecTime, vecSecret)
	rotH := signed(js, completed.UUID, evCompleted, vecTime, vecSecret, vecOldSecret)
	getH := signed(get, pending.UUID, evPending, vecTime, vecSecret)

	var vs []webhookVector
	add := func(v webhookVector) { vs = append(vs, v) }
	add(vec("JSON POST, completed event with conversion maps and a null network_fee; signed data is the raw body", vecSecret, js, jsH, vecTime, true))
	add(vec("form POST, completed event; signed data is the raw body", vecSecret, form, signed(form, completed.UUID, evCompleted, vecTime, vecSecret), vecTime, true))
	add(vec("GET, pending event; the URL carries custom params with percent-encoded UTF-8, '+' and '%26'; signed data is the full URL", vecSecret, get, getH, vecTime, true))
	add(vec("GET over https; signed data is the full URL", vecSecret, getTLS, signed(getTLS, completed.UUID, evCompleted, vecTime, vecSecret), vecTime, true))
	add(vec("rotation grace period: signed with the new and the old secret; the receiver still holds the old one", vecOldSecret, js, rotH, vecTime, true))
	add(vec("rotation grace period: signed with the new and the old secret; the receiver already holds the new one", vecSecret, js, rotH, vecTime, true))
	add(vec("after the grace period only the new secret signs: a receiver holding only the old one refuses", vecOldSecret, js, jsH, vecTime, false))
	add(vec("received 300 s after its timestamp: at the tolerance", vecSecret, js, jsH, vecTime+300, true))
	add(vec("received 301 s after its timestamp: stale (or replayed)", vecSecret, js, jsH, vecTime+301, false))
	add(vec("timestamp 300 s ahead of the receiver's clock: at the tolerance", vecSecret, js, jsH, vecTime-300, true))
	add(vec("timestamp 301 s ahead of the receiver's clock: refused", vecSecret, js, jsH, vecTime-301, false))

	tampered := js
	tampered.Body = bytes.Replace(js.Body, []byte(`"value_coin":150`), []byte(`"value_coin":1500`), 1)
	add(vec("JSON POST, body tampered after signing (value_coin 150 -> 1500)", vecSecret, tampered, jsH, vecTime, false))
	var indented bytes.Buffer
	if err := json.Indent(&indented, js.Body, "", " "); err != nil {
		t.Fatal(err)
	}
	reser := js
	reser.Body = indented.Bytes()
	add(vec("JSON POST, same content re-serialised (indented) after signing: verify the raw bytes", vecSecret, reser, jsH, vecTime, false))
	reenc := get
	reenc.URL = strings.Replace(get.URL, "caf%C3%A9+%26+more", "caf%C3%A9%20%26%20more", 1)
	add(vec("GET, query re-encoded ('+' as '%20', same decoded values): verify the URL exactly as received", vecSecret, reenc, getH, vecTime, false))
	plain := getTLS
	plain.URL = "http://" + strings.TrimPrefix(getTLS.URL, "https://")
	add(vec("GET, signed for https but received over http (a proxy in front needs the base URL configured)", vecSecret, plain, signed(getTLS, completed.UUID, evCompleted, vecTime, vecSecret), vecTime, false))
	add(vec("JSON POST signed with another project's secret", vecSecret, js, signed(js, completed.UUID, evCompleted, vecTime, vecOtherSecret), vecTime, false))

	otherID := jsH
	otherID.ID = pending.UUID
	add(vec("JSON POST whose x-service-id was changed: the signature covers the id", vecSecret, js, otherID, vecTime, false))
	otherTS := jsH
	otherTS.Timestamp = strconv.FormatInt(vecTime+60, 10)
	add(vec("JSON POST whose x-service-timestamp was moved 60 s (within the tolerance): the signature covers the timestamp", vecSecret, js, otherTS, vecTime+60, false))

	several := jsH
	wrong := signed(js, completed.UUID, evCompleted, vecTime, vecOtherSecret).Signature
	several.Signature = "v2," + strings.TrimPrefix(jsH.Signature, "v1,") + " " + wrong + " " + jsH.Signature
	add(vec("several signatures: an unknown version (skipped), a v1 that does not match, then a v1 that does", vecSecret, js, several, vecTime, true))
	v2Only := jsH
	v2Only.Signature = "v2," + strings.TrimPrefix(jsH.Signature, "v1,")
	add(vec("the right MAC under an unknown version only: refused", vecSecret, js, v2Only, vecTime, false))

	std := payload.Request{Method: http.MethodPost, URL: "https://merchant.example/ipn", ContentType: payload.ContentTypeJSON, Body: []byte(stdWebhookPayload)}
	add(vec("the Standard Webhooks specification's published test vector", stdWebhookSecret, std, signed(std, stdWebhookID, "", stdWebhookTimestamp, stdWebhookSecret), stdWebhookTimestamp, true))

	return webhookVectorFile{
		Comment: "Test vectors for payhook merchant webhook signatures. TEST-ONLY secrets: never use them. " +
			"Regenerate with: go test ./receiver -run TestWebhookVectors -update",
		Construction: "Standard Webhooks (https://www.standardwebhooks.com/) under payhook's header names: webhook-id is x-service-id, " +
			"webhook-timestamp is x-service-timestamp, webhook-signature is x-service-signature. x-service-signature is a space-separated list of " +
			`"v1," + standard Base64 of HMAC-SHA256(key, x-service-id + "." + x-service-timestamp + "." + signed data); a receiver accepts the webhook ` +
			"when any v1 entry matches any secret it holds and the timestamp is within the tolerance of its clock, either way. x-service-event is not signed.",
		Secret:           `"whsec_" + standard Base64 of the HMAC key`,
		SignedData:       "GET: the full request URL exactly as requested (scheme://host[:port] + request target, unchanged); POST: the raw request body",
		ToleranceSeconds: int(receiver.DefaultTolerance / time.Second),
		Vectors:          vs,
	}
}

// readWebhookVectors checks that testdata/webhook_vectors.json is what the
// signer produces (rewriting it with -update) and returns it.
func readWebhookVectors(t *testing.T) webhookVectorFile {
	t.Helper()
	want := marshalVectors(t, buildWebhookVectors(t))
	if *update {
		if err := os.WriteFile(webhookVectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(webhookVectorsPath)
	if err != nil {
		t.Fatalf("%v (go test ./receiver -run TestWebhookVectors -update)", err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("%s is not what the signer produces: regenerate with go test ./receiver -run TestWebhookVectors -update", webhookVectorsPath)
	}
	var file webhookVectorFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if n := len(file.Vectors); n < 15 {
		t.Fatalf("only %d vectors", n)
	}
	return file
}

// TestWebhookVectors checks every vector of testdata/webhook_vectors.json:
// the file is what the service's signer makes; a valid vector's header
// holds the signature computed here from the construction's definition;
// and the receiver decides as the vector says, through real HTTP requests
// (WebhookVerifier.Verify), from the parts (VerifySigned) and, ignoring the
// clock, with VerifyWebhookSignature.
func TestWebhookVectors(t *testing.T) {
	file := readWebhookVectors(t)
	if std := file.Vectors[len(file.Vectors)-1]; std.Headers.Signature != stdWebhookSignature {
		t.Fatalf("the signer does not reproduce the Standard Webhooks vector: %q", std.Headers.Signature)
	}

	type seen struct {
		data []byte
		err  error
	}
	var (
		mu sync.Mutex
		v  *receiver.WebhookVerifier
	)
	ch := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		vv := v
		mu.Unlock()
		data, err := vv.Verify(r)
		ch <- seen{data, err}
	}))
	defer srv.Close()

	for _, vec := range file.Vectors {
		t.Run(vec.Description, func(t *testing.T) {
			ts, err := strconv.ParseInt(vec.Headers.Timestamp, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			entries := strings.Fields(vec.Headers.Signature)
			if vec.Valid && !strings.Contains(vec.Description, "unknown version") && !containsString(entries, whSign(t, vec.Secret, vec.Headers.ID, ts, vec.SignedData)) {
				t.Errorf("header %q lacks the signature computed from the definition", vec.Headers.Signature)
			}
			clock := receiver.WithClock(func() time.Time { return time.Unix(vec.VerifyAt, 0) })
			opts := []receiver.Option{clock}
			u, err := url.Parse(vec.URL)
			if err != nil {
				t.Fatal(err)
			}
			if u.Scheme == "https" { // behind a TLS-terminating proxy
				opts = append(opts, receiver.WithBaseURL(u.Scheme+"://"+u.Host))
			}
			mu.Lock()
			v = receiver.NewWebhookVerifier([]string{vec.Secret}, opts...)
			mu.Unlock()

			target := strings.TrimPrefix(vec.URL, u.Scheme+"://"+u.Host)
			var body *strings.Reader
			if vec.Method == http.MethodPost {
				body = strings.NewReader(vec.SignedData)
			} else {
				body = strings.NewReader("")
			}
			req, err := http.NewRequest(vec.Method, srv.URL+target, body)
			if err != nil {
				t.Fatal(err)
			}
			if vec.Method == http.MethodGet {
				req.Body, req.ContentLength = nil, 0
			}
			req.Host = u.Host
			if vec.ContentType != "" {
				req.Header.Set("Content-Type", vec.ContentType)
			}
			req.Header.Set(receiver.WebhookIDHeader, vec.Headers.ID)
			req.Header.Set(receiver.WebhookTimestampHeader, vec.Headers.Timestamp)
			req.Header.Set(receiver.WebhookSignatureHeader, vec.Headers.Signature)
			if vec.Headers.Event != "" {
				req.Header.Set(receiver.WebhookEventHeader, vec.Headers.Event)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			s := <-ch
			if (s.err == nil) != vec.Valid {
				t.Fatalf("Verify = %v, vector says valid=%v", s.err, vec.Valid)
			}
			if vec.Valid && string(s.data) != vec.SignedData {
				t.Fatalf("Verify returned %q, want the signed data", s.data)
			}

			err = receiver.NewWebhookVerifier([]string{vec.Secret}, clock).VerifySigned(vec.Headers.ID, vec.Headers.Timestamp, []byte(vec.SignedData), vec.Headers.Signature)
			if (err == nil) != vec.Valid {
				t.Fatalf("VerifySigned = %v, vector says valid=%v", err, vec.Valid)
			}
			// Without the clock, only the signature counts.
			tol := int64(file.ToleranceSeconds)
			stale := vec.VerifyAt-ts > tol || ts-vec.VerifyAt > tol
			err = receiver.VerifyWebhookSignature(vec.Secret, vec.Headers.ID, vec.Headers.Timestamp, []byte(vec.SignedData), vec.Headers.Signature)
			if (err == nil) != (vec.Valid || stale) {
				t.Fatalf("VerifyWebhookSignature = %v, want valid=%v", err, vec.Valid || stale)
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
