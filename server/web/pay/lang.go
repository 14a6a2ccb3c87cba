package pay

import (
	"net/http"
	"net/url"

	"github.com/payhook/payhook/server/web/pay/i18n"
)

// LangCookie remembers the language a payer chose with the language
// switch (?lang=), for a year, on every hosted page.
const LangCookie = "payhook_lang"

// langCookieAge is how long the language choice is remembered.
const langCookieAge = 365 * 24 * 60 * 60

// langLink is one entry of the language switch: a plain link to the same
// page with ?lang=, so it works without JavaScript.
type langLink struct {
	Code, Name, URL string
	Current         bool
}

// printer returns the printer of r's language: ?lang= (then remembered in
// LangCookie), else the cookie, else Accept-Language, else English. Only
// GET and HEAD of a page remember a choice: status.json, which the page's
// script polls with the page's language, speaks it without remembering it
// (printerOf), so that a poll of the page the payer just left cannot undo
// the language they chose on the next one.
func (h *Handler) printer(w http.ResponseWriter, r *http.Request) *i18n.Printer {
	return h.printerOf(w, r, true)
}

// printerOf is printer, remembering a ?lang= choice only when remember.
func (h *Handler) printerOf(w http.ResponseWriter, r *http.Request, remember bool) *i18n.Printer {
	asked := r.URL.Query().Get("lang")
	var remembered string
	if c, err := r.Cookie(LangCookie); err == nil {
		remembered = c.Value
	}
	l := h.cat.Match(r.Header.Get("Accept-Language"), asked, remembered)
	if chosen, ok := h.cat.Offered(asked); ok && remember && chosen.Code != remembered && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		http.SetCookie(w, &http.Cookie{
			Name: LangCookie, Value: chosen.Code, Path: "/", MaxAge: langCookieAge,
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
		})
	}
	w.Header().Set("Content-Language", l.Code)
	return h.printers[l.Code]
}

// langLinks is the language switch of the page at r's URL (its query kept,
// lang replaced), current marking p's language.
func (h *Handler) langLinks(r *http.Request, p *i18n.Printer) []langLink {
	var out []langLink
	for _, l := range h.cat.Languages() {
		q := r.URL.Query()
		q.Set("lang", l.Code)
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		out = append(out, langLink{Code: l.Code, Name: l.Name, URL: u.String(), Current: l.Code == p.Language.Code})
	}
	return out
}
