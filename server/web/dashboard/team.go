package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/server/audit"
)

// teamPath is the team page: the project's users, their roles and
// two-factor state, the forms that change a user's role, disable or
// enable a user or end their sessions, and the invitations.
const teamPath = Prefix + "team/"

// teamDone are the notes a redirect after a team change shows (?done=).
var teamDone = map[string]string{
	"disabled":  "The user is disabled: their sessions are ended and they cannot sign in.",
	"enabled":   "The user is enabled: they sign in with their password again.",
	"role":      "The role is changed: it applies from the user's next page, without signing them out.",
	"same-role": "Nothing changed: the user has that role already.",
	"sessions":  "The user's sessions are ended: they must sign in again.",
	"invited":   "The invitation is sent: its link works once, for 7 days.",
	"security":  "Saved: owners without two-factor sign-in set it up at their next sign-in.",

	"invitation-revoked": "The invitation is withdrawn: its link opens nothing.",
}

// teamData is the team page.
type teamData struct {
	dashLayout
	Users []teamUser
	Done  string
	Error string
	// Invitations are the open invitations; InviteError says why an
	// invitation was refused, InviteEmail and InviteRole echo its form.
	Invitations             []pendingInvitation
	InviteError             string
	InviteEmail, InviteRole string
	// Roles are the invitation form's choices.
	Roles []string
	// Require2FA: the project requires two-factor sign-in of owners.
	Require2FA bool
}

// teamUser is one user of the team page.
type teamUser struct {
	ID        int64
	Email     string
	Role      string
	TwoFactor bool
	Disabled  bool
	Sessions  int
	// Self is the signed-in user (who cannot disable themselves).
	Self bool
}

// teamRoutes serves the team page and its forms when rest is one of
// theirs, and reports whether it did (authorize has admitted owners only).
func (h *Handler) teamRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	sub, ok := strings.CutPrefix(rest, "team/")
	if !ok {
		return false
	}
	id, action, _ := strings.Cut(sub, "/")
	switch {
	case sub == "" && get:
		h.teamPage(w, r, s, http.StatusOK, teamDone[r.URL.Query().Get("done")], "")
	case action == "disable" && post:
		h.disableUser(w, r, s, id)
	case action == "enable" && post:
		h.enableUser(w, r, s, id)
	case action == "role" && post:
		h.setRole(w, r, s, id)
	case action == "sessions/revoke" && post:
		h.endSessions(w, r, s, id)
	case sub == "invite" && post:
		h.invite(w, r, s)
	case strings.HasPrefix(sub, "invitations/") && strings.HasSuffix(sub, "/revoke") && post:
		h.revokeInvitation(w, r, s, strings.TrimSuffix(strings.TrimPrefix(sub, "invitations/"), "/revoke"))
	default:
		return false
	}
	return true
}

func (h *Handler) teamPage(w http.ResponseWriter, r *http.Request, s *session, status int, done, refusal string) {
	h.teamPageWith(w, r, s, status, func(d *teamData) { d.Done, d.Error = done, refusal })
}

// teamPageWith renders the team page with status after set has filled in
// what the request adds.
func (h *Handler) teamPageWith(w http.ResponseWriter, r *http.Request, s *session, status int, set func(*teamData)) {
	ctx := r.Context()
	users, err := h.cfg.DB.DashboardUser.Query().Where(dashboarduser.ProjectID(s.user.ProjectID)).
		Order(entdb.Asc(dashboarduser.FieldEmail)).All(ctx)
	if err != nil {
		h.pages.Fail(w, "team", err)
		return
	}
	d := teamData{dashLayout: h.layoutOf(r, s, "Team", "team"), Roles: []string{string(RoleViewer), string(RoleDeveloper), string(RoleOwner)}}
	if d.Require2FA, err = h.requires2FA(ctx, &entdb.DashboardUser{ProjectID: s.user.ProjectID, Role: RoleOwner}); err != nil {
		h.pages.Fail(w, "team", err)
		return
	}
	if d.Invitations, err = h.invitations(ctx, s.user.ProjectID); err != nil {
		h.pages.Fail(w, "team invitations", err)
		return
	}
	for _, u := range users {
		n, err := h.cfg.DB.DashboardSession.Query().
			Where(dashboardsession.UserID(u.ID), dashboardsession.ExpiresAtGT(h.cfg.Now())).Count(ctx)
		if err != nil {
			h.pages.Fail(w, "team sessions", err)
			return
		}
		d.Users = append(d.Users, teamUser{
			ID: u.ID, Email: u.Email, Role: string(u.Role), TwoFactor: u.TotpEnabledAt != nil,
			Disabled: u.DisabledAt != nil, Sessions: n, Self: u.ID == s.user.ID,
		})
	}
	set(&d)
	h.pages.Render(w, status, "team", d)
}

