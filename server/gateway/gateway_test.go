package gateway

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestWithSuccess(t *testing.T) {
	rows := []struct{ name, in, want string }{
		{"object", `{"a":1}`, `{"status":"success","a":1}`},
		{"empty object", `{}`, `{"status":"success"}`},
		{"not an object", `[1]`, `[1]`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := string(withSuccess([]byte(r.in))); got != r.want {
				t.Fatalf("got %s, want %s", got, r.want)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	rows := []struct{ name, in, want string }{
		{"int", `parsing field "confirmations": strconv.ParseInt: parsing "abc": invalid syntax`, `confirmations: "abc" is not an integer`},
		{"bool", `parsing field "post": strconv.ParseBool: parsing "yes": invalid syntax`, `post: "yes" is not a boolean (1 or 0)`},
		{"other message unchanged", `callback: value is required`, `callback: value is required`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := parseErrorMessage(r.in); got != r.want {
				t.Fatalf("got %q, want %q", got, r.want)
			}
		})
	}
}

func TestStripTrailingSlash(t *testing.T) {
	rows := []struct{ in, want string }{
		{"/btc/create/", "/btc/create"},
		{"/btc/create", "/btc/create"},
		{"/trc20/usdt/logs/", "/trc20/usdt/logs"},
		{"/", "/"},
		{"/pubkey//", "/pubkey/"}, // one slash only
	}
	for _, r := range rows {
		var got string
		h := StripTrailingSlash(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { got = req.URL.Path }))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, r.in, nil))
		if got != r.want {
			t.Errorf("%s -> %s, want %s", r.in, got, r.want)
		}
	}
}

func TestAPIKeyFromQuery(t *testing.T) {
	rows := []struct {
		name, target, header string
		wantCode             int
		wantQuery, wantKey   string
	}{
		{"no key", "/btc/logs?callback=a", "", 200, "callback=a", ""},
		{"header only", "/btc/logs?callback=a", "ph_h", 200, "callback=a", "ph_h"},
		{"query key moves to the header", "/btc/logs?callback=https%3A%2F%2Fs.example%2F%3Fa%3D1&apikey=ph_q&x=%20", "", 200, "callback=https%3A%2F%2Fs.example%2F%3Fa%3D1&x=%20", "ph_q"},
		{"escaped name", "/btc/logs?api%6Bey=ph_q&b=2", "", 200, "b=2", "ph_q"},
		{"key only", "/btc/logs?apikey=ph_q", "", 200, "", "ph_q"},
		{"same key twice", "/btc/logs?apikey=ph_q&apikey=ph_q", "ph_q", 200, "", "ph_q"},
		{"different keys", "/btc/logs?apikey=ph_q&apikey=ph_r", "", 400, "", ""},
		{"query and header differ", "/btc/logs?apikey=ph_q", "ph_h", 400, "", ""},
		{"badly escaped key", "/btc/logs?apikey=%zz", "", 400, "", ""},
		{"a parameter that only contains the name", "/btc/logs?myapikey=1", "", 200, "myapikey=1", ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var seen *http.Request
			h := APIKeyFromQuery(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { seen = req }))
			req := httptest.NewRequest(http.MethodGet, r.target, nil)
			if r.header != "" {
				req.Header.Set("apikey", r.header)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != r.wantCode {
				t.Fatalf("HTTP %d, want %d: %s", rec.Code, r.wantCode, rec.Body)
			}
			if r.wantCode != 200 {
				if seen != nil || strings.Contains(rec.Body.String(), "ph_") {
					t.Fatalf("refused request went on, or its body names the key: %s", rec.Body)
				}
				return
			}
			if seen.URL.RawQuery != r.wantQuery || seen.Header.Get("apikey") != r.wantKey {
				t.Fatalf("query %q key %q, want %q %q", seen.URL.RawQuery, seen.Header.Get("apikey"), r.wantQuery, r.wantKey)
			}
			if u, err := url.ParseRequestURI(seen.RequestURI); err != nil || u.Query().Has("apikey") || seen.URL.Query().Has("apikey") {
				t.Fatalf("request URI still has the key: %s", seen.RequestURI)
			}
		})
	}
}

