package web

import "net/http"

// liveRoutes serves the dashboard's pages of live delivery events (server-sent events) and the activity plots when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did.
func (h *Handler) liveRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	return false
}
