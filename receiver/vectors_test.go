package receiver_test

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server/address"
)

var update = flag.Bool("update", false, "regenerate testdata/vectors.json (committed test keys) and testdata/webhook_vectors.json (test secrets)")

const vectorsPath = "testdata/vectors.json"

// vectorFile is the layout of testdata/vectors.json, meant to be read by
// receivers in any language.
type vectorFile struct {
	Comment      string   `json:"comment"`
	Header       string   `json:"header"`
	Algorithm    string   `json:"algorithm"`
	SignedData   string   `json:"signed_data"`
	PublicKeyPEM string   `json:"public_key_pem"`
	Vectors      []vector `json:"vectors"`
}

type vector struct {
	Description string `json:"description"`
	Method      string `json:"method"`
	URL         string `json:"url"`
	ContentType string `json:"content_type"`
	Body        string `json:"body"`
	Signature   string `json:"signature"`
	Valid       bool   `json:"valid"`
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }
func sp(s string) *string        { return &s }

// vectorCallbacks are the callbacks the vectors carry.
func vectorCallbacks() (pending, completed address.Callback) {
	price := d("65000.12")
	pending = address.Callback{
		UUID:                  "3f1c9a52-7d4e-4c1b-9e2a-5b6c7d8e9f01",
		AddressIn:             "bc1qz8ut0yspq5u9x0zvc4k5d3fhr4mnl2v7w9e3x0",
		AddressOut:            []address.Share{{Address: "bc1qmerchant0wallet0aaaaaaaaaaaaaaaaaaaaaa", Share: d("0.7")}, {Address: "bc1qmerchant0wallet0bbbbbbbbbbbbbbbbbbbbbb", Share: d("0.3")}},
		TxidIn:                "9b0fc92260312ce44e74ef369f5c66bbb85848f2eddd5a7a1cde251e54ccfdd5",
		Confirmations:         1,
		RequiredConfirmations: 2,
		PaymentStatus:         address.StatusPending,
		Coin:                  "btc",
		Decimals:              8,
		Price:                 &price,
		ValueCoin:             d("0.0015"),
		ValueCoinConvert:      sp(`{"USD":"97.50","EUR":"89.83"}`),
		Params:                []payload.Param{{Key: "order", Value: "42"}, {Key: "note", Value: "café & more"}},
	}
	usd := d("1.0002")
	completed = address.Callback{
		UUID:                      "c2d7e8f9-0a1b-4c3d-8e5f-6a7b8c9d0e02",
		AddressIn:                 "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE",
		AddressOut:                []address.Share{{Address: "TMerchantWa11et000000000000000000a", Share: d("1")}},
		TxidIn:                    "c0ffee0000000000000000000000000000000000000000000000000000000001",
		TxidOut:                   "c0ffee0000000000000000000000000000000000000000000000000000000002",
		Confirmations:             20,
		RequiredConfirmations:     19,
		PaymentStatus:             address.StatusCompleted,
		Coin:                      "usdt",
		Decimals:                  6,
		Price:                     &usd,
		ValueCoin:                 d("150"),
		ValueForwardedCoin:        payload.AmountOf(d("148.5")),
		FeeCoin:                   payload.AmountOf(d("1.5")),
		NetworkFee:                payload.AmountNull(),
		ValueCoinConvert:          sp(`{"USD":"150.03","EUR":"138.22"}`),
		ValueForwardedCoinConvert: sp(`{"USD":"148.53","EUR":"136.84"}`),
		Params:                    []payload.Param{{Key: "order", Value: "42"}},
	}
	return pending, completed
}

