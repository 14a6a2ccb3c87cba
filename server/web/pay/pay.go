package pay

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/web"
)

// Handler serves the hosted pages.
type Handler struct {
	cfg   Config
	pages *web.Pages
}

// templateFS holds the pages (their frame is web's).
//
//go:embed templates/*.html
var templateFS embed.FS

// assetFS holds the pages' script.
//
//go:embed assets
var assetFS embed.FS

// Assets returns the pages' assets, in assets/, for web.NewAssets.
func Assets() fs.FS { return assetFS }

// New returns the handler of the hosted pages.
func New(cfg Config) (*Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pages, err := web.NewPages(cfg.Logger, nil)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"invoice", "subscription"} {
		if err := pages.Framed(name, templateFS, "templates/parts.html", "templates/"+name+".html"); err != nil {
			return nil, err
		}
	}
	return &Handler{cfg: cfg, pages: pages}, nil
}

// Wrap returns a handler that serves the hosted pages and passes every
// other request to next (the REST gateway, whose /deposit/request/ and
// /subscription/create/ share the first path segment with the pages).
func (h *Handler) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.route(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// ServeHTTP serves the hosted pages; anything else is a 404 page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.route(w, r) {
		web.Secure(w)
		h.pages.NotFound(w)
	}
}

// idPrefix returns the prefix of the ids the hosted page at segment
// carries (route.HostedPages), and whether segment is a hosted page's.
func idPrefix(segment string) (string, bool) {
	for _, p := range route.HostedPages() {
		if p.Segment == segment {
			return p.IDPrefix, true
		}
	}
	return "", false
}

// route serves r when its path is a hosted page's and reports whether it
// did.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) bool {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 2 {
		return false
	}
	prefix, ok := idPrefix(parts[0])
	if !ok || !strings.HasPrefix(parts[1], prefix) {
		return false
	}
	web.Secure(w)
	id, rest := parts[1], ""
	if len(parts) == 3 {
		rest = parts[2]
	} else {
		// /payment/{id} -> /payment/{id}/
		target := "/" + parts[0] + "/" + id + "/"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
		return true
	}
	switch {
	case rest == "" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		if parts[0] == "subscription" {
			h.subscriptionPage(w, r, id)
		} else {
			h.invoicePage(w, r, kindOf(parts[0]), id)
		}
	case rest == "" && r.Method == http.MethodPost:
		if parts[0] == "subscription" {
			h.subscriptionChoose(w, r, id)
		} else {
			h.invoiceChoose(w, r, kindOf(parts[0]), id)
		}
	case rest == "refund" && r.Method == http.MethodPost && parts[0] != "subscription":
		h.invoiceRefund(w, r, kindOf(parts[0]), id)
	case rest == "status.json" && r.Method == http.MethodGet:
		if parts[0] == "subscription" {
			h.subscriptionStatus(w, r, id)
		} else {
			h.invoiceStatus(w, r, kindOf(parts[0]), id)
		}
	case rest == "" || rest == "status.json":
		web.MethodNotAllowed(w, "GET, HEAD, POST")
	default:
		h.pages.NotFound(w)
	}
	return true
}
