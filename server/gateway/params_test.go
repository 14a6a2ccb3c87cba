package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/payhook/payhook/server/route"
)

// newTestGateway is the REST handler with every route (devnet included)
// in front of a gRPC connection to nowhere: what the handler refuses
// before calling the server is all these tests look at.
func newTestGateway(t *testing.T) http.Handler {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///127.0.0.1:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	h, err := New(context.Background(), conn, Config{Devnet: true}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// concretePath fills a route template's variables.
func concretePath(tmpl string) string {
	var segs []string
	tmpl = strings.ReplaceAll(tmpl, "{ticker=*/*}", "trc20/usdt")
	for _, s := range strings.Split(strings.Trim(tmpl, "/"), "/") {
		switch {
		case s == "{ticker}":
			s = "btc"
		case strings.HasPrefix(s, "{"):
			s = "x"
		}
		segs = append(segs, s)
	}
	return "/" + strings.Join(segs, "/") + "/"
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", w.Body, err)
	}
	return body.Error
}

// TestUnknownParamEveryRoute: every REST route of the route table refuses a
// query parameter it does not read, before the request reaches the
// server, naming it.
func TestUnknownParamEveryRoute(t *testing.T) {
	h := newTestGateway(t)
	n := 0
	for _, r := range route.Default().Routes() {
		if r.Kind != route.Gateway {
			continue
		}
		n++
		target := concretePath(r.Path) + "?zzzzzz=1"
		var body io.Reader
		if r.Verb == http.MethodPost && !queryBodyPaths[strings.TrimSuffix(concretePath(r.Path), "/")] {
			body = strings.NewReader("{}")
		}
		req := httptest.NewRequest(r.Verb, target, body)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if msg := errorOf(t, w); w.Code != http.StatusBadRequest || !strings.HasPrefix(msg, "zzzzzz: ") {
			t.Errorf("%s %s: HTTP %d %q, want 400 naming zzzzzz", r.Verb, target, w.Code, msg)
		}
	}
	if n < 40 {
		t.Fatalf("only %d gateway routes", n)
	}
}

func TestParamsCheck(t *testing.T) {
	ix, err := newParamIndex()
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name, route, query string
		asBody             bool
		want               string // "" when accepted; else a part of the message
	}{
		{"every create parameter", "GET /{ticker}/create", "callback=https%3A%2F%2Fs.example%2Fh%3Fa%3D1&address=x&confirmations=3&post=1&json=1&convert=1&pending=1&priority=fast&multi_token=1&multi_chain=1&cb_params=a%3D1&email=m%40s.example", false, ""},
		{"JSON names", "GET /{ticker}/create", "callback=x&cbParams=a&multiToken=1", false, ""},
		{"empty pieces", "GET /{ticker}/create", "&callback=x&&", false, ""},
		{"typo", "GET /{ticker}/create", "callback=x&confirmation=3", false, "confirmation: unknown parameter; did you mean confirmations?"},
		{"case", "GET /{ticker}/create", "Callback=x", false, "Callback: unknown parameter; did you mean callback?"},
		{"misspelt key", "GET /{ticker}/logs", "callback=x&api_key=ph_1", false, "api_key: unknown parameter; did you mean apikey?"},
		{"far from everything", "GET /{ticker}/logs", "callback=x&order=42", false, "order: unknown parameter; this endpoint's parameters are callback"},
		{"unencoded callback", "GET /{ticker}/create", "callback=https://shop.example/hook?order=42&sig=abc&json=1", false, "sig: unknown parameter right after callback, whose URL has a query of its own: URL-encode the callback value"},
		{"unencoded callback on logs", "GET /{ticker=*/*}/logs", "callback=https://shop.example/hook?order=42&sig=abc", false, "URL-encode the callback value"},
		{"encoded callback then a typo", "GET /{ticker}/create", "callback=https%3A%2F%2Fs.example%2Fh%3Fa%3D1&sig=abc", false, "sig: unknown parameter; "},
		{"unencoded notify_url", "GET /checkout/request", "notify_url=https://shop.example/n?order=1&token=abc&value=1", false, "URL-encode the notify_url value"},
		{"info prices", "GET /info", "prices=0", false, ""},
		{"ticker info prices", "GET /{ticker}/info", "prices=1", false, ""},
		{"ticker in the query", "GET /{ticker}/create", "ticker=btc&callback=x", false, "ticker: is part of the path"},
		{"no parameters", "GET /pubkey", "key=1", false, "key: unknown parameter; this endpoint takes no query parameters"},
		{"body route", "POST /devnet/{ticker}/pay", "value_coin=1", false, "value_coin: this endpoint reads its parameters from the JSON body"},
		{"query as body", "POST /notification/resend", "uuid=u", true, ""},
		{"query as body typo", "POST /notification/resend", "uid=u", true, "uid: unknown parameter; did you mean uuid?"},
		{"badly encoded name", "GET /{ticker}/logs", "%zz=1", false, "the name is not URL-encoded correctly"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			p := ix[r.route]
			if p == nil {
				t.Fatalf("no route %s", r.route)
			}
			got := p.check(r.query, r.asBody)
			if (r.want == "") != (got == "") || !strings.Contains(got, r.want) {
				t.Fatalf("check(%q) = %q, want %q", r.query, got, r.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	for _, r := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"confirmation", "confirmations", 1}, {"kitten", "sitting", 3}, {"abc", "", 3}} {
		if got := editDistance(r.a, r.b); got != r.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", r.a, r.b, got, r.want)
		}
	}
}
