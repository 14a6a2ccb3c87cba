package address

import (
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/payload"

	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// fuzzDecimal parses s as a decimal; "" means absent and "null" null.
func fuzzAmount(s string) (payload.Amount, bool) {
	switch s {
	case "":
		return payload.Amount{}, true
	case "null":
		return payload.AmountNull(), true
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return payload.Amount{}, false
	}
	return payload.AmountOf(d), true
}

func FuzzEncode(f *testing.F) {
	f.Add("https://shop.example/cb?order=1", uint8(2), "uuid-1", "addr-in", "dest", "0.6", "dest2", "txin", "txout",
		int64(3), int64(3), uint8(2), "btc", int8(8), "65000.1", "0.0012", "0.001", "0.0001", "null",
		`{"USD":"1.00"}`, `{}`, "order", "1", "sig", "a/b c")
	f.Add("http://127.0.0.1:3000/", uint8(0), "u", "a", "d", "1", "", "t", "", int64(0), int64(1), uint8(0), "eth",
		int8(18), "", "1.0000000000000000005", "", "null", "", "", "", "uuid", "spoof", "tag", "\xff\u2028\"\\\n")
	f.Add("https://s.example?x=%zz&y", uint8(1), "u", "a", "d", "0.5", "d", "t", "o", int64(-1), int64(0), uint8(3),
		"c", int8(-1), "-1", "1e5", "1e-70", "x", "1", "{", "12.5", "", "v", "k", "v")
	f.Fuzz(func(t *testing.T, cbURL string, tr uint8, uuid, addrIn, dest1, share1, dest2, txIn, txOut string,
		conf, reqConf int64, status uint8, coin string, decimals int8, price, value, fwd, fee, netFee,
		convert, fwdConvert, k1, v1, k2, v2 string) {
		cb := Callback{
			UUID: uuid, AddressIn: addrIn, TxidIn: txIn, TxidOut: txOut,
			Confirmations: conf, RequiredConfirmations: reqConf,
			PaymentStatus: []string{StatusPending, StatusConfirmed, StatusCompleted, "bogus"}[status%4],
			Coin:          coin, Decimals: int32(decimals),
			Params: []payload.Param{{Key: k1, Value: v1}, {Key: k2, Value: v2}},
		}
		for _, s := range []struct{ addr, share string }{{dest1, share1}, {dest2, "0.5"}} {
			if s.addr == "" {
				continue
			}
			d, err := decimal.NewFromString(s.share)
			if err != nil {
				return
			}
			cb.AddressOut = append(cb.AddressOut, Share{s.addr, d})
		}
		if price != "" {
			d, err := decimal.NewFromString(price)
			if err != nil {
				return
			}
			cb.Price = &d
		}
		var ok bool
		v, ok1 := fuzzAmount(value)
		if cb.ValueForwardedCoin, ok = fuzzAmount(fwd); !ok || !ok1 || !v.Valid {
			return
		}
		cb.ValueCoin = v.Value
		if cb.FeeCoin, ok = fuzzAmount(fee); !ok {
			return
		}
		if cb.NetworkFee, ok = fuzzAmount(netFee); !ok {
			return
		}
		if convert != "" {
			cb.ValueCoinConvert = &convert
		}
		if fwdConvert != "" {
			cb.ValueForwardedCoinConvert = &fwdConvert
		}

		get, errGet := EncodeCallback(cbURL, payload.TransportGET, cb)
		form, errForm := EncodeCallback(cbURL, payload.TransportForm, cb)
		js, errJSON := EncodeCallback(cbURL, payload.TransportJSON, cb)
		_, _ = EncodeCallback(cbURL, payload.Transport(tr), cb) // any transport value: no panic
		if (errGet == nil) != (errForm == nil) || (errGet == nil) != (errJSON == nil) {
			t.Fatalf("transports disagree on validity: %v / %v / %v", errGet, errForm, errJSON)
		}
		if errGet != nil {
			if !errors.Is(errGet, payload.ErrInvalid) {
				t.Fatalf("error does not wrap payload.ErrInvalid: %v", errGet)
			}
			return
		}
		checkJSON(t, cb, js.Body)
		checkQueryRoundTrip(t, cbURL, cb, get, form, js.Body)
		if !bytes.Equal(payload.SignedData(js), js.Body) || string(payload.SignedData(get)) != get.URL {
			t.Fatal("SignedData is not what is sent")
		}
		// What an HTTP client puts on the wire is the signed URL.
		u, err := url.Parse(get.URL)
		if err != nil {
			t.Fatalf("GET URL does not parse: %v", err)
		}
		if wire := u.Scheme + "://" + u.Host + u.RequestURI(); wire != get.URL {
			t.Fatalf("GET URL %q goes on the wire as %q", get.URL, wire)
		}
	})
}

// jsonTypes is the documented JSON type of each payload field.
var jsonTypes = map[string]string{
	fUUID: "string", fAddressIn: "string", fAddressOut: "object", fTxidIn: "string", fTxidOut: "string",
	fConfirmations: "int", fRequiredConfirmations: "int", fPaymentStatus: "string", fCoin: "string",
	fPrice: "string", fValueCoin: "number", fValueForwardedCoin: "number", fFeeCoin: "number|null",
	fNetworkFee: "number|null", fValueCoinConvert: "jsontext", fValueForwardedCoinConvert: "jsontext",
}

func checkJSON(t *testing.T, cb Callback, body []byte) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("JSON body is not valid JSON: %s", body)
	}
	// Walk the members in order: fixed order, no duplicate names.
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if tok, _ := dec.Token(); tok != json.Delim('{') {
		t.Fatalf("body is not an object: %s", body)
	}
	seen := map[string]bool{}
	lastField := -1
	customs := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		name := tok.(string)
		if seen[name] {
			t.Fatalf("member %q twice: %s", name, body)
		}
		seen[name] = true
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		typ, reserved := jsonTypes[name]
		if !reserved {
			customs++
			if _, ok := v.(string); !ok {
				t.Fatalf("custom param %q is %T, want string", name, v)
			}
			continue
		}
		if customs > 0 {
			t.Fatalf("payload field %q after custom params: %s", name, body)
		}
		idx := -1
		for i, f := range fieldOrder {
			if f == name {
				idx = i
			}
		}
		if idx <= lastField {
			t.Fatalf("field %q out of order: %s", name, body)
		}
		lastField = idx
		checkType(t, name, typ, v)
	}
	progress := cb.PaymentStatus != StatusCompleted
	for _, f := range []string{fTxidOut, fValueForwardedCoin, fFeeCoin, fNetworkFee, fValueForwardedCoinConvert} {
		if progress && seen[f] {
			t.Fatalf("%s event carries %s", cb.PaymentStatus, f)
		}
	}
	for _, f := range []string{fUUID, fAddressIn, fAddressOut, fTxidIn, fConfirmations, fRequiredConfirmations, fPaymentStatus, fCoin, fValueCoin} {
		if !seen[f] {
			t.Fatalf("required field %s missing: %s", f, body)
		}
	}
}

