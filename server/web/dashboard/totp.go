package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardrecoverycode"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/merchant/project"
)

// Two-factor sign-in (TOTP, RFC 6238, as authenticator apps use it: SHA-1,
// six digits, 30-second steps).
const (
	// TOTPPeriod is the length of one code's step.
	TOTPPeriod = 30 * time.Second
	// TOTPSkew is how many steps before and after now a code may be from
	// (a phone's clock a little off).
	TOTPSkew = 1
	// RecoveryCodes is how many one-time recovery codes enrolment gives.
	RecoveryCodes = 10
	// DefaultReauthWindow is how long after proving it is them (sign-in,
	// or the password or a code again) a user may make a sensitive change.
	DefaultReauthWindow = 10 * time.Minute
	// PendingTTL is how long a session that still owes its TOTP code, or
	// its enrolment, lasts.
	PendingTTL = 15 * time.Minute
)

var totpOpts = totp.ValidateOpts{Period: uint(TOTPPeriod / time.Second), Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// step is the TOTP step of t.
func step(t time.Time) int64 { return t.Unix() / int64(TOTPPeriod/time.Second) }

// checkTOTP reports whether code is u's TOTP code now (within TOTPSkew
// steps), and spends it with db: a code's step is recorded, so it is
// accepted once, and no earlier code after it.
func (h *Handler) checkTOTP(ctx context.Context, db *entdb.Client, u *entdb.DashboardUser, code string) (bool, error) {
	code = strings.Join(strings.Fields(code), "")
	if u.TotpSecret == "" || len(code) != 6 {
		return false, nil
	}
	now := step(h.cfg.Now())
	for s := now - TOTPSkew; s <= now+TOTPSkew; s++ {
		if s <= u.TotpLastStep {
			continue
		}
		want, err := totp.GenerateCodeCustom(u.TotpSecret, time.Unix(s*int64(TOTPPeriod/time.Second), 0), totpOpts)
		if err != nil {
			return false, fmt.Errorf("totp code: %w", err)
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) != 1 {
			continue
		}
		n, err := db.DashboardUser.Update().Where(dashboarduser.ID(u.ID), dashboarduser.TotpLastStepLT(s)).SetTotpLastStep(s).Save(ctx)
		if err != nil {
			return false, fmt.Errorf("spend totp code: %w", err)
		}
		return n == 1, nil
	}
	return false, nil
}

// recoveryEncoding writes recovery codes: lower-case base32, no padding.
var recoveryEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newRecoveryCodes returns RecoveryCodes codes of 80 random bits, as
// xxxx-xxxx-xxxx-xxxx.
func newRecoveryCodes() ([]string, error) {
	out := make([]string, RecoveryCodes)
	for i := range out {
		var b [10]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("recovery code: %w", err)
		}
		c := recoveryEncoding.EncodeToString(b[:])
		out[i] = c[0:4] + "-" + c[4:8] + "-" + c[8:12] + "-" + c[12:16]
	}
	return out, nil
}

// recoveryHash is what the database keeps of a recovery code: the SHA-256
// of its letters, in lower case, without dashes or spaces.
func recoveryHash(code string) string {
	c := strings.ToLower(strings.NewReplacer("-", "", " ", "").Replace(code))
	sum := sha256.Sum256([]byte(c))
	return hex.EncodeToString(sum[:])
}

// useRecoveryCode spends one of u's unused recovery codes matching code.
func useRecoveryCode(ctx context.Context, db *entdb.Client, u *entdb.DashboardUser, code string, now time.Time) (bool, error) {
	if len(code) < 16 || len(code) > 40 {
		return false, nil
	}
	n, err := db.DashboardRecoveryCode.Update().Where(dashboardrecoverycode.UserID(u.ID),
		dashboardrecoverycode.CodeHash(recoveryHash(code)), dashboardrecoverycode.UsedAtIsNil()).SetUsedAt(now).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("use recovery code: %w", err)
	}
	return n == 1, nil
}

