package dashboard

import (
	"net/http"
	"net/url"
	"strconv"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/server/audit"
)

// auditData is the audit log page: the project's changes, newest first.
type auditData struct {
	dashLayout
	Rows []*entdb.AuditEntry
	// Next is the query of the next (older) page; "" on the last.
	Next string
}

// auditRoutes serves the audit log page and its CSV export (owners only:
// authorize has checked).
func (h *Handler) auditRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, _ bool) bool {
	switch {
	case rest == "audit/" && get:
		h.auditPage(w, r, s)
	case rest == "audit.csv" && get:
		h.auditCSV(w, r, s)
	default:
		return false
	}
	return true
}

func (h *Handler) auditPage(w http.ResponseWriter, r *http.Request, s *session) {
	before, _ := strconv.ParseInt(r.URL.Query().Get("before"), 10, 64)
	rows, next, err := audit.List(r.Context(), h.cfg.DB, s.user.ProjectID, before, 0)
	if err != nil {
		h.pages.Fail(w, "audit log", err)
		return
	}
	d := auditData{dashLayout: h.layoutOf(r, s, "Audit log", "audit"), Rows: rows}
	if next > 0 {
		d.Next = url.Values{"before": {strconv.FormatInt(next, 10)}}.Encode()
	}
	h.pages.Render(w, http.StatusOK, "audit", d)
}

// auditCSV streams the whole audit log as CSV, a page of rows at a time
// (never all of it in memory). An error after the first bytes can only cut
// the download short: it is logged.
func (h *Handler) auditCSV(w http.ResponseWriter, r *http.Request, s *session) {
	hd := w.Header()
	hd.Set("Content-Type", "text/csv; charset=utf-8")
	hd.Set("Content-Disposition", `attachment; filename="payhook-audit-`+strconv.FormatInt(s.user.ProjectID, 10)+`.csv"`)
	hd.Set("Cache-Control", "no-store")
	flush := func() {}
	if f, ok := w.(http.Flusher); ok {
		flush = f.Flush
	}
	if err := audit.WriteCSV(r.Context(), h.cfg.DB, s.user.ProjectID, w, flush); err != nil {
		h.cfg.Logger.Error("dashboard: audit log export cut short", "project", s.user.ProjectID, "err", err)
	}
}
