package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"path"
	"time"
)

// templateFS holds the hosted pages' frame and the pages every part
// shows: not found and something went wrong.
//
//go:embed templates/*.html
var templateFS embed.FS

// Layout is what the hosted pages' frame (templates/layout.html) needs;
// a page's data embeds it.
type Layout struct {
	// Title is the page's title.
	Title string
	// Refresh is the <noscript> refresh interval in seconds, 0 for none.
	Refresh int
	// RefreshURL is where the <noscript> refresh goes ("" reloads).
	RefreshURL string
	// Lang is the page's language (its html lang attribute); "" is en.
	Lang string
	// Stylesheet is a stylesheet of the page's own, after style.css (a
	// same-origin path); "" for none.
	Stylesheet string
}

// Funcs are the template functions every page may use.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"utc":  utc,
		"utcs": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
	}
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

// Pages are one part's parsed pages, with the not-found and error pages.
// A page is rendered whole or not at all.
type Pages struct {
	logger *slog.Logger
	funcs  template.FuncMap
	set    map[string]*template.Template
}

// NewPages returns a part's pages holding the not-found and error pages;
// the part adds its own with Framed or Parse. Its templates may use Funcs
// and funcs; failures are logged to logger.
func NewPages(logger *slog.Logger, funcs template.FuncMap) (*Pages, error) {
	all := Funcs()
	maps.Copy(all, funcs)
	p := &Pages{logger: logger, funcs: all, set: map[string]*template.Template{}}
	for _, name := range []string{"notfound", "error"} {
		if err := p.Framed(name, templateFS, "templates/"+name+".html"); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Framed adds page name: the hosted pages' frame with files of fsys, which
// define its "body" (and what that uses). Its data embeds Layout.
func (p *Pages) Framed(name string, fsys fs.FS, files ...string) error {
	t, err := template.New("layout.html").Funcs(p.funcs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return fmt.Errorf("page %s: %w", name, err)
	}
	if t, err = t.ParseFS(fsys, files...); err != nil {
		return fmt.Errorf("page %s: %w", name, err)
	}
	p.set[name] = t
	return nil
}

// Parse adds page name: files of fsys, the first of which is the template
// executed (a part's own frame).
func (p *Pages) Parse(name string, fsys fs.FS, files ...string) error {
	if len(files) == 0 {
		return fmt.Errorf("page %s: no template file", name)
	}
	t, err := template.New(path.Base(files[0])).Funcs(p.funcs).ParseFS(fsys, files...)
	if err != nil {
		return fmt.Errorf("page %s: %w", name, err)
	}
	p.set[name] = t
	return nil
}

// Render executes page into a buffer first, so that a template failure is
// a clean 500 rather than half a page; a page is never cached.
func (p *Pages) Render(w http.ResponseWriter, status int, page string, data any) {
	var buf bytes.Buffer
	t, ok := p.set[page]
	if !ok {
		p.logger.Error("hosted page: render", "page", page, "error", "no such page")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if err := t.Execute(&buf, data); err != nil {
		p.logger.Error("hosted page: render", "page", page, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// NotFound shows the not-found page (404).
func (p *Pages) NotFound(w http.ResponseWriter) {
	p.Render(w, http.StatusNotFound, "notfound", Layout{Title: "Not found"})
}

// Fail shows a generic error page (500) for a failure the visitor cannot
// fix, and logs err with what was being done.
func (p *Pages) Fail(w http.ResponseWriter, what string, err error) {
	p.logger.Error("hosted page: "+what, "error", err)
	p.Render(w, http.StatusInternalServerError, "error", Layout{Title: "Something went wrong"})
}
