package pay

import (
	"net/http"
	"strconv"

	"github.com/payhook/payhook/server/web"
	"github.com/payhook/payhook/server/web/pay/i18n"
)

// messagePageData is a page that only says something: not found, a
// failure, a refusal of the limits. It carries no merchant's branding (it
// may be shown for no payment at all).
type messagePageData struct {
	chrome
	// Text is what happened and what to do.
	Text string
	// Reload is the text of a link that reloads the page, after Text (""
	// for none).
	Reload string
}

// message renders the message page with status in pr's language.
func (h *Handler) message(w http.ResponseWriter, r *http.Request, pr *i18n.Printer, status int, titleKey, text, reload string) {
	web.Secure(w)
	d := messagePageData{Text: text, Reload: reload}
	d.chrome = h.chromeOf(r, pr, nil, r.URL.Path, pr.T(titleKey))
	h.render(w, pr, status, "message", d)
}

// notFound is the 404 page: no payment here.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	pr := h.printer(w, r)
	h.message(w, r, pr, http.StatusNotFound, "notfound.title", pr.T("notfound.text"), "")
}

// fail is the 500 page of a failure the visitor cannot fix; err is
// logged with what was being done.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	h.cfg.Logger.ErrorContext(r.Context(), "hosted page: "+what, "error", err)
	pr := h.printer(w, r)
	h.message(w, r, pr, http.StatusInternalServerError, "fail.title", pr.T("fail.text"), pr.T("page.reload"))
}

// badForm is the 400 page of a form post that does not parse (too large,
// or not a form).
func (h *Handler) badForm(w http.ResponseWriter, r *http.Request) {
	pr := h.printer(w, r)
	h.message(w, r, pr, http.StatusBadRequest, "fail.title", pr.T("error.choice"), "")
}

// Refused answers a page request the request limits refused (429: its
// Retry-After header is set) or could not check (503), in the visitor's
// language: it is the server's ratelimit.RefusalPage.
func (h *Handler) Refused(w http.ResponseWriter, r *http.Request, status int) {
	pr := h.printer(w, r)
	if status == http.StatusTooManyRequests {
		wait, err := strconv.Atoi(w.Header().Get("Retry-After"))
		if err != nil || wait < 1 {
			wait = 1
		}
		h.message(w, r, pr, status, "busy.title", pr.T("busy.text", wait), pr.T("busy.reload"))
		return
	}
	h.message(w, r, pr, status, "fail.title", pr.T("busy.unavailable"), pr.T("page.reload"))
}
