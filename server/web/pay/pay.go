package pay

import (
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/web"
	"github.com/payhook/payhook/server/web/pay/i18n"
)

// Handler serves the hosted pages.
type Handler struct {
	cfg Config
	// cat and printers are the message catalogues and a printer per
	// language code; langPages the pages per language code (their "t"
	// function is the language's).
	cat       *i18n.Catalog
	printers  map[string]*i18n.Printer
	langPages map[string]*web.Pages
	// icons are the coins with an icon of their own (assets/coin-X.svg).
	icons map[string]bool
}

// templateFS holds the pages (their frame is web's).
//
//go:embed templates/*.html
var templateFS embed.FS

// assetFS holds the pages' script and the coins' icons.
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
	cat, err := i18n.Load()
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, cat: cat, printers: map[string]*i18n.Printer{}, langPages: map[string]*web.Pages{}, icons: map[string]bool{}}
	for _, l := range cat.Languages() {
		p := cat.Printer(l)
		pages, err := web.NewPages(cfg.Logger, template.FuncMap{"t": p.T})
		if err != nil {
			return nil, err
		}
		for _, name := range []string{"invoice", "subscription", "message"} {
			if err := pages.Framed(name, templateFS, "templates/parts.html", "templates/"+name+".html"); err != nil {
				return nil, err
			}
		}
		h.printers[l.Code], h.langPages[l.Code] = p, pages
	}
	icons, err := fs.Glob(assetFS, "assets/coin-*.svg")
	if err != nil {
		return nil, err
	}
	for _, f := range icons {
		h.icons[strings.TrimSuffix(strings.TrimPrefix(f, "assets/coin-"), ".svg")] = true
	}
	return h, nil
}

// render renders page name in p's language.
func (h *Handler) render(w http.ResponseWriter, p *i18n.Printer, status int, name string, data any) {
	h.langPages[p.Language.Code].Render(w, status, name, data)
}

// iconOf is the URL of coin's icon (its own, or the generic one).
func (h *Handler) iconOf(coin string) string {
	if h.icons[coin] {
		return web.AssetPrefix + "coin-" + coin + ".svg"
	}
	return web.AssetPrefix + "coin.svg"
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
		h.notFound(w, r)
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
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case rest == "" && get:
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
	case (rest == "logo" || rest == "brand.css") && get:
		h.brandAsset(w, r, parts[0], id, rest)
	case rest == "" || rest == "status.json":
		web.MethodNotAllowed(w, "GET, HEAD, POST")
	default:
		h.notFound(w, r)
	}
	return true
}

// brandAsset answers the logo or the brand stylesheet (what) of the
// project whose invoice or subscription the page at segment/id shows.
func (h *Handler) brandAsset(w http.ResponseWriter, r *http.Request, segment, id, what string) {
	var projectID int64
	if segment == "subscription" {
		sub := h.findSubscription(w, r, id)
		if sub == nil {
			return
		}
		projectID = sub.ProjectID
	} else {
		inv, err := h.cfg.Invoices.Find(r.Context(), kindOf(segment), id)
		if errors.Is(err, invoice.ErrNotFound) {
			h.notFound(w, r)
			return
		}
		if err != nil {
			h.fail(w, r, "find invoice", err)
			return
		}
		projectID = inv.ProjectID
	}
	p, err := project.Get(r.Context(), h.cfg.DB, projectID)
	if err != nil {
		h.fail(w, r, "get project", err)
		return
	}
	if what == "logo" {
		h.serveLogo(w, r, p)
		return
	}
	serveBrandCSS(w, p)
}