func checkType(t *testing.T, name, typ string, v any) {
	t.Helper()
	number := func(v any) {
		n, ok := v.(json.Number)
		if !ok || strings.ContainsAny(string(n), "eE+-") {
			t.Fatalf("%s = %#v, want a plain non-negative JSON number", name, v)
		}
	}
	switch typ {
	case "string":
		if _, ok := v.(string); !ok {
			t.Fatalf("%s is %T, want string", name, v)
		}
	case "jsontext":
		s, ok := v.(string)
		if !ok || !json.Valid([]byte(s)) {
			t.Fatalf("%s = %#v, want a string holding JSON", name, v)
		}
	case "int":
		number(v)
		if strings.Contains(string(v.(json.Number)), ".") {
			t.Fatalf("%s = %v, want an integer", name, v)
		}
	case "number":
		number(v)
	case "number|null":
		if v != nil {
			number(v)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s is %T, want object", name, v)
		}
		for _, s := range m {
			number(s)
		}
	}
}

// checkQueryRoundTrip checks that GET and form carry, as strings, the values
// of the JSON body, and the custom params.
func checkQueryRoundTrip(t *testing.T, cbURL string, cb Callback, get, form payload.Request, body []byte) {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatal(err)
	}
	want := url.Values{}
	for _, name := range fieldOrder {
		raw, ok := members[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var s string
		if raw[0] == '"' {
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatal(err)
			}
		} else {
			s = string(raw) // numbers and address_out: their JSON text
		}
		want[name] = []string{s}
	}

	base, _ := egress.CheckURL(cbURL)
	if !strings.HasPrefix(get.URL, base) {
		t.Fatalf("GET URL %q does not start with the callback URL %q", get.URL, base)
	}
	if form.URL != base {
		t.Fatalf("form URL %q, want %q", form.URL, base)
	}
	suffix := strings.TrimLeft(get.URL[len(base):], "?&")
	gotGet, err := url.ParseQuery(suffix)
	if err != nil {
		t.Fatalf("GET fields do not parse: %v", err)
	}
	gotForm, err := url.ParseQuery(string(form.Body))
	if err != nil {
		t.Fatalf("form body does not parse: %v", err)
	}
	// Fields built from cb are valid UTF-8, so JSON and query agree exactly.
	for name, v := range want {
		if g := gotGet[name]; len(g) != 1 || g[0] != v[0] {
			t.Fatalf("GET %s = %q, JSON says %q", name, g, v[0])
		}
		if g := gotForm[name]; len(g) != 1 || g[0] != v[0] {
			t.Fatalf("form %s = %q, JSON says %q", name, g, v[0])
		}
	}
	if len(gotGet) != len(want) {
		t.Fatalf("GET carries %d fields, JSON %d: %v", len(gotGet), len(want), gotGet)
	}
	var wantCustom []string
	for _, p := range cb.Params {
		if !IsReserved(p.Key) {
			wantCustom = append(wantCustom, p.Key+"="+p.Value)
			// JSON: the first value of the name, as encoding/json would write it.
			if s := jsonString(members[jsonRoundTrip(p.Key)]); s != jsonRoundTrip(firstValue(cb.Params, p.Key)) {
				t.Fatalf("JSON custom %q = %q, want %q", p.Key, s, firstValue(cb.Params, p.Key))
			}
		}
	}
	var gotCustom []string
	for _, kv := range strings.Split(string(form.Body), "&")[len(want):] {
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		gotCustom = append(gotCustom, k+"="+v)
	}
	if strings.Join(gotCustom, "\x00") != strings.Join(wantCustom, "\x00") {
		t.Fatalf("form custom params %q, want %q", gotCustom, wantCustom)
	}
}

// firstValue is the value of the first param whose JSON name is k's.
func firstValue(ps []payload.Param, k string) string {
	for _, p := range ps {
		if jsonRoundTrip(p.Key) == jsonRoundTrip(k) {
			return p.Value
		}
	}
	return ""
}

func jsonString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// jsonRoundTrip is s after encoding/json wrote and read it back (invalid
// UTF-8 becomes U+FFFD).
func jsonRoundTrip(s string) string {
	b, _ := json.Marshal(s)
	return jsonString(b)
}
