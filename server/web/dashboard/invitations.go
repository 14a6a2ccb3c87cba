package dashboard

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardinvitation"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// invitePath is where an invitation's link points: /dashboard/invite/TOKEN.
const invitePath = Prefix + "invite/"

// pendingInvitation is one open invitation on the team page.
type pendingInvitation struct {
	ID      int64
	Email   string
	Role    string
	Expires time.Time
}

// invitations returns the project's open invitations, newest first.
func (h *Handler) invitations(ctx context.Context, projectID int64) ([]pendingInvitation, error) {
	rows, err := h.cfg.DB.DashboardInvitation.Query().Where(dashboardinvitation.ProjectID(projectID),
		dashboardinvitation.AcceptedAtIsNil(), dashboardinvitation.RevokedAtIsNil(), dashboardinvitation.ExpiresAtGT(h.cfg.Now())).
		Order(entdb.Desc(dashboardinvitation.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list invitations: %w", err)
	}
	out := make([]pendingInvitation, len(rows))
	for i, v := range rows {
		out[i] = pendingInvitation{ID: v.ID, Email: v.Email, Role: string(v.Role), Expires: v.ExpiresAt}
	}
	return out, nil
}

// invite invites the email of the form with its role: the invitation and
// its email (with a one-time link) and the audit entry commit together.
// A new invitation of the same email replaces the open ones.
func (h *Handler) invite(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	rawEmail, rawRole := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("role")
	refuse := func(why string) {
		h.teamPageWith(w, r, s, http.StatusBadRequest, func(d *teamData) {
			d.InviteError, d.InviteEmail, d.InviteRole = "No invitation was sent: "+why, rawEmail, rawRole
		})
	}
	if h.cfg.Mail == nil || h.cfg.PublicURL == "" {
		refuse("this server sends no email or knows no public address (its operator sets --smtp-url and --public-url); the operator can create the user with payhook user create.")
		return
	}
	email, err := checkEmail(rawEmail)
	if err != nil {
		refuse("that is not an email address.")
		return
	}
	role, ok := ParseRole(rawRole)
	if !ok {
		refuse("choose a role.")
		return
	}
	if n, err := h.cfg.DB.DashboardUser.Query().Where(dashboarduser.Email(email)).Count(ctx); err != nil {
		h.pages.Fail(w, "find user", err)
		return
	} else if n > 0 {
		refuse(email + " already has a dashboard account (payhook's sign-in names are unique across projects).")
		return
	}
	token, err := randomToken()
	if err != nil {
		h.pages.Fail(w, "invitation token", err)
		return
	}
	now := h.cfg.Now()
	expires := now.Add(h.cfg.InvitationTTL)
	tx, err := h.cfg.DB.Tx(ctx)
	if err != nil {
		h.pages.Fail(w, "invite", err)
		return
	}
	err = func() error {
		if err := tx.DashboardInvitation.Update().Where(dashboardinvitation.ProjectID(s.user.ProjectID), dashboardinvitation.Email(email),
			dashboardinvitation.AcceptedAtIsNil(), dashboardinvitation.RevokedAtIsNil()).SetRevokedAt(now).Exec(ctx); err != nil {
			return err
		}
		inv, err := tx.DashboardInvitation.Create().SetProjectID(s.user.ProjectID).SetEmail(email).SetRole(dashboardinvitation.Role(role)).
			SetTokenHash(tokenHash(token)).SetInvitedBy(s.user.ID).SetExpiresAt(expires).SetCreatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		link := strings.TrimRight(h.cfg.PublicURL, "/") + invitePath + token
		if err := h.cfg.Mail.Invite(ctx, tx, mail.Invitation{ID: inv.ID, ProjectID: s.user.ProjectID, To: email, Role: string(role),
			Inviter: s.user.Email, Link: link, Expires: expires}); err != nil {
			return err
		}
		return audit.Record(ctx, tx.Client(), h.auditEntry(r, s, "user.invite", email+" as "+string(role)))
	}()
	if err == nil {
		err = tx.Commit()
	} else {
		_ = tx.Rollback()
	}
	if err != nil {
		h.pages.Fail(w, "invite", err)
		return
	}
	http.Redirect(w, r, teamPath+"?done=invited", http.StatusSeeOther)
}

// revokeInvitation withdraws an open invitation of the project: its link
// opens nothing from then on.
func (h *Handler) revokeInvitation(w http.ResponseWriter, r *http.Request, s *session, raw string) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		h.pages.NotFound(w)
		return
	}
	ctx := r.Context()
	inv, err := h.cfg.DB.DashboardInvitation.Query().Where(dashboardinvitation.ID(id), dashboardinvitation.ProjectID(s.user.ProjectID),
		dashboardinvitation.AcceptedAtIsNil(), dashboardinvitation.RevokedAtIsNil()).Only(ctx)
	if entdb.IsNotFound(err) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "find invitation", err)
		return
	}
	err = inTx(ctx, h.cfg.DB, func(tx *entdb.Client) error {
		if err := tx.DashboardInvitation.UpdateOneID(inv.ID).SetRevokedAt(h.cfg.Now()).Exec(ctx); err != nil {
			return err
		}
		return audit.Record(ctx, tx, h.auditEntry(r, s, "user.revoke_invitation", inv.Email))
	})
	if err != nil {
		h.pages.Fail(w, "revoke invitation", err)
		return
	}
	http.Redirect(w, r, teamPath+"?done=invitation-revoked", http.StatusSeeOther)
}

