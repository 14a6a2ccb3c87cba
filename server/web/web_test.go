package web_test

import (
	"bytes"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/server/web"
)

// wantSecure fails t unless h carries the headers of web.Secure.
func wantSecure(t *testing.T, h http.Header) {
	t.Helper()
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
}

// TestAssets: the shared stylesheet and each part's files are served below
// AssetPrefix with the security headers and an hour's caching; a
// directory, an unknown name and a path outside the prefix are 404.
func TestAssets(t *testing.T) {
	t.Parallel()
	partA := fstest.MapFS{"assets/a.js": {Data: []byte("// a")}}
	partB := fstest.MapFS{"assets/b.css": {Data: []byte("/* b */")}}
	a, err := web.NewAssets(partA, partB)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name, path string
		code       int
		body, ct   string
	}{
		{"shared stylesheet", web.AssetPrefix + "style.css", 200, "", "text/css"},
		{"a part's script", web.AssetPrefix + "a.js", 200, "// a", "javascript"},
		{"another part's stylesheet", web.AssetPrefix + "b.css", 200, "/* b */", "text/css"},
		{"the directory", web.AssetPrefix, 404, "", ""},
		{"unknown name", web.AssetPrefix + "c.js", 404, "", ""},
		{"a part's folder name", web.AssetPrefix + "assets/a.js", 404, "", ""},
		{"outside the prefix", "/payment/a.js", 404, "", ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			a.ServeHTTP(w, httptest.NewRequest(http.MethodGet, r.path, nil))
			if w.Code != r.code {
				t.Fatalf("status %d, want %d: %s", w.Code, r.code, w.Body)
			}
			wantSecure(t, w.Header())
			if r.code != 200 {
				if cc := w.Header().Get("Cache-Control"); cc != "" {
					t.Errorf("a %d is cached: %s", r.code, cc)
				}
				return
			}
			if !strings.Contains(w.Header().Get("Content-Type"), r.ct) || w.Header().Get("Cache-Control") != "public, max-age=3600" {
				t.Errorf("headers %v", w.Header())
			}
			if r.body != "" && w.Body.String() != r.body {
				t.Errorf("body %q", w.Body)
			}
			if w.Body.Len() == 0 {
				t.Error("empty body")
			}
		})
	}
}

// TestAssetsOneOwner: a part cannot replace another's file, or the shared
// one, by carrying one of the same name; a part without assets/ is a
// mistake, not an empty part.
func TestAssetsOneOwner(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name  string
		parts []fs.FS
	}{
		{"the shared stylesheet", []fs.FS{fstest.MapFS{"assets/style.css": {Data: []byte("x")}}}},
		{"two parts' file", []fs.FS{fstest.MapFS{"assets/x.js": {}}, fstest.MapFS{"assets/x.js": {}}}},
		{"no assets folder", []fs.FS{fstest.MapFS{"other/x.js": {}}}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if _, err := web.NewAssets(r.parts...); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestPages: a page renders in full with no-store; one whose execution
// fails, or that was never added, is a clean 500 with nothing of the page
// and a log line; the not-found and error pages are the shared ones.
func TestPages(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	p, err := web.NewPages(slog.New(slog.NewTextHandler(&log, nil)), template.FuncMap{"shout": strings.ToUpper})
	if err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{
		"t/body.html":   {Data: []byte(`{{define "body"}}<p id="x">{{shout .Title}} {{utc .When}}</p>{{end}}`)},
		"t/frame.html":  {Data: []byte(`<main>{{template "content" .}}</main>`)},
		"t/broken.html": {Data: []byte(`{{define "content"}}before{{.Missing.Field}}{{end}}`)},
	}
	if err := p.Framed("framed", files, "t/body.html"); err != nil {
		t.Fatal(err)
	}
	if err := p.Parse("broken", files, "t/frame.html", "t/broken.html"); err != nil {
		t.Fatal(err)
	}
	if err := p.Parse("empty", files); err == nil {
		t.Fatal("a page without files was added")
	}
	type data struct {
		web.Layout
		When time.Time
	}
	rows := []struct {
		name   string
		render func(w http.ResponseWriter)
		code   int
		want   []string
		absent []string
		logged string
	}{
		{"framed page", func(w http.ResponseWriter) {
			p.Render(w, http.StatusOK, "framed", data{Layout: web.Layout{Title: "hello <b>"}, When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
		}, 200, []string{"<title>hello &lt;b&gt;</title>", `<p id="x">HELLO &lt;B&gt; 2026-01-02 03:04 UTC</p>`, `src="/payment/assets/page.js"`}, nil, ""},
		{"failing page", func(w http.ResponseWriter) { p.Render(w, http.StatusOK, "broken", struct{}{}) },
			500, []string{"internal error"}, []string{"before", "<main>"}, "page=broken"},
		{"unknown page", func(w http.ResponseWriter) { p.Render(w, http.StatusOK, "nothere", nil) },
			500, []string{"internal error"}, nil, "page=nothere"},
		{"not found", p.NotFound, 404, []string{"<title>Not found</title>", "There is no payment here"}, nil, ""},
		{"failure", func(w http.ResponseWriter) { p.Fail(w, "doing it", errors.New("disk on fire")) },
			500, []string{"Something went wrong"}, []string{"disk on fire"}, "disk on fire"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			log.Reset()
			w := httptest.NewRecorder()
			r.render(w)
			body := w.Body.String()
			if w.Code != r.code {
				t.Fatalf("status %d, want %d: %s", w.Code, r.code, body)
			}
			for _, s := range r.want {
				if !strings.Contains(body, s) {
					t.Errorf("body lacks %q:\n%s", s, body)
				}
			}
			for _, s := range r.absent {
				if strings.Contains(body, s) {
					t.Errorf("body has %q:\n%s", s, body)
				}
			}
			if r.code != 500 || r.name == "failure" {
				if w.Header().Get("Cache-Control") != "no-store" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
					t.Errorf("headers %v", w.Header())
				}
			}
			if !strings.Contains(log.String(), r.logged) || (r.logged == "") != (log.Len() == 0) {
				t.Errorf("log %q, want %q", log.String(), r.logged)
			}
		})
	}
}

// TestSecure: the headers every response carries.
func TestSecure(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	web.Secure(w)
	wantSecure(t, w.Header())
	w = httptest.NewRecorder()
	web.MethodNotAllowed(w, "GET, HEAD")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("405: %d %v", w.Code, w.Header())
	}
}

func TestCoinLabel(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name string
		t    chains.Ticker
		want string
	}{
		{"native coin", chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc"}, "BTC"},
		{"token", chains.Ticker{Ticker: "trc20/usdt", Network: "trc20", Coin: "usdt", Token: true}, "USDT (TRC20)"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := web.CoinLabel(r.t); got != r.want {
				t.Fatalf("%q, want %q", got, r.want)
			}
		})
	}
}

func TestPeriodLabel(t *testing.T) {
	t.Parallel()
	rows := []struct{ name, raw, want string }{
		{"one month", "1m", "1 month"},
		{"twelve months", "12m", "12 months"},
		{"one day", "1d", "1 day"},
		{"two weeks", "2w", "2 weeks"},
		{"one year", "1y", "1 year"},
		{"not a period", "monthly", "monthly"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := web.PeriodLabel(r.raw); got != r.want {
				t.Fatalf("%q, want %q", got, r.want)
			}
		})
	}
}