// storeRecoveryCodes replaces every recovery code of user userID, used or
// not, with codes (their hashes), with db.
func storeRecoveryCodes(ctx context.Context, db *entdb.Client, userID int64, codes []string, now time.Time) error {
	if _, err := db.DashboardRecoveryCode.Delete().Where(dashboardrecoverycode.UserID(userID)).Exec(ctx); err != nil {
		return fmt.Errorf("delete recovery codes: %w", err)
	}
	for _, c := range codes {
		if err := db.DashboardRecoveryCode.Create().SetUserID(userID).SetCodeHash(recoveryHash(c)).SetCreatedAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("store recovery code: %w", err)
		}
	}
	return nil
}

// RegenerateRecoveryCodes makes RecoveryCodes new recovery codes for user
// userID, who signs in with TOTP, and returns them (to be shown once):
// their hashes replace every earlier code, which stops working at once.
// record (the audit entry, when not nil) runs in the same transaction. A
// user without two-factor sign-in is ErrTwoFactorOff.
func RegenerateRecoveryCodes(ctx context.Context, db *entdb.Client, userID int64, now time.Time, record func(*entdb.Client) error) ([]string, error) {
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	err = inTx(ctx, db, func(tx *entdb.Client) error {
		u, err := tx.DashboardUser.Get(ctx, userID)
		if entdb.IsNotFound(err) {
			return fmt.Errorf("%w: id %d", ErrNoUser, userID)
		}
		if err != nil {
			return fmt.Errorf("find dashboard user %d: %w", userID, err)
		}
		if u.TotpEnabledAt == nil {
			return fmt.Errorf("%w: %s has no recovery codes to replace", ErrTwoFactorOff, u.Email)
		}
		if err := storeRecoveryCodes(ctx, tx, userID, codes, now); err != nil {
			return err
		}
		if record != nil {
			return record(tx)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// secondFactor checks a code given after the password (or to
// re-authenticate): a TOTP code, or else one of the recovery codes.
func (h *Handler) secondFactor(ctx context.Context, u *entdb.DashboardUser, code string) (bool, error) {
	ok, err := h.checkTOTP(ctx, h.cfg.DB, u, code)
	if err != nil || ok {
		return ok, err
	}
	return useRecoveryCode(ctx, h.cfg.DB, u, code, h.cfg.Now())
}

// failedFactor counts a wrong code or password of a signed-in (or
// half-signed-in) user as a failed sign-in: at MaxFailedSignins the user
// is locked for LockoutDuration and all their sessions end.
func (h *Handler) failedFactor(ctx context.Context, u *entdb.DashboardUser) (ended bool, err error) {
	now := h.cfg.Now()
	if err := h.cfg.DB.DashboardUser.UpdateOneID(u.ID).AddFailedSignins(1).Exec(ctx); err != nil {
		return false, fmt.Errorf("count failed code: %w", err)
	}
	n, err := h.cfg.DB.DashboardUser.Update().Where(dashboarduser.ID(u.ID), dashboarduser.FailedSigninsGTE(MaxFailedSignins)).
		SetFailedSignins(0).SetLockedUntil(now.Add(LockoutDuration)).Save(ctx)
	if err != nil || n == 0 {
		return false, err
	}
	_, err = EndSessions(ctx, h.cfg.DB, u.ID, nil)
	return true, err
}

// pendingRoute serves a session that owes its TOTP code (only the code's
// page and sign-out) or its enrolment (only the account page's enrolment
// and sign-out); any other page sends the browser there.
func (h *Handler) pendingRoute(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) {
	switch {
	case rest == "signout" && post:
		if err := h.signOut(r.Context(), s); err != nil {
			h.pages.Fail(w, "dashboard sign-out", err)
			return
		}
		h.setCookie(w, r, sessionCookie, "", -1)
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
	case s.row.Pending == dashboardsession.PendingTotp && rest == "signin/totp" && get:
		h.totpSigninPage(w, s, http.StatusOK, "")
	case s.row.Pending == dashboardsession.PendingTotp && rest == "signin/totp" && post:
		h.totpSignin(w, r, s)
	case s.row.Pending == dashboardsession.PendingEnrol && rest == "account/" && get:
		h.accountPage(w, r, s, http.StatusOK, nil)
	case s.row.Pending == dashboardsession.PendingEnrol && rest == "account/totp/start" && post:
		h.totpStart(w, r, s)
	case s.row.Pending == dashboardsession.PendingEnrol && rest == "account/totp/confirm" && post:
		h.totpConfirm(w, r, s)
	case post:
		h.forbidden(w)
	case s.row.Pending == dashboardsession.PendingTotp:
		http.Redirect(w, r, Prefix+"signin/totp", http.StatusSeeOther)
	default:
		http.Redirect(w, r, Prefix+"account/", http.StatusSeeOther)
	}
}

// totpData is the page asking for the code after the password.
type totpData struct {
	dashLayout
	Error string
}

func (h *Handler) totpSigninPage(w http.ResponseWriter, s *session, status int, why string) {
	h.pages.Render(w, status, "totp", totpData{dashLayout: dashLayout{Title: "Two-factor sign-in", CSRF: s.row.CsrfToken}, Error: why})
}

// totpSignin checks the code of a session that gave its password: the
// session then opens for SessionTTL. A wrong code counts as a failed
// sign-in (lockout ends the session).
func (h *Handler) totpSignin(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	ok, err := h.secondFactor(ctx, s.user, r.PostFormValue("code"))
	if err != nil {
		h.pages.Fail(w, "two-factor sign-in", err)
		return
	}
	if !ok {
		ended, err := h.failedFactor(ctx, s.user)
		if err != nil {
			h.pages.Fail(w, "two-factor sign-in", err)
			return
		}
		if ended {
			h.setCookie(w, r, sessionCookie, "", -1)
			http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
			return
		}
		h.totpSigninPage(w, s, http.StatusUnauthorized, "The code is wrong or was used already. Enter the current code of your authenticator app, or one of your recovery codes.")
		return
	}
	now := h.cfg.Now()
	if err := h.cfg.DB.DashboardUser.UpdateOneID(s.user.ID).SetFailedSignins(0).Exec(ctx); err != nil {
		h.pages.Fail(w, "two-factor sign-in", err)
		return
	}
	if err := h.cfg.DB.DashboardSession.UpdateOneID(s.row.ID).SetPending(dashboardsession.PendingNone).SetReauthAt(now).
		SetExpiresAt(now.Add(h.cfg.SessionTTL)).Exec(ctx); err != nil {
		h.pages.Fail(w, "two-factor sign-in", err)
		return
	}
	http.Redirect(w, r, Prefix+"notifications/", http.StatusSeeOther)
}

// accountData is the account page: two-factor sign-in's state and
// enrolment.
type accountData struct {
	dashLayout
	// TwoFactor: enrolled; Required: the project requires it of this user.
	TwoFactor, Required bool
	// RecoveryLeft is how many unused recovery codes remain.
	RecoveryLeft int
	// QR (a data: URL of a PNG) and Secret are an enrolment begun: the
	// secret to add to an authenticator app, as a QR code and as text.
	QR     template.URL
	Secret string
	// RecoveryCodes are shown once, right after enrolment.
	RecoveryCodes []string
	Done, Error   string
}

// accountRoutes serves the account page and two-factor enrolment for a
// signed-in session.
func (h *Handler) accountRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	switch {
	case rest == "account/" && get:
		h.accountPage(w, r, s, http.StatusOK, func(d *accountData) {
			if r.URL.Query().Get("done") == "totp-off" {
				d.Done = "Two-factor sign-in is off: the password alone signs you in."
			}
		})
	case rest == "account/totp/start" && post:
		h.totpStart(w, r, s)
	case rest == "account/totp/confirm" && post:
		h.totpConfirm(w, r, s)
	case rest == "account/totp/disable" && post:
		h.totpDisable(w, r, s)
	case rest == "account/recovery-codes" && post:
		h.regenerateRecoveryCodes(w, r, s)
	case rest == "reauth" && post:
		h.reauth(w, r, s)
	case rest == "team/security" && post:
		h.setRequire2FA(w, r, s)
	default:
		return false
	}
	return true
}

// requires2FA reports whether u's project requires two-factor sign-in of
// u (an owner of a project that requires it of owners).
func (h *Handler) requires2FA(ctx context.Context, u *entdb.DashboardUser) (bool, error) {
	if u.Role != RoleOwner {
		return false, nil
	}
	p, err := project.Get(ctx, h.cfg.DB, u.ProjectID)
	if err != nil {
		return false, err
	}
	return p.RequireOwner2fa, nil
}

func (h *Handler) accountPage(w http.ResponseWriter, r *http.Request, s *session, status int, set func(*accountData)) {
	ctx := r.Context()
	d := accountData{dashLayout: h.layoutOf(r, s, "Account", "account"), TwoFactor: s.user.TotpEnabledAt != nil}
	if s.row.Pending != dashboardsession.PendingNone {
		d.dashLayout = dashLayout{Title: "Set up two-factor sign-in", CSRF: s.row.CsrfToken}
	}
	var err error
	if d.Required, err = h.requires2FA(ctx, s.user); err != nil {
		h.pages.Fail(w, "account", err)
		return
	}
	if d.RecoveryLeft, err = h.cfg.DB.DashboardRecoveryCode.Query().
		Where(dashboardrecoverycode.UserID(s.user.ID), dashboardrecoverycode.UsedAtIsNil()).Count(ctx); err != nil {
		h.pages.Fail(w, "account", err)
		return
	}
	if set != nil {
		set(&d)
	}
	h.pages.Render(w, status, "account", d)
}

// totpStart begins enrolment: a new secret is stored (sealed) and shown,
// as a QR code and as text, on this response only; it signs in nothing
// until a code of it confirms it.
func (h *Handler) totpStart(w http.ResponseWriter, r *http.Request, s *session) {
	if s.user.TotpEnabledAt != nil {
		h.accountPage(w, r, s, http.StatusBadRequest, func(d *accountData) {
			d.Error = "Two-factor sign-in is on already; turn it off first to enrol another app."
		})
		return
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "payhook", AccountName: s.user.Email, Period: uint(TOTPPeriod / time.Second),
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		h.pages.Fail(w, "totp key", err)
		return
	}
	if err := h.cfg.DB.DashboardUser.UpdateOneID(s.user.ID).SetTotpSecret(key.Secret()).SetTotpLastStep(0).Exec(r.Context()); err != nil {
		h.pages.Fail(w, "store totp secret", err)
		return
	}
	qr, err := qrDataURL(key)
	if err != nil {
		h.pages.Fail(w, "totp qr code", err)
		return
	}
	h.accountPage(w, r, s, http.StatusOK, func(d *accountData) { d.QR, d.Secret = qr, key.Secret() })
}

// qrDataURL renders key's otpauth URL as a PNG QR code in a data: URL.
func qrDataURL(key *otp.Key) (template.URL, error) {
	img, err := key.Image(240, 240)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return "", err
	}
	// Safe as a URL: a fixed scheme and Base64 that we encoded.
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())), nil
}

