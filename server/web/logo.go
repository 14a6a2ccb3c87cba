package web

import (
	"net/http"
	"strconv"
)

// logoCSP is the policy a project's logo is served with: it may not run a
// script, load anything, or be framed, even when opened on its own (an
// SVG is a document); sandbox makes it an opaque origin besides. An <img>
// never runs an SVG's scripts anyway; this is the wall for a logo opened
// by its URL. Inline styles stay allowed: SVG logos use them.
const logoCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'"

// ServeLogo answers a project's logo: data, of mediaType (checked when it
// was uploaded: PNG, JPEG or SVG), with the headers of Secure but a
// Content-Security-Policy of its own that forbids scripts and loads, and
// nosniff, so a browser takes it for what mediaType says or not at all.
// The URL carries a version (the page asks for ?v=...), so it may be
// cached; maxAge is how long, in seconds.
func ServeLogo(w http.ResponseWriter, r *http.Request, data []byte, mediaType string, maxAge int) {
	Secure(w)
	h := w.Header()
	h.Set("Content-Security-Policy", logoCSP)
	h.Set("Content-Type", mediaType)
	h.Set("Content-Disposition", "inline")
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(maxAge))
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}
