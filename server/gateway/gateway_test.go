package gateway

import (
	"net/http"
	"net/http/httptest"
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
