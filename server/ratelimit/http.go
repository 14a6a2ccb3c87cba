package ratelimit

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/payhook/payhook/server/route"
)

// RefusalPage answers a hosted page request the limits refused (status
// 429, its Retry-After and RateLimit headers already set) or could not
// check (status 503), in the visitor's language.
type RefusalPage func(w http.ResponseWriter, r *http.Request, status int)

// HTTP wraps the HTTP listener's handler: it finds each request's client
// address (ClientAddr) and puts it in the request's context for the calls
// forwarded to gRPC (DialOptions: its network for the limits, the address
// for the audit log), and takes a token of that
// network's bucket for every request to a hosted page (a checkout,
// deposit or subscription page, its status.json, its forms). A refused
// page request is a 429 with Retry-After and the RateLimit headers: JSON
// for status.json, refused's page otherwise (plain English text when nil).
// The pages' assets, the health check,
// metrics, documents and the dashboard (which has its own sign-in limit)
// take no token.
func (l *Limiter) HTTP(next http.Handler, refused RefusalPage) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, ok := ClientAddr(r, l.cfg.TrustedProxies)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		n := Network(addr)
		r = r.WithContext(withClient(r.Context(), addr))
		if !hostedPage(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		res, limited, err := l.Network(r.Context(), n)
		var d *Denied
		switch {
		case errors.As(err, &d):
			res.SetHeaders(w.Header())
			tooMany(w, r, d.Reason, refused)
			return
		case err != nil:
			l.logger.ErrorContext(r.Context(), "hosted page: rate limit", "error", err)
			if refused != nil && !strings.HasSuffix(r.URL.Path, "/status.json") {
				refused(w, r, http.StatusServiceUnavailable)
				return
			}
			http.Error(w, "The page is not available now; try again in a minute.", http.StatusServiceUnavailable)
			return
		case limited:
			res.SetHeaders(w.Header())
		}
		next.ServeHTTP(w, r)
	})
}

// hostedPage reports whether path is a hosted page's: /SEGMENT/ID... where
// ID has the page's prefix (route.HostedPages).
func hostedPage(path string) bool {
	seg, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	for _, p := range route.HostedPages() {
		if p.Segment == seg && strings.HasPrefix(rest, p.IDPrefix) {
			return true
		}
	}
	return false
}

// tooMany answers 429 with msg: the API's JSON error to status.json (the
// page's script backs off), refused's page (or text) to the page itself.
func tooMany(w http.ResponseWriter, r *http.Request, msg string, refused RefusalPage) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if strings.HasSuffix(r.URL.Path, "/status.json") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "error", "error": msg})
		return
	}
	if refused != nil {
		refused(w, r, http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte("Too many requests from your network. Wait a moment and reload this page.\n\n" + msg + "\n"))
}