// totpConfirm ends enrolment with a code of the new secret: two-factor
// sign-in is on, and ten recovery codes are made and shown once (their
// hashes replace any earlier ones). The change and its audit entry commit
// together. A session that had to enrol opens.
func (h *Handler) totpConfirm(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	u, err := h.cfg.DB.DashboardUser.Get(ctx, s.user.ID)
	if err != nil {
		h.pages.Fail(w, "find user", err)
		return
	}
	if u.TotpEnabledAt != nil || u.TotpSecret == "" {
		h.accountPage(w, r, s, http.StatusBadRequest, func(d *accountData) { d.Error = "There is no enrolment to confirm: start again." })
		return
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		h.pages.Fail(w, "recovery codes", err)
		return
	}
	now := h.cfg.Now()
	var ok bool
	err = inTx(ctx, h.cfg.DB, func(tx *entdb.Client) error {
		if ok, err = h.checkTOTP(ctx, tx, u, r.PostFormValue("code")); err != nil || !ok {
			return err
		}
		if err := tx.DashboardUser.UpdateOneID(u.ID).SetTotpEnabledAt(now).Exec(ctx); err != nil {
			return err
		}
		if err := storeRecoveryCodes(ctx, tx, u.ID, codes, now); err != nil {
			return err
		}
		if s.row.Pending != dashboardsession.PendingNone {
			if err := tx.DashboardSession.UpdateOneID(s.row.ID).SetPending(dashboardsession.PendingNone).SetReauthAt(now).
				SetExpiresAt(now.Add(h.cfg.SessionTTL)).Exec(ctx); err != nil {
				return err
			}
		}
		return audit.Record(ctx, tx, h.auditEntry(r, s, "user.totp_enable", u.Email))
	})
	if err != nil {
		h.pages.Fail(w, "confirm totp", err)
		return
	}
	if !ok {
		key, err := otp.NewKeyFromURL("otpauth://totp/payhook:" + url.PathEscape(u.Email) + "?issuer=payhook&secret=" + u.TotpSecret)
		var qr template.URL
		if err == nil {
			qr, _ = qrDataURL(key)
		}
		h.accountPage(w, r, s, http.StatusBadRequest, func(d *accountData) {
			d.QR, d.Secret = qr, u.TotpSecret
			d.Error = "The code is wrong. Enter the code your authenticator app shows now for payhook."
		})
		return
	}
	s.user.TotpEnabledAt = &now
	s.row.Pending = dashboardsession.PendingNone
	h.accountPage(w, r, s, http.StatusOK, func(d *accountData) {
		d.TwoFactor, d.RecoveryCodes = true, codes
		d.Done = "Two-factor sign-in is on: from now on, sign-in asks for a code of your app after the password."
	})
}

