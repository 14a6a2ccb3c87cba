package web

import "net/http"

// csp allows scripts, styles and fetches from the same origin only (so no
// inline script or style), images from the same origin and data: URIs (the
// QR code), forms posting back to the page, and no framing.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Secure sets the headers every response of the hosted pages, the
// dashboard and their assets carries: the Content-Security-Policy above,
// nosniff, no referrer and no framing. Call it before anything is written,
// redirects and errors included.
func Secure(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
}

// MethodNotAllowed answers 405 with the methods allowed (allow, as the
// Allow header lists them).
func MethodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}
