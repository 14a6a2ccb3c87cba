package dashboard

import (
	"mime"
	"net/http"
	"time"

	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/ledger/export"
)

// exportPath is the export page: a date range and a format, and a button
// that downloads the project's accounting export (exportDownload).
const exportPath = Prefix + "export/"

// exportData is the export page.
type exportData struct {
	dashLayout
	// From and Through are the dates shown (both included); Format the
	// format chosen.
	From, Through, Format string
	// Error says why the last download was refused.
	Error string
}

// exportRoutes serves /dashboard/export/ (the page) and
// /dashboard/export/download (the file), both GET.
func (h *Handler) exportRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get bool) bool {
	if h.cfg.Export == nil {
		return false
	}
	switch {
	case rest == "export" && get:
		http.Redirect(w, r, exportPath, http.StatusMovedPermanently)
	case rest == "export/" && get:
		now := h.cfg.Now().UTC()
		first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
		h.exportPage(w, r, s, http.StatusOK, exportData{From: first.Format(time.DateOnly), Through: now.Format(time.DateOnly), Format: string(export.CSV)})
	case rest == "export/download" && get:
		h.exportDownload(w, r, s)
	default:
		return false
	}
	return true
}

func (h *Handler) exportPage(w http.ResponseWriter, r *http.Request, s *session, status int, d exportData) {
	d.dashLayout = h.layoutOf(r, s, "Export", "export")
	h.pages.Render(w, status, "export", d)
}

// exportDownload streams the export of the dates from through through
// (both included: the range is [from, through + 1 day)) as an attachment.
// A bad range or format shows the page again with the reason (400); an
// error once rows are sent ends the file early and is logged.
func (h *Handler) exportDownload(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := exportData{From: q.Get("from"), Through: q.Get("through"), Format: q.Get("format")}
	f, err := export.ParseFormat(d.Format)
	if err != nil {
		d.Error = kind.Message(err)
		h.exportPage(w, r, s, http.StatusBadRequest, d)
		return
	}
	to := ""
	if t, err := time.Parse(time.DateOnly, d.Through); err == nil {
		to = t.AddDate(0, 0, 1).Format(time.DateOnly)
	} else if d.Through != "" {
		d.Error = "through: " + d.Through + " is not a date (2026-01-31)"
		h.exportPage(w, r, s, http.StatusBadRequest, d)
		return
	}
	rng, err := export.ParseRange(d.From, to)
	if err != nil {
		d.Error = kind.Message(err)
		h.exportPage(w, r, s, http.StatusBadRequest, d)
		return
	}
	// A year of rows takes a while: no write deadline for this answer.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", f.ContentType())
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": rng.Name(f)}))
	w.Header().Set("Cache-Control", "no-store")
	ew := export.NewWriter(flushWriter{w: w, rc: rc}, f)
	if _, err := h.cfg.Export.Export(r.Context(), s.user.ProjectID, rng, ew); err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "dashboard export failed; the file was cut short", "project", s.user.ProjectID, "error", err)
		return
	}
	if err := ew.Close(); err != nil {
		h.cfg.Logger.WarnContext(r.Context(), "dashboard export: the client went away", "project", s.user.ProjectID, "error", err)
	}
}

// flushWriter sends each write on at once: the export writes a page at a
// time, so the browser receives the file as it is read.
type flushWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}