// totpDisable turns two-factor sign-in off (recently re-authenticated; not
// for an owner of a project that requires it).
func (h *Handler) totpDisable(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	required, err := h.requires2FA(ctx, s.user)
	if err != nil {
		h.pages.Fail(w, "account", err)
		return
	}
	if required {
		h.accountPage(w, r, s, http.StatusBadRequest, func(d *accountData) {
			d.Error = "This project requires two-factor sign-in of its owners: it stays on."
		})
		return
	}
	err = inTx(ctx, h.cfg.DB, func(tx *entdb.Client) error {
		if err := tx.DashboardUser.UpdateOneID(s.user.ID).SetTotpSecret("").ClearTotpEnabledAt().Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.DashboardRecoveryCode.Delete().Where(dashboardrecoverycode.UserID(s.user.ID)).Exec(ctx); err != nil {
			return err
		}
		return audit.Record(ctx, tx, h.auditEntry(r, s, "user.totp_disable", s.user.Email))
	})
	if err != nil {
		h.pages.Fail(w, "disable totp", err)
		return
	}
	http.Redirect(w, r, Prefix+"account/?done=totp-off", http.StatusSeeOther)
}

// regenerateRecoveryCodes replaces the user's recovery codes with ten new
// ones, shown on this response only (recently re-authenticated); the old
// ones stop working at once. The audit entry commits with them.
func (h *Handler) regenerateRecoveryCodes(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	codes, err := RegenerateRecoveryCodes(ctx, h.cfg.DB, s.user.ID, h.cfg.Now(), func(tx *entdb.Client) error {
		return audit.Record(ctx, tx, h.auditEntry(r, s, "user.recovery_codes", s.user.Email))
	})
	if errors.Is(err, ErrTwoFactorOff) {
		h.accountPage(w, r, s, http.StatusBadRequest, func(d *accountData) {
			d.Error = "Two-factor sign-in is off: there are no recovery codes to replace. Set it up first; it gives you ten."
		})
		return
	}
	if err != nil {
		h.pages.Fail(w, "recovery codes", err)
		return
	}
	h.accountPage(w, r, s, http.StatusOK, func(d *accountData) {
		d.RecoveryCodes = codes
		d.Done = "New recovery codes are made: your earlier ones no longer work."
	})
}

