package web

import (
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

// Handler serves the hosted pages.
type Handler struct {
	cfg    Config
	pages  *Pages
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
	pages, err := NewPages(cfg.Logger, dashFuncs)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, pages: pages}
	for _, name := range []string{"invoice", "subscription"} {
		if err := pages.Framed(name, templateFS, "templates/parts.html", "templates/"+name+".html"); err != nil {
			return nil, err
		}
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
		if err := pages.Parse(name, templateFS, "templates/dash_layout.html", file); err != nil {
			return nil, err
		}
	}
	dummy, err := hashPassword("payhook dashboard: no such user")
	if err != nil {
		return nil, err
	}
	h.dummyHash = dummy
	h.hashSlots = make(chan struct{}, MaxConcurrentPasswordChecks)
	h.ips = newIPLimiter()
	h.liveStreams = newStreamSlots(cfg.MaxLiveStreams, MaxLiveStreamsPerSession, MaxLiveStreamsPerProject)
	if h.assets, err = NewAssets(); err != nil {
		return nil, err
	}
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
		Secure(w)
		h.pages.NotFound(w)
	}
}

// idPrefix is the prefix of the ids each page's path carries.
var idPrefix = map[string]string{"payment": "chk_", "deposit": "dep_", "subscription": "sub_"}

// route serves r when its path is a hosted page's and reports whether it
// did.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) bool {
	if h.dashboard(w, r) {
		return true
	}
	path := r.URL.Path
	if strings.HasPrefix(path, AssetPrefix) {
		h.assets.ServeHTTP(w, r)
		return true
	}
	parts := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(parts) < 2 {
		return false
	}
	prefix, ok := idPrefix[parts[0]]
	if !ok || !strings.HasPrefix(parts[1], prefix) {
		return false
	}
	Secure(w)
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
		MethodNotAllowed(w, "GET, HEAD, POST")
	default:
		h.pages.NotFound(w)
	}
	return true
}