// teamUserOf returns the user of the session's project whose id is raw,
// or nil (another project's user is as unknown as a missing one).
func (h *Handler) teamUserOf(r *http.Request, s *session, raw string) (*entdb.DashboardUser, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return nil, nil
	}
	u, err := h.cfg.DB.DashboardUser.Query().
		Where(dashboarduser.ID(id), dashboarduser.ProjectID(s.user.ProjectID)).Only(r.Context())
	if entdb.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// teamTarget is the project's user a Team action names (raw), or nil when
// it has answered: 404 for a user that is not the project's.
func (h *Handler) teamTarget(w http.ResponseWriter, r *http.Request, s *session, raw string) *entdb.DashboardUser {
	u, err := h.teamUserOf(r, s, raw)
	if err != nil {
		h.pages.Fail(w, "find user", err)
		return nil
	}
	if u == nil {
		h.pages.NotFound(w)
	}
	return u
}

// disableUser disables a user of the project and ends their sessions; the
// audit entry commits with it. An owner cannot disable themselves (the
// project would be left without the one who can undo it).
func (h *Handler) disableUser(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	u := h.teamTarget(w, r, s, raw)
	if u == nil {
		return
	}
	if u.ID == s.user.ID {
		h.teamPage(w, r, s, http.StatusBadRequest, "", "You cannot disable yourself: another owner can.")
		return
	}
	err := DisableUser(r.Context(), h.cfg.DB, u.ID, h.cfg.Now(), func(tx *entdb.Client) error {
		return audit.Record(r.Context(), tx, h.auditEntry(r, s, "user.disable", u.Email))
	})
	if errors.Is(err, ErrLastOwner) {
		h.teamPage(w, r, s, http.StatusConflict, "", lastOwnerRefusal(u.Email))
		return
	}
	if err != nil {
		h.pages.Fail(w, "disable user", err)
		return
	}
	http.Redirect(w, r, teamPath+"?done=disabled", http.StatusSeeOther)
}

// endSessions signs a user of the project out everywhere; the audit entry
// commits with it.
func (h *Handler) endSessions(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	u := h.teamTarget(w, r, s, raw)
	if u == nil {
		return
	}
	_, err := EndSessions(r.Context(), h.cfg.DB, u.ID, func(tx *entdb.Client) error {
		return audit.Record(r.Context(), tx, h.auditEntry(r, s, "user.end_sessions", u.Email))
	})
	if err != nil {
		h.pages.Fail(w, "end sessions", err)
		return
	}
	if u.ID == s.user.ID {
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, teamPath+"?done=sessions", http.StatusSeeOther)
}

// lastOwnerRefusal says why a change of the project's last enabled owner
// is refused.
func lastOwnerRefusal(email string) string {
	return email + " is the project's last enabled owner: make another user owner (or enable one) first. The project keeps at least one."
}

// enableUser enables a disabled user of the project; the audit entry
// commits with it.
func (h *Handler) enableUser(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	u := h.teamTarget(w, r, s, raw)
	if u == nil {
		return
	}
	enabled, err := EnableUser(r.Context(), h.cfg.DB, s.user.ProjectID, u.ID, func(tx *entdb.Client) error {
		return audit.Record(r.Context(), tx, h.auditEntry(r, s, "user.enable", u.Email))
	})
	switch {
	case errors.Is(err, ErrNoUser):
		h.pages.NotFound(w)
	case err != nil:
		h.pages.Fail(w, "enable user", err)
	case !enabled:
		h.teamPage(w, r, s, http.StatusConflict, "", u.Email+" is not disabled: there is nothing to enable.")
	default:
		http.Redirect(w, r, teamPath+"?done=enabled", http.StatusSeeOther)
	}
}

// setRole gives a user of the project the form's role (recently
// re-authenticated); the audit entry, naming the user and the new role,
// commits with it. The user's sessions go on: their next request loads
// the new role. An owner may give themselves another role while another
// enabled owner remains; they then leave the Team page.
func (h *Handler) setRole(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	u := h.teamTarget(w, r, s, raw)
	if u == nil {
		return
	}
	field := r.PostFormValue("role")
	role, ok := ParseRole(field)
	if !ok {
		h.teamPage(w, r, s, http.StatusBadRequest, "", fmt.Sprintf("The role %q is none of owner, developer, viewer.", field))
		return
	}
	was, err := SetUserRole(r.Context(), h.cfg.DB, s.user.ProjectID, u.ID, role, h.cfg.Now(), func(tx *entdb.Client) error {
		return audit.Record(r.Context(), tx, h.auditEntry(r, s, "user.role", u.Email+" as "+string(role)))
	})
	switch {
	case errors.Is(err, ErrLastOwner):
		h.teamPage(w, r, s, http.StatusConflict, "", lastOwnerRefusal(u.Email))
	case errors.Is(err, ErrNoUser):
		h.pages.NotFound(w)
	case err != nil:
		h.pages.Fail(w, "set role", err)
	case was == role:
		http.Redirect(w, r, teamPath+"?done=same-role", http.StatusSeeOther)
	case u.ID == s.user.ID:
		http.Redirect(w, r, Prefix+"notifications/", http.StatusSeeOther)
	default:
		http.Redirect(w, r, teamPath+"?done=role", http.StatusSeeOther)
	}
}