// buildVectors derives every vector from the committed test keys. RSA
// PKCS#1 v1.5 signatures are deterministic, so the result is stable.
func buildVectors(t *testing.T, key, other *rsa.PrivateKey) vectorFile {
	t.Helper()
	pending, completed := vectorCallbacks()
	enc := func(u string, tr payload.Transport, cb address.Callback) payload.Request {
		req, err := address.EncodeCallback(u, tr, cb)
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
	vec := func(desc string, r payload.Request, sig string, valid bool) vector {
		return vector{Description: desc, Method: r.Method, URL: r.URL, ContentType: r.ContentType, Body: string(r.Body), Signature: sig, Valid: valid}
	}
	signed := func(r payload.Request) string { return sign(t, key, payload.SignedData(r)) }

	get := enc("http://merchant.example:8080/callback.php?order=42&note=caf%C3%A9+%26+more", payload.TransportGET, pending)
	getTLS := enc("https://merchant.example/ipn?order=42", payload.TransportGET, completed)
	form := enc("https://merchant.example/ipn?order=42", payload.TransportForm, completed)
	js := enc("https://merchant.example/ipn?order=42", payload.TransportJSON, completed)

	var vs []vector
	add := func(v vector) { vs = append(vs, v) }
	add(vec("GET, pending event; the callback URL carries custom params with percent-encoded UTF-8, '+' and '%26'; signed data is the full URL", get, signed(get), true))
	add(vec("GET over https, completed event; signed data is the full URL", getTLS, signed(getTLS), true))
	add(vec("form POST, completed event; signed data is the raw body; custom params stay on the URL and are repeated in the body", form, signed(form), true))
	add(vec("JSON POST, completed event with conversion maps (JSON strings) and a null network_fee; signed data is the raw body", js, signed(js), true))

	tampered := js
	tampered.Body = bytes.Replace(js.Body, []byte(`"value_coin":150`), []byte(`"value_coin":1500`), 1)
	add(vec("JSON POST, body tampered after signing (value_coin 150 -> 1500)", tampered, signed(js), false))

	var indented bytes.Buffer
	if err := json.Indent(&indented, js.Body, "", " "); err != nil {
		t.Fatal(err)
	}
	reser := js
	reser.Body = indented.Bytes()
	add(vec("JSON POST, same content re-serialised (indented) after signing: verify the raw bytes, never a re-encoding", reser, signed(js), false))

	vals, err := url.ParseQuery(string(form.Body))
	if err != nil {
		t.Fatal(err)
	}
	reform := form
	reform.Body = []byte(vals.Encode()) // sorted keys
	add(vec("form POST, same fields re-encoded in another order after signing", reform, signed(form), false))

	tq := get
	tq.URL = strings.Replace(get.URL, "value_coin=0.0015", "value_coin=1.5", 1)
	add(vec("GET, query tampered after signing (value_coin 0.0015 -> 1.5)", tq, signed(get), false))

	reenc := get
	reenc.URL = strings.Replace(get.URL, "caf%C3%A9+%26+more", "caf%C3%A9%20%26%20more", 1)
	add(vec("GET, query re-encoded ('+' as '%20', same decoded values): the URL must be verified exactly as received", reenc, signed(get), false))

	u, _ := url.Parse(get.URL)
	add(vec("GET, signature over the path and query only instead of the full URL", get, sign(t, key, []byte(u.RequestURI())), false))

	plain := getTLS
	plain.URL = "http://" + strings.TrimPrefix(getTLS.URL, "https://")
	add(vec("GET, signed for https but received over http (a proxy in front needs the base URL configured)", plain, signed(getTLS), false))

	add(vec("form POST carrying the signature of another message (the JSON body of the same event)", form, signed(js), false))
	add(vec("JSON POST signed with a different RSA key", js, sign(t, other, js.Body), false))
	add(vec("JSON POST without a signature", js, "", false))
	add(vec("JSON POST with a signature that is not Base64", js, "not*base64!", false))

	return vectorFile{
		Comment: "Test vectors for payhook low-level callback signatures (header x-ca-signature). " +
			"TEST-ONLY key (receiver/testdata/test_key.pem): never trust it in production. " +
			"Regenerate with: go test ./receiver -run TestVectors -update",
		Header:       receiver.SignatureHeader,
		Algorithm:    "RSASSA-PKCS1-v1_5 with SHA-256; header value is standard Base64 (with padding)",
		SignedData:   "GET: the full request URL exactly as requested (scheme://host[:port] + request target, unchanged); POST: the raw request body",
		PublicKeyPEM: publicPEM(t, &key.PublicKey),
		Vectors:      vs,
	}
}

func marshalVectors(t *testing.T, f any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestVectors checks every vector of testdata/vectors.json against the
// Verifier through real HTTP requests, and that the file is what the
// committed keys and the current encoder produce.
func TestVectors(t *testing.T) {
	key, other := testKey(t, "test_key.pem"), testKey(t, "other_key.pem")
	want := marshalVectors(t, buildVectors(t, key, other))
	if *update {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("%v (go test ./receiver -run TestVectors -update)", err)
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("%s is stale: regenerate with go test ./receiver -run TestVectors -update", vectorsPath)
	}
	var file vectorFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	pub, err := receiver.ParsePublicKeyPEM([]byte(file.PublicKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := os.ReadFile(filepath.Join("testdata", "test_key.pub.pem"))
	if err != nil {
		t.Fatal(err)
	}
	if pub2, err := receiver.ParsePublicKeyPEM(pinned); err != nil || !pub2.Equal(pub) {
		t.Fatalf("test_key.pub.pem is not the vectors' key: %v", err)
	}

	type seen struct {
		requestURI, host string
		data             []byte
		err              error
		reread           []byte
	}
	newServer := func(tls bool, v *receiver.Verifier) (*httptest.Server, chan seen) {
		ch := make(chan seen, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := v.Verify(r)
			s := seen{requestURI: r.RequestURI, host: r.Host, data: data, err: err}
			if r.Method == http.MethodPost && r.Body != nil {
				s.reread, _ = io.ReadAll(r.Body)
			}
			ch <- s
		})
		if tls {
			return httptest.NewTLSServer(h), ch
		}
		return httptest.NewServer(h), ch
	}
	direct := receiver.NewVerifier(pub)
	plainSrv, plainCh := newServer(false, direct)
	defer plainSrv.Close()
	tlsSrv, tlsCh := newServer(true, direct)
	defer tlsSrv.Close()
	// Behind a TLS-terminating proxy: plain HTTP in, https URL signed.
	proxied := receiver.NewVerifier(pub, receiver.WithBaseURL("https://merchant.example"))
	proxySrv, proxyCh := newServer(false, proxied)
	defer proxySrv.Close()

	send := func(t *testing.T, srv *httptest.Server, ch chan seen, v vector) seen {
		t.Helper()
		u, err := url.Parse(v.URL)
		if err != nil {
			t.Fatal(err)
		}
		target := strings.TrimPrefix(v.URL, u.Scheme+"://"+u.Host)
		req, err := http.NewRequest(v.Method, srv.URL+target, strings.NewReader(v.Body))
		if err != nil {
			t.Fatal(err)
		}
		if v.Method == http.MethodGet {
			req.Body, req.ContentLength = nil, 0
		}
		req.Host = u.Host
		if v.ContentType != "" {
			req.Header.Set("Content-Type", v.ContentType)
		}
		if v.Signature != "" {
			req.Header.Set(receiver.SignatureHeader, v.Signature)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s := <-ch
		if s.requestURI != target || s.host != u.Host {
			t.Fatalf("server saw %s %s, want %s %s", s.host, s.requestURI, u.Host, target)
		}
		return s
	}
	check := func(t *testing.T, v vector, s seen) {
		t.Helper()
		if (s.err == nil) != v.Valid {
			t.Fatalf("Verify = %v, vector says valid=%v", s.err, v.Valid)
		}
		if !v.Valid {
			return
		}
		want := v.Body
		if v.Method == http.MethodGet {
			want = v.URL
		}
		if string(s.data) != want {
			t.Fatalf("Verify returned %q, want the signed data %q", s.data, want)
		}
		if v.Method == http.MethodPost && string(s.reread) != v.Body {
			t.Fatalf("body not restored for the handler: %q", s.reread)
		}
	}
	for _, v := range file.Vectors {
		t.Run(v.Description, func(t *testing.T) {
			srv, ch := plainSrv, plainCh
			if strings.HasPrefix(v.URL, "https://") {
				srv, ch = tlsSrv, tlsCh
			}
			check(t, v, send(t, srv, ch, v))
			if strings.HasPrefix(v.URL, "https://merchant.example/") {
				t.Run("behind a TLS-terminating proxy", func(t *testing.T) {
					check(t, v, send(t, proxySrv, proxyCh, v))
				})
			}
		})
	}
	if n := len(file.Vectors); n < 10 {
		t.Fatalf("only %d vectors", n)
	}
}
