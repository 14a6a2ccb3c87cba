package dashboard

import (
	"net/http"
	"strings"

	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/web"
)

// Roles of dashboard users, as the schema stores them. An owner may do
// everything (users and payout approval included); a developer what a
// project's integration needs (endpoints, keys, secrets, events, settings
// except payout wallets), no payouts and no users; a viewer reads only.
const (
	RoleOwner     = dashboarduser.RoleOwner
	RoleDeveloper = dashboarduser.RoleDeveloper
	RoleViewer    = dashboarduser.RoleViewer
)

// rank orders the roles: a route requiring a role admits it and every
// role above it. A role not here (none) ranks below all.
var rank = map[dashboarduser.Role]int{RoleViewer: 1, RoleDeveloper: 2, RoleOwner: 3}

// ParseRole returns the role named s (owner, developer, viewer).
func ParseRole(s string) (dashboarduser.Role, bool) {
	r := dashboarduser.Role(strings.ToLower(strings.TrimSpace(s)))
	return r, dashboarduser.RoleValidator(r) == nil
}

// admits reports whether a user of role have may use a route that
// requires need.
func admits(have, need dashboarduser.Role) bool {
	return rank[have] > 0 && rank[have] >= rank[need]
}

// route is one route of a signed-in session: its method, path and the
// least role that may use it. Every route the dashboard serves to a
// session is in routes; a request matching none is refused before any
// handler runs (fail closed).
type route struct {
	// method is GET (which admits HEAD too) or POST.
	method string
	// path is below Prefix; a segment {name} matches any one non-empty
	// segment, and a trailing / must be there.
	path string
	// role is the least role that may use it.
	role dashboarduser.Role
	// action names a POST in the audit log (recorded after it succeeded);
	// "" records nothing: the handler records it in its own transaction,
	// or it changes nothing of the project (sign-out, a test webhook).
	action string
	// target is the form field that names what the action is done to,
	// when the path does not.
	target string
	// reauth: the user must have proved it is them within
	// Config.ReauthWindow (a password or TOTP code again) before it runs.
	reauth bool
}