// setRequire2FA sets whether the project's owners must sign in with a
// TOTP code; an owner without enrols at their next sign-in.
func (h *Handler) setRequire2FA(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	on := r.PostFormValue("require_owner_2fa") == "1"
	err := inTx(ctx, h.cfg.DB, func(tx *entdb.Client) error {
		if err := tx.Project.UpdateOneID(s.user.ProjectID).SetRequireOwner2fa(on).Exec(ctx); err != nil {
			return err
		}
		return audit.Record(ctx, tx, h.auditEntry(r, s, "settings.require_owner_2fa", fmt.Sprint(on)))
	})
	if err != nil {
		h.pages.Fail(w, "require 2fa", err)
		return
	}
	http.Redirect(w, r, teamPath+"?done=security", http.StatusSeeOther)
}

// recent reports whether the session's user proved it is them within the
// re-authentication window.
func (h *Handler) recent(s *session) bool {
	return s.row.ReauthAt != nil && h.cfg.Now().Sub(*s.row.ReauthAt) <= h.cfg.ReauthWindow
}

// reauthData is the page asking a user to prove it is them again.
type reauthData struct {
	dashLayout
	// Code: ask for a TOTP code (the user is enrolled), else the password.
	Code bool
	// Next is the page to return to.
	Next  string
	Error string
}

