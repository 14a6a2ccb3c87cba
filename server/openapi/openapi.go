package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
)

// document is the generated OpenAPI document (see the package doc).
//
//go:embed openapi.json
var document []byte

//go:embed docs.css
var stylesheet []byte

// Paths the handler answers.
const (
	// DocumentPath is where the OpenAPI document is served.
	DocumentPath = "/openapi.json"
	// DocsPath is the reference page's path; its stylesheet is below it.
	DocsPath = "/docs/"

	stylePath = DocsPath + "style.css"
	csp       = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// Document returns a copy of the embedded OpenAPI document.
func Document() []byte { return bytes.Clone(document) }

// Handler serves DocumentPath, DocsPath and the page's stylesheet; other
// paths under DocsPath are 404. Only GET and HEAD are allowed. The page is
// rendered once, here: an error means the embedded document does not
// parse.
func Handler() (http.Handler, error) {
	var spec Spec
	if err := json.Unmarshal(document, &spec); err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	page, err := render(&spec)
	if err != nil {
		return nil, fmt.Errorf("openapi reference page: %w", err)
	}
	files := map[string]struct {
		body        []byte
		contentType string
	}{
		DocumentPath: {document, "application/json"},
		DocsPath:     {page, "text/html; charset=utf-8"},
		stylePath:    {stylesheet, "text/css; charset=utf-8"},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == DocumentPath {
			// Client generators and browser tools fetch it from elsewhere.
			h.Set("Access-Control-Allow-Origin", "*")
		}
		_, _ = w.Write(f.body)
	}), nil
}