// routes are the dashboard's routes of signed-in sessions. The sign-in
// and invitation pages are served before a session exists and are not
// here; a session still owing its TOTP code or its enrolment reaches only
// those pages (pendingRoutes).
var routes = []route{
	{method: "GET", path: "", role: RoleViewer},
	{method: "POST", path: "signout", role: RoleViewer},
	{method: "GET", path: "notifications/", role: RoleViewer},
	{method: "GET", path: "notifications/{id}", role: RoleViewer},
	{method: "GET", path: "notifications/{id}/", role: RoleViewer},
	{method: "POST", path: "notifications/{id}/resend", role: RoleDeveloper, action: "notification.resend"},

	{method: "GET", path: "settings/", role: RoleViewer},
	{method: "GET", path: "settings/logo", role: RoleViewer},
	{method: "POST", path: "settings/rotate-secret", role: RoleDeveloper, action: "settings.rotate_ipn_secret", reauth: true},
	{method: "POST", path: "settings/rotate-callback-key", role: RoleDeveloper, action: "settings.rotate_callback_key", reauth: true},
	{method: "POST", path: "settings/branding", role: RoleDeveloper, action: "settings.branding"},
	{method: "POST", path: "settings/logo", role: RoleDeveloper, action: "settings.logo"},
	{method: "POST", path: "settings/logo/remove", role: RoleDeveloper, action: "settings.logo_remove"},
	{method: "POST", path: "settings/wallets", role: RoleOwner, action: "settings.wallet_set", target: "ticker", reauth: true},
	{method: "POST", path: "settings/wallets/remove", role: RoleOwner, action: "settings.wallet_remove", target: "ticker", reauth: true},
	{method: "POST", path: "settings/keys", role: RoleDeveloper, action: "api_key.create", target: "name", reauth: true},
	{method: "POST", path: "settings/keys/{id}/revoke", role: RoleDeveloper, action: "api_key.revoke"},
	{method: "POST", path: "settings/test-webhook", role: RoleDeveloper},
	{method: "POST", path: "settings/payout-webhook", role: RoleDeveloper, action: "settings.payout_webhook"},
	{method: "POST", path: "settings/exceptions", role: RoleDeveloper, action: "settings.payment_exceptions"},

	{method: "GET", path: "checkouts", role: RoleViewer},
	{method: "GET", path: "checkouts/", role: RoleViewer},
	{method: "GET", path: "checkouts/{id}", role: RoleViewer},
	{method: "GET", path: "checkouts/{id}/", role: RoleViewer},
	{method: "POST", path: "checkouts/{id}/refund", role: RoleOwner, action: "checkout.refund"},
	{method: "GET", path: "deposits", role: RoleViewer},
	{method: "GET", path: "deposits/", role: RoleViewer},
	{method: "GET", path: "deposits/{id}", role: RoleViewer},
	{method: "GET", path: "deposits/{id}/", role: RoleViewer},
	{method: "POST", path: "deposits/{id}/refund", role: RoleOwner, action: "deposit.refund"},
	{method: "GET", path: "subscriptions", role: RoleViewer},
	{method: "GET", path: "subscriptions/", role: RoleViewer},
	{method: "GET", path: "subscriptions/{id}", role: RoleViewer},
	{method: "GET", path: "subscriptions/{id}/", role: RoleViewer},

	{method: "GET", path: "payouts", role: RoleViewer},
	{method: "GET", path: "payouts/", role: RoleViewer},
	{method: "POST", path: "payouts/{id}/approve", role: RoleOwner, action: "payout.approve"},
	// A payout's PSBT: reading it is read access; uploading it signed
	// sends the payout, so it needs what approving one needs.
	{method: "GET", path: "payouts/{id}/psbt", role: RoleViewer},
	{method: "POST", path: "payouts/{id}/psbt", role: RoleOwner, action: "payout.psbt_submit"},
	{method: "POST", path: "payouts/refund/{id}/approve", role: RoleOwner, action: "refund.approve"},
	{method: "POST", path: "payouts/wrong-asset/{id}/forward", role: RoleOwner, action: "wrong_asset.forward"},
	{method: "POST", path: "payouts/wrong-asset/{id}/refund", role: RoleOwner, action: "wrong_asset.refund"},

	{method: "GET", path: "endpoints", role: RoleViewer},
	{method: "GET", path: "endpoints/", role: RoleViewer},
	{method: "POST", path: "endpoints/", role: RoleDeveloper, action: "endpoint.create", target: "url"},
	{method: "GET", path: "endpoints/{id}", role: RoleViewer},
	{method: "GET", path: "endpoints/{id}/", role: RoleViewer},
	{method: "POST", path: "endpoints/{id}/update", role: RoleDeveloper, action: "endpoint.update"},
	{method: "POST", path: "endpoints/{id}/rotate-secret", role: RoleDeveloper, action: "endpoint.rotate_secret", reauth: true},
	{method: "POST", path: "endpoints/{id}/pause", role: RoleDeveloper, action: "endpoint.pause"},
	{method: "POST", path: "endpoints/{id}/resume", role: RoleDeveloper, action: "endpoint.resume"},
	{method: "POST", path: "endpoints/{id}/test", role: RoleDeveloper},
	{method: "POST", path: "endpoints/{id}/delete", role: RoleDeveloper, action: "endpoint.delete"},
	{method: "POST", path: "endpoints/{id}/replay", role: RoleDeveloper, action: "endpoint.replay"},

	{method: "GET", path: "export", role: RoleViewer},
	{method: "GET", path: "export/", role: RoleViewer},
	{method: "GET", path: "export/download", role: RoleViewer},

	{method: "GET", path: "events", role: RoleViewer},
	{method: "GET", path: "activity", role: RoleViewer},
	{method: "GET", path: "activity/", role: RoleViewer},

	{method: "GET", path: "audit/", role: RoleOwner},
	{method: "GET", path: "audit.csv", role: RoleOwner},

	{method: "GET", path: "team/", role: RoleOwner},
	{method: "POST", path: "team/{id}/disable", role: RoleOwner},
	{method: "POST", path: "team/{id}/enable", role: RoleOwner},
	{method: "POST", path: "team/{id}/role", role: RoleOwner, reauth: true},
	{method: "POST", path: "team/{id}/sessions/revoke", role: RoleOwner},
	{method: "POST", path: "team/invite", role: RoleOwner},
	{method: "POST", path: "team/security", role: RoleOwner},

	{method: "GET", path: "account/", role: RoleViewer},
	{method: "POST", path: "account/totp/start", role: RoleViewer},
	{method: "POST", path: "account/totp/confirm", role: RoleViewer},
	{method: "POST", path: "account/totp/disable", role: RoleViewer, reauth: true},
	{method: "POST", path: "account/recovery-codes", role: RoleViewer, reauth: true},
	{method: "POST", path: "reauth", role: RoleViewer},
	{method: "POST", path: "team/invitations/{id}/revoke", role: RoleOwner},
}

