package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/payhook/payhook/server/route"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// AssetPrefix is where the embedded assets are served (route.Assets): under
// the checkout path, whose first segment is reserved (no ticker starts with
// it) and where no payment_id is named "assets".
const AssetPrefix = route.Assets

// csp allows scripts, styles and fetches from the same origin only (so no
// inline script or style), images from the same origin and data: URIs (the
// QR code), forms posting back to the page, and no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Handler serves the hosted pages.
type Handler struct {
	cfg    Config
	pages  map[string]*template.Template
	assets http.Handler
	// dummyHash is checked when no dashboard user has the email given, so
	// an unknown email costs what a wrong password costs.
	dummyHash string
	// hashSlots bounds concurrent password checks (64 MiB each): a flood
	// of sign-ins is answered 503 instead of exhausting memory.
	hashSlots chan struct{}
	// ips counts failed sign-ins per client network.
	ips *ipLimiter
	// proxyWarning logs once that requests come through an untrusted
	// proxy.
	proxyWarning sync.Once
	// liveStreams counts the dashboard's open live streams.
	liveStreams *streamSlots
}

// New returns the handler of the hosted pages and the dashboard.
func New(cfg Config) (*Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, pages: map[string]*template.Template{}}
	funcs := template.FuncMap{
		"utc": utc,
	}
	for _, name := range []string{"invoice", "subscription", "notfound", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, err
		}
		h.pages[name] = t
	}
	for name, f := range dashFuncs {
		funcs[name] = f
	}
	names, err := fs.Glob(templateFS, "templates/dash_*.html")
	if err != nil {
		return nil, err
	}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "dash_layout" {
			continue
		}
		t, err := template.New("dash_layout.html").Funcs(funcs).ParseFS(templateFS, "templates/dash_layout.html", file)
		if err != nil {
			return nil, err
		}
		h.pages[name] = t
	}
	dummy, err := hashPassword("payhook dashboard: no such user")
	if err != nil {
		return nil, err
	}
	h.dummyHash = dummy
	h.hashSlots = make(chan struct{}, MaxConcurrentPasswordChecks)
	h.ips = newIPLimiter()
	h.liveStreams = newStreamSlots(cfg.MaxLiveStreams, MaxLiveStreamsPerSession, MaxLiveStreamsPerProject)
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	h.assets = http.StripPrefix(AssetPrefix, http.FileServer(http.FS(sub)))
	return h, nil
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
		secure(w)
		h.notFound(w)
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
	if h.dashboard(w, r) {
		return true
	}
	path := r.URL.Path
	if strings.HasPrefix(path, AssetPrefix) {
		secure(w)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.assets.ServeHTTP(w, r)
		return true
	}
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 2 {
		return false
	}
	prefix, ok := idPrefix(parts[0])
	if !ok || !strings.HasPrefix(parts[1], prefix) {
		return false
	}
	secure(w)
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
	case rest == "status.json" && r.Method == http.MethodGet:
		if parts[0] == "subscription" {
			h.subscriptionStatus(w, r, id)
		} else {
			h.invoiceStatus(w, r, kindOf(parts[0]), id)
		}
	case rest == "" || rest == "status.json":
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		h.notFound(w)
	}
	return true
}

// secure sets the headers every hosted response carries.
func secure(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
}

// render executes page into a buffer first, so that a template failure is
// a clean 500 rather than half a page.
func (h *Handler) render(w http.ResponseWriter, status int, page string, data any) {
	var buf bytes.Buffer
	if err := h.pages[page].Execute(&buf, data); err != nil {
		h.cfg.Logger.Error("hosted page: render", "page", page, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (h *Handler) notFound(w http.ResponseWriter) {
	h.render(w, http.StatusNotFound, "notfound", layout{Title: "Not found"})
}

// fail shows a generic error page for a failure the customer cannot fix,
// and logs it.
func (h *Handler) fail(w http.ResponseWriter, what string, err error) {
	h.cfg.Logger.Error("hosted page: "+what, "error", err)
	h.render(w, http.StatusInternalServerError, "error", layout{Title: "Something went wrong"})
}

// utc shows a time (or *time.Time) to the minute, in UTC.
func utc(v any) string {
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format("2006-01-02 15:04 UTC")
	case *time.Time:
		if t != nil {
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
	}
	return ""
}

// layout is what every page's frame needs.
type layout struct {
	// Title is the page's title.
	Title string
	// Refresh is the <noscript> refresh interval in seconds, 0 for none.
	Refresh int
	// RefreshURL is where the <noscript> refresh goes ("" reloads).
	RefreshURL string
}
