package web

import "net/http"

// settingsRoutes serves the dashboard's pages of payout wallets, API keys and the webhook test when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did.
func (h *Handler) settingsRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	return false
}