// match reports whether path matches the route's, returning the values of
// its {name} segments.
func (rt route) match(path string) ([]string, bool) {
	want, got := strings.Split(rt.path, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return nil, false
	}
	var vals []string
	for i, w := range want {
		switch {
		case strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}"):
			if got[i] == "" {
				return nil, false
			}
			vals = append(vals, got[i])
		case w != got[i]:
			return nil, false
		}
	}
	return vals, true
}

// lookupRoute finds the route of method and path (below Prefix). found is
// nil when no route has the path for that method; allow then names the
// methods that do have it ("" when none: the path is no route).
func lookupRoute(method, path string) (found *route, vals []string, allow string) {
	if method == http.MethodHead {
		method = http.MethodGet
	}
	var methods []string
	for i := range routes {
		rt := &routes[i]
		v, ok := rt.match(path)
		if !ok {
			continue
		}
		if rt.method == method {
			return rt, v, ""
		}
		methods = append(methods, rt.method)
	}
	if len(methods) == 0 {
		return nil, nil, ""
	}
	if methods[0] == http.MethodGet {
		methods[0] = "GET, HEAD"
	}
	return nil, nil, strings.Join(methods, ", ")
}

// authorize is the one check of every signed-in request: its route must be
// declared in routes (otherwise 404, or 405 naming the methods the path
// has), the user's role must admit the route's (otherwise the denied
// page), and a route that needs a recent re-authentication gets it first.
// It returns the writer the handler writes to: for a POST with an audit
// action, one that records the action once the handler answers below 400.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, s *session, rest string) (http.ResponseWriter, bool) {
	rt, vals, allow := lookupRoute(r.Method, rest)
	switch {
	case rt == nil && allow != "":
		web.MethodNotAllowed(w, allow)
		return w, false
	case rt == nil:
		h.pages.NotFound(w)
		return w, false
	case !admits(s.user.Role, rt.role):
		h.denied(w, r, s, rt.role)
		return w, false
	case rt.reauth && !h.recent(s):
		h.reauthPage(w, r, s, http.StatusForbidden, backTo(rest), "")
		return w, false
	}
	if rt.method != http.MethodPost || rt.action == "" {
		return w, true
	}
	target := strings.Join(vals, "/")
	if rt.target != "" {
		target = strings.TrimSpace(r.PostFormValue(rt.target))
	}
	return &auditWriter{ResponseWriter: w, record: func() {
		if err := audit.Record(r.Context(), h.cfg.DB, h.auditEntry(r, s, rt.action, target)); err != nil {
			h.cfg.Logger.Error("dashboard: the change is made but its audit entry is not written", "action", rt.action, "err", err)
		}
	}}, true
}

// deniedData is the page refusing a route the user's role does not admit.
type deniedData struct {
	dashLayout
	Need string
}

func (h *Handler) denied(w http.ResponseWriter, r *http.Request, s *session, need dashboarduser.Role) {
	h.pages.Render(w, http.StatusForbidden, "denied", deniedData{dashLayout: h.layoutOf(r, s, "Not allowed", ""), Need: string(need)})
}

// auditEntry is the audit entry of action on target by the session's user,
// from r's client.
func (h *Handler) auditEntry(r *http.Request, s *session, action, target string) audit.Entry {
	e := audit.Entry{
		ProjectID: s.user.ProjectID, ActorKind: audit.User, ActorID: s.user.ID, Actor: s.user.Email,
		Action: action, Target: target, UserAgent: r.UserAgent(), At: h.cfg.Now(),
	}
	if ip, ok := clientAddr(r, h.cfg.TrustedProxies); ok {
		e.IP = ip.String()
	}
	return e
}

// auditWriter runs record once, when the handler answers with a status
// below 400 (the change was made).
type auditWriter struct {
	http.ResponseWriter
	record func()
	done   bool
}

func (a *auditWriter) WriteHeader(code int) {
	if !a.done {
		a.done = true
		if code < 400 {
			a.record()
		}
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *auditWriter) Write(b []byte) (int, error) {
	if !a.done {
		a.WriteHeader(http.StatusOK)
	}
	return a.ResponseWriter.Write(b)
}