// acceptData is the page of an invitation's link.
type acceptData struct {
	dashLayout
	Token, Invitee, ProjectName, InvitedRole string
	Error                                    string
}

// openInvitation returns the invitation of token while its link works
// (not expired, accepted or revoked), or nil.
func (h *Handler) openInvitation(ctx context.Context, token string) (*entdb.DashboardInvitation, error) {
	if token == "" || len(token) > 128 {
		return nil, nil
	}
	inv, err := h.cfg.DB.DashboardInvitation.Query().Where(dashboardinvitation.TokenHash(tokenHash(token)),
		dashboardinvitation.AcceptedAtIsNil(), dashboardinvitation.RevokedAtIsNil(), dashboardinvitation.ExpiresAtGT(h.cfg.Now())).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, nil
	}
	return inv, err
}

// inviteRoute serves an invitation's link: GET shows the password form,
// POST sets the password, creates the user and signs them in. A link that
// expired, was used or withdrawn is 410 Gone.
func (h *Handler) inviteRoute(w http.ResponseWriter, r *http.Request, token string, get, post bool) {
	if !get && !post {
		web.MethodNotAllowed(w, "GET, HEAD, POST")
		return
	}
	ctx := r.Context()
	inv, err := h.openInvitation(ctx, token)
	if err != nil {
		h.pages.Fail(w, "find invitation", err)
		return
	}
	if inv == nil {
		h.pages.Render(w, http.StatusGone, "invite", acceptData{dashLayout: dashLayout{Title: "Invitation"},
			Error: "This invitation link has expired, was used already or was withdrawn. Ask an owner of the project for a new one."})
		return
	}
	p, err := project.Get(ctx, h.cfg.DB, inv.ProjectID)
	if err != nil {
		h.pages.Fail(w, "get project", err)
		return
	}
	show := func(status int, why string) {
		csrf, err := randomToken()
		if err != nil {
			h.pages.Fail(w, "invitation form token", err)
			return
		}
		h.setCookie(w, r, signinCookie, csrf, 0)
		h.pages.Render(w, status, "invite", acceptData{dashLayout: dashLayout{Title: "Invitation", CSRF: csrf},
			Token: token, Invitee: inv.Email, ProjectName: p.Name, InvitedRole: string(inv.Role), Error: why})
	}
	if get {
		show(http.StatusOK, "")
		return
	}
	c, _ := r.Cookie(signinCookie)
	if c == nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		h.forbidden(w)
		return
	}
	pw := r.PostFormValue("password")
	if pw != r.PostFormValue("password2") {
		show(http.StatusBadRequest, "The two passwords differ.")
		return
	}
	if err := checkNewPassword(pw); err != nil {
		show(http.StatusBadRequest, strings.TrimPrefix(err.Error(), ErrInvalidUser.Error()+": ")+".")
		return
	}
	select {
	case h.hashSlots <- struct{}{}:
	default:
		w.Header().Set("Retry-After", "1")
		show(http.StatusServiceUnavailable, "Too many sign-ins at once; try again in a moment.")
		return
	}
	hash, err := hashPassword(pw)
	<-h.hashSlots
	if err != nil {
		h.pages.Fail(w, "hash password", err)
		return
	}
	now := h.cfg.Now()
	pending := dashboardsession.PendingNone
	if required, err := h.requires2FA(ctx, &entdb.DashboardUser{ProjectID: inv.ProjectID, Role: dashboarduser.Role(inv.Role)}); err != nil {
		h.pages.Fail(w, "accept invitation", err)
		return
	} else if required {
		pending = dashboardsession.PendingEnrol
	}
	var sessionToken string
	err = inTx(ctx, h.cfg.DB, func(tx *entdb.Client) error {
		// Spend the link first: of two submissions, one creates the user.
		n, err := tx.DashboardInvitation.Update().Where(dashboardinvitation.ID(inv.ID), dashboardinvitation.AcceptedAtIsNil(),
			dashboardinvitation.RevokedAtIsNil(), dashboardinvitation.ExpiresAtGT(now)).SetAcceptedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errInvitationSpent
		}
		u, err := tx.DashboardUser.Create().SetProjectID(inv.ProjectID).SetEmail(inv.Email).SetPasswordHash(hash).
			SetRole(dashboarduser.Role(inv.Role)).SetCreatedAt(now).Save(ctx)
		if entdb.IsConstraintError(err) {
			return errInvitationSpent
		}
		if err != nil {
			return err
		}
		if sessionToken, err = h.openSession(ctx, tx, u, pending); err != nil {
			return err
		}
		return audit.Record(ctx, tx, h.auditEntry(r, &session{user: u}, "user.accept_invitation", string(inv.Role)))
	})
	if errors.Is(err, errInvitationSpent) {
		h.pages.Render(w, http.StatusGone, "invite", acceptData{dashLayout: dashLayout{Title: "Invitation"},
			Error: "This invitation was used already, or its address has an account: sign in instead."})
		return
	}
	if err != nil {
		h.pages.Fail(w, "accept invitation", err)
		return
	}
	h.setCookie(w, r, signinCookie, "", -1)
	h.setCookie(w, r, sessionCookie, sessionToken, int(h.cfg.SessionTTL/time.Second))
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// errInvitationSpent: the link was used meanwhile, or its email has a user.
var errInvitationSpent = errors.New("invitation spent")
