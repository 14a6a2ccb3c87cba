package openapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/openapi"
	"github.com/payhook/payhook/server/servertest"
)

const generated = "../../gen/openapi/payhook.openapi.json"

// TestEmbeddedIsGenerated: the embedded copy is the generated document
// (scripts/generate.sh copies it; scripts/check-generated.sh proves gen/ is
// current).
func TestEmbeddedIsGenerated(t *testing.T) {
	b, err := os.ReadFile(generated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, openapi.Document()) {
		t.Fatalf("server/openapi/openapi.json differs from %s: run ./scripts/generate.sh", generated)
	}
}

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w.Result()
}

// TestServed: a real server serves the document and the reference page
// (every operation on it, each body's media types, response headers,
// referenced parameters), with its stylesheet, under a CSP that allows no
// script and nothing from elsewhere.
func TestServed(t *testing.T) {
	in := servertest.Start(t, store.SQLite)
	fetch := func(path string) (*http.Response, []byte) {
		t.Helper()
		resp, err := http.Get(in.BaseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, doc := fetch("/openapi.json")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || !bytes.Equal(doc, openapi.Document()) {
		t.Fatalf("/openapi.json: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(doc))
	}
	resp, page := fetch("/docs/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("/docs/: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("/docs/ CSP %q", csp)
	}
	for _, bad := range []string{"<script", " src=", `href="http`, `href="//`, " style=", "@import"} {
		if strings.Contains(string(page), bad) {
			t.Errorf("/docs/ contains %q", bad)
		}
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		}
	}
	if err := json.Unmarshal(doc, &spec); err != nil {
		t.Fatal(err)
	}
	for path, item := range spec.Paths {
		for _, op := range item {
			if !strings.Contains(string(page), `id="op-`+op.OperationID+`"`) || !strings.Contains(string(page), "<code>"+path+"</code>") {
				t.Errorf("/docs/ lacks %s (%s)", op.OperationID, path)
			}
		}
	}
	// Every media type of a body is named (the export's CSV and JSON, a
	// form body), response headers are listed, and a parameter given by
	// reference (Idempotency-Key) is shown as itself.
	for _, want := range []string{"<code>text/csv</code>: string", "<code>application/json</code>: array of",
		"Body as <code>application/x-www-form-urlencoded</code>", "Header <code>Content-Disposition</code>", "<code>Idempotency-Key</code>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("/docs/ lacks %q", want)
		}
	}
	if strings.Contains(string(page), "<td><code></code>") {
		t.Errorf("/docs/ shows a parameter without a name")
	}
	if resp, css := fetch("/docs/style.css"); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") || len(css) == 0 {
		t.Errorf("/docs/style.css: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp, _ := fetch("/docs"); resp.Request.URL.Path != "/docs/" {
		t.Errorf("/docs led to %s", resp.Request.URL.Path)
	}
}

func TestHandlerRefuses(t *testing.T) {
	h, err := openapi.Handler()
	if err != nil {
		t.Fatal(err)
	}
	if r := get(t, h, http.MethodPost, "/openapi.json"); r.StatusCode != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /openapi.json: %d", r.StatusCode)
	}
	if r := get(t, h, http.MethodGet, "/docs/nothing"); r.StatusCode != 404 {
		t.Errorf("/docs/nothing: %d", r.StatusCode)
	}
}

// TestLint runs Redocly's linter (npm @redocly/cli, pinned by
// tools/openapi/package-lock.json) on the generated document: no error.
func TestLint(t *testing.T) {
	nodetest.Need(t, "node", "install Node.js 20 or later with npm (Debian: apt-get install nodejs npm)")
	dir, err := filepath.Abs("../../tools/openapi")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(bin); err != nil {
		msg := "the linter is not installed: npm ci --prefix tools/openapi --no-audit --no-fund"
		if nodetest.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(bin, "lint", "--config", filepath.Join(dir, "redocly.yaml"), "--format", "stylish", generated)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("redocly lint: %v\n%s", err, out)
	}
	t.Logf("redocly lint:\n%s", out)
}