// FuzzAPIKeyFromQuery checks that, whatever the query, the request that goes
// on carries no apikey parameter, keeps every other parameter byte for
// byte, and that a refused request never goes on.
func FuzzAPIKeyFromQuery(f *testing.F) {
	for _, s := range []string{"", "apikey=k", "a=1&apikey=k&b=%20", "api%6bey=k", "apikey=%zz", "apikey=a&apikey=b", "&&apikey&=", "x=%", "apikey=k;b=1"} {
		f.Add(s, "")
		f.Add(s, "k")
	}
	f.Fuzz(func(t *testing.T, rawQuery, header string) {
		var seen *http.Request
		h := APIKeyFromQuery(http.HandlerFunc(func(_ http.ResponseWriter, req *http.Request) { seen = req }))
		req := httptest.NewRequest(http.MethodGet, "/btc/logs", nil)
		req.URL.RawQuery = rawQuery
		req.RequestURI = req.URL.RequestURI()
		if header != "" {
			req.Header.Set("apikey", header)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			if seen != nil || rec.Code != http.StatusBadRequest {
				t.Fatalf("HTTP %d, request went on: %v", rec.Code, seen != nil)
			}
			return
		}
		var kept []string
		for part := range strings.SplitSeq(rawQuery, "&") {
			k, _, _ := strings.Cut(part, "=")
			if name, err := url.QueryUnescape(k); err != nil || name != APIKeyParam {
				kept = append(kept, part)
			}
		}
		if seen == nil {
			t.Fatal("accepted request did not go on")
		}
		if got := seen.URL.RawQuery; got != rawQuery && got != strings.Join(kept, "&") {
			t.Fatalf("query %q from %q", got, rawQuery)
		}
		for part := range strings.SplitSeq(seen.URL.RawQuery, "&") {
			k, _, _ := strings.Cut(part, "=")
			if name, err := url.QueryUnescape(k); err == nil && name == APIKeyParam {
				t.Fatalf("apikey left in %q", seen.URL.RawQuery)
			}
		}
	})
}

// TestNumbersAsStrings: the amounts of a payout bulk request's outputs
// that came as JSON numbers become strings of their exact text; nothing
// else changes, duplicate keys included; a document that is not JSON is
// an error.
func TestNumbersAsStrings(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"numbers", `{"outputs": {"a": 0.5, "b": "0.25", "c": 1e-8}}`, `{"outputs":{"a":"0.5","b":"0.25","c":"1e-8"}}`},
		{"many digits stay exact", `{"outputs":{"a":0.123456789012345678901}}`, `{"outputs":{"a":"0.123456789012345678901"}}`},
		{"duplicate keys kept", `{"outputs":{"a":1,"a":2}}`, `{"outputs":{"a":"1","a":"2"}}`},
		{"other fields untouched", `{"n": 1, "outputs": {"a": 2}, "x": [1, {"outputs": 3}], "y": {"z": 4}}`, `{"n":1,"outputs":{"a":"2"},"x":[1,{"outputs":3}],"y":{"z":4}}`},
		{"nested values untouched", `{"outputs":{"a":[1,2],"b":{"c":3},"d":true,"e":null}}`, `{"outputs":{"a":[1,2],"b":{"c":3},"d":true,"e":null}}`},
		{"empty", `{"outputs":{}}`, `{"outputs":{}}`},
	} {
		got, err := numbersAsStrings([]byte(c.in), "outputs")
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, err, c.want)
		}
	}
	if _, err := numbersAsStrings([]byte(`{"outputs": {`), "outputs"); err == nil {
		t.Error("a truncated document: no error")
	}
}