// reauthPage asks for the password (or a TOTP code when enrolled) before
// a sensitive change; the change is made again after it.
func (h *Handler) reauthPage(w http.ResponseWriter, r *http.Request, s *session, status int, next, why string) {
	h.pages.Render(w, status, "reauth", reauthData{dashLayout: h.layoutOf(r, s, "Confirm it is you", ""),
		Code: s.user.TotpEnabledAt != nil, Next: next, Error: why})
}

// backTo is the page a refused change of rest returns to after
// re-authentication: its section's page.
func backTo(rest string) string {
	section, _, _ := strings.Cut(rest, "/")
	return Prefix + section + "/"
}

// reauth checks the password (or, when enrolled, a TOTP code) again and
// opens the re-authentication window; wrong ones count as failed
// sign-ins.
func (h *Handler) reauth(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	next := r.PostFormValue("next")
	if u, err := url.Parse(next); err != nil || u.IsAbs() || u.Host != "" || !strings.HasPrefix(u.Path, Prefix) || strings.Contains(next, "\\") {
		next = Prefix
	}
	var ok bool
	var err error
	if s.user.TotpEnabledAt != nil {
		ok, err = h.secondFactor(ctx, s.user, r.PostFormValue("code"))
	} else {
		pw := r.PostFormValue("password")
		select {
		case h.hashSlots <- struct{}{}:
			ok = len(pw) <= MaxPasswordBytes && checkPassword(s.user.PasswordHash, pw)
			<-h.hashSlots
		default:
			w.Header().Set("Retry-After", "1")
			h.reauthPage(w, r, s, http.StatusServiceUnavailable, next, "Too many sign-ins at once; try again in a moment.")
			return
		}
	}
	if err != nil {
		h.pages.Fail(w, "re-authenticate", err)
		return
	}
	if !ok {
		ended, err := h.failedFactor(ctx, s.user)
		if err != nil {
			h.pages.Fail(w, "re-authenticate", err)
			return
		}
		if ended {
			h.setCookie(w, r, sessionCookie, "", -1)
			http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
			return
		}
		h.reauthPage(w, r, s, http.StatusUnauthorized, next, "That is not it. Try again.")
		return
	}
	if err := h.cfg.DB.DashboardSession.UpdateOneID(s.row.ID).SetReauthAt(h.cfg.Now()).Exec(ctx); err != nil {
		h.pages.Fail(w, "re-authenticate", err)
		return
	}
	if err := h.cfg.DB.DashboardUser.UpdateOneID(s.user.ID).SetFailedSignins(0).Exec(ctx); err != nil {
		h.pages.Fail(w, "re-authenticate", err)
		return
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}
