package web

import "net/http"

// invoiceRoutes serves the dashboard's pages of checkouts, deposits and subscriptions with their payments when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did.
func (h *Handler) invoiceRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	return false
}
