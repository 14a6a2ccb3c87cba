package dashboard

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/server/merchant/project"
)

// Sign-in limits.
const (
	// MaxFailedSignins is how many wrong passwords in a row lock a user.
	MaxFailedSignins = 5
	// LockoutDuration is how long a locked user cannot sign in.
	LockoutDuration = 15 * time.Minute
	// MaxPasswordBytes is the longest password checked (the CLI's limit);
	// a longer one fails without costing a hash.
	MaxPasswordBytes = 1024
	// MaxConcurrentPasswordChecks bounds the argon2id checks (64 MiB
	// each) running at once; a sign-in beyond them is answered 503.
	MaxConcurrentPasswordChecks = 2
)

// CreateUser stores an owner of project projectID who signs in with email
// and password (CreateUserRole with RoleOwner).
func CreateUser(ctx context.Context, db *entdb.Client, projectID int64, email, password string, now time.Time) (*entdb.DashboardUser, error) {
	return CreateUserRole(ctx, db, projectID, email, password, RoleOwner, now)
}

// CreateUserRole stores a dashboard user of project projectID with role
// who signs in with email and password. The email is kept in lower case;
// the password is stored as an argon2id hash only.
func CreateUserRole(ctx context.Context, db *entdb.Client, projectID int64, email, password string, role dashboarduser.Role, now time.Time) (*entdb.DashboardUser, error) {
	email, err := checkEmail(email)
	if err != nil {
		return nil, err
	}
	if err := dashboarduser.RoleValidator(role); err != nil {
		return nil, fmt.Errorf("%w: role %q is none of owner, developer, viewer", ErrInvalidUser, role)
	}
	if err := checkNewPassword(password); err != nil {
		return nil, err
	}
	if _, err := project.Get(ctx, db, projectID); err != nil {
		return nil, fmt.Errorf("%w: project %d: %w", ErrInvalidUser, projectID, err)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	u, err := db.DashboardUser.Create().SetProjectID(projectID).SetEmail(email).SetPasswordHash(hash).SetRole(role).SetCreatedAt(now).Save(ctx)
	if entdb.IsConstraintError(err) {
		return nil, fmt.Errorf("%w: %s", ErrUserExists, email)
	}
	if err != nil {
		return nil, fmt.Errorf("create dashboard user: %w", err)
	}
	return u, nil
}

// checkEmail returns email in lower case, or ErrInvalidUser when it is no
// address.
func checkEmail(email string) (string, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return "", fmt.Errorf("%w: email %q is not an address", ErrInvalidUser, email)
	}
	return email, nil
}

// checkNewPassword refuses a password too short or too long to be set.
func checkNewPassword(password string) error {
	if len([]rune(password)) < MinPasswordLength {
		return fmt.Errorf("%w: the password must have at least %d characters", ErrInvalidUser, MinPasswordLength)
	}
	if len(password) > MaxPasswordBytes {
		return fmt.Errorf("%w: the password is longer than %d bytes", ErrInvalidUser, MaxPasswordBytes)
	}
	return nil
}

// UserByEmail returns the dashboard user signing in as email; errors wrap
// ErrNoUser when there is none.
func UserByEmail(ctx context.Context, db *entdb.Client, email string) (*entdb.DashboardUser, error) {
	u, err := db.DashboardUser.Query().Where(dashboarduser.Email(strings.ToLower(strings.TrimSpace(email)))).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %s", ErrNoUser, email)
	}
	if err != nil {
		return nil, fmt.Errorf("find dashboard user: %w", err)
	}
	return u, nil
}

// DisableUser disables user id and ends all their sessions, in one
// transaction: they cannot sign in from then on. Disabling a disabled user
// changes nothing. The project's last enabled owner is not disabled
// (ErrLastOwner). record, when not nil, runs in the same transaction
// (the audit entry).
func DisableUser(ctx context.Context, db *entdb.Client, id int64, now time.Time, record func(*entdb.Client) error) error {
	return inTx(ctx, db, func(tx *entdb.Client) error {
		u, err := tx.DashboardUser.Get(ctx, id)
		if entdb.IsNotFound(err) {
			return fmt.Errorf("%w: id %d", ErrNoUser, id)
		}
		if err != nil {
			return fmt.Errorf("find dashboard user %d: %w", id, err)
		}
		owners, err := enabledOwners(ctx, tx, u.ProjectID)
		if err != nil {
			return err
		}
		if lastOwner(owners, u) {
			return fmt.Errorf("%w: %s is its last; make another user owner (or enable one) first", ErrLastOwner, u.Email)
		}
		if err := tx.DashboardUser.Update().Where(dashboarduser.ID(id), dashboarduser.DisabledAtIsNil()).
			SetDisabledAt(now).Exec(ctx); err != nil {
			return fmt.Errorf("disable dashboard user %d: %w", id, err)
		}
		if _, err := tx.DashboardSession.Delete().Where(dashboardsession.UserID(id)).Exec(ctx); err != nil {
			return fmt.Errorf("end sessions of dashboard user %d: %w", id, err)
		}
		if record != nil {
			return record(tx)
		}
		return nil
	})
}

// EnableUser enables user userID of project projectID, disabled before:
// they sign in with their password again (disabling ended their
// sessions). It reports whether the user was disabled; enabling an
// enabled user changes nothing, and record (the audit entry, when not
// nil) runs in the same transaction only when it changed something. A
// user of another project is ErrNoUser.
func EnableUser(ctx context.Context, db *entdb.Client, projectID, userID int64, record func(*entdb.Client) error) (enabled bool, err error) {
	err = inTx(ctx, db, func(tx *entdb.Client) error {
		n, err := tx.DashboardUser.Update().
			Where(dashboarduser.ID(userID), dashboarduser.ProjectID(projectID), dashboarduser.DisabledAtNotNil()).
			ClearDisabledAt().Save(ctx)
		if err != nil {
			return fmt.Errorf("enable dashboard user %d: %w", userID, err)
		}
		if n == 0 {
			if _, err := projectUser(ctx, tx, projectID, userID); err != nil {
				return err
			}
			return nil
		}
		enabled = true
		if record != nil {
			return record(tx)
		}
		return nil
	})
	return enabled, err
}

// SetUserRole gives user userID of project projectID role and returns the
// role they had; record (the audit entry, when not nil) runs in the same
// transaction, only when the role changes. No session ends: every request
// loads its user, so the new role applies from the user's next request.
// The project keeps at least one enabled owner: giving its last another
// role is ErrLastOwner. A user promoted to owner of a project that
// requires two-factor sign-in of owners, without it, has their open
// sessions sent to set it up first (as their next sign-in would be). A
// user of another project is ErrNoUser.
func SetUserRole(ctx context.Context, db *entdb.Client, projectID, userID int64, role dashboarduser.Role, now time.Time, record func(*entdb.Client) error) (was dashboarduser.Role, err error) {
	if err := dashboarduser.RoleValidator(role); err != nil {
		return "", fmt.Errorf("%w: role %q is none of owner, developer, viewer", ErrInvalidUser, role)
	}
	err = inTx(ctx, db, func(tx *entdb.Client) error {
		owners, err := enabledOwners(ctx, tx, projectID)
		if err != nil {
			return err
		}
		u, err := projectUser(ctx, tx, projectID, userID)
		if err != nil {
			return err
		}
		if was = u.Role; was == role {
			return nil
		}
		if role != RoleOwner && lastOwner(owners, u) {
			return fmt.Errorf("%w: %s is its last; make another user owner (or enable one) first", ErrLastOwner, u.Email)
		}
		if err := tx.DashboardUser.UpdateOneID(u.ID).SetRole(role).Exec(ctx); err != nil {
			return fmt.Errorf("set role of dashboard user %d: %w", u.ID, err)
		}
		if role == RoleOwner && u.TotpEnabledAt == nil {
			p, err := project.Get(ctx, tx, projectID)
			if err != nil {
				return err
			}
			if p.RequireOwner2fa {
				if _, err := tx.DashboardSession.Update().Where(dashboardsession.UserID(u.ID), dashboardsession.ExpiresAtGT(now),
					dashboardsession.PendingEQ(dashboardsession.PendingNone)).SetPending(dashboardsession.PendingEnrol).Save(ctx); err != nil {
					return fmt.Errorf("send the sessions of dashboard user %d to enrol: %w", u.ID, err)
				}
			}
		}
		if record != nil {
			return record(tx)
		}
		return nil
	})
	return was, err
}

// projectUser returns user userID of project projectID, or ErrNoUser
// (another project's user is as unknown as a missing one).
func projectUser(ctx context.Context, db *entdb.Client, projectID, userID int64) (*entdb.DashboardUser, error) {
	u, err := db.DashboardUser.Query().Where(dashboarduser.ID(userID), dashboarduser.ProjectID(projectID)).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: id %d in project %d", ErrNoUser, userID, projectID)
	}
	if err != nil {
		return nil, fmt.Errorf("find dashboard user %d: %w", userID, err)
	}
	return u, nil
}

// enabledOwners returns the ids of the project's enabled owners. On
// PostgreSQL their rows stay locked until tx ends, so two changes at once
// cannot each see the other's owner remain and both commit (leaving
// none): the second waits and then sees the first's change. SQLite's
// transactions take the write lock when they begin (_txlock=immediate),
// so they run one at a time already.
func enabledOwners(ctx context.Context, tx *entdb.Client, projectID int64) ([]int64, error) {
	var ids []int64
	err := tx.DashboardUser.Query().
		Where(dashboarduser.ProjectID(projectID), dashboarduser.RoleEQ(RoleOwner), dashboarduser.DisabledAtIsNil()).
		Unique(false). // FOR UPDATE is not allowed with DISTINCT
		// Locked in one order by every transaction, so two cannot deadlock.
		Order(entdb.Asc(dashboarduser.FieldID)).
		Select(dashboarduser.FieldID).
		Modify(func(s *sql.Selector) {
			if s.Dialect() == dialect.Postgres {
				s.ForUpdate()
			}
		}).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("find the project's owners: %w", err)
	}
	return ids, nil
}

// lastOwner reports whether u is an enabled owner and no other user is
// among owners (the project's enabled owners): taking u's role or
// disabling u would leave the project without one.
func lastOwner(owners []int64, u *entdb.DashboardUser) bool {
	if u.Role != RoleOwner || u.DisabledAt != nil {
		return false
	}
	for _, id := range owners {
		if id != u.ID {
			return false
		}
	}
	return true
}

// EndSessions ends every session of user id (signs them out everywhere)
// and returns how many there were. record, when not nil, runs in the same
// transaction.
func EndSessions(ctx context.Context, db *entdb.Client, id int64, record func(*entdb.Client) error) (n int, err error) {
	err = inTx(ctx, db, func(tx *entdb.Client) error {
		if n, err = tx.DashboardSession.Delete().Where(dashboardsession.UserID(id)).Exec(ctx); err != nil {
			return fmt.Errorf("end sessions of dashboard user %d: %w", id, err)
		}
		if record != nil {
			return record(tx)
		}
		return nil
	})
	return n, err
}

// ResetPassword sets user id's password, lifts a lockout and ends all their
// sessions.
func ResetPassword(ctx context.Context, db *entdb.Client, id int64, password string) error {
	if err := checkNewPassword(password); err != nil {
		return err
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	return inTx(ctx, db, func(tx *entdb.Client) error {
		if err := tx.DashboardUser.UpdateOneID(id).SetPasswordHash(hash).SetFailedSignins(0).ClearLockedUntil().Exec(ctx); err != nil {
			return fmt.Errorf("set password of dashboard user %d: %w", id, err)
		}
		if _, err := tx.DashboardSession.Delete().Where(dashboardsession.UserID(id)).Exec(ctx); err != nil {
			return fmt.Errorf("end sessions of dashboard user %d: %w", id, err)
		}
		return nil
	})
}

// GeneratePassword returns a new random password (24 characters of
// URL-safe Base64, 144 bits).
func GeneratePassword() (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// inTx runs f in a transaction of db (db itself when it is already a
// transaction's client).
func inTx(ctx context.Context, db *entdb.Client, f func(*entdb.Client) error) error {
	tx, err := db.Tx(ctx)
	if errors.Is(err, entdb.ErrTxStarted) {
		return f(db)
	}
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(tx.Client()); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// randomToken returns 32 random bytes in URL-safe Base64.
func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// tokenHash is what the database keeps of a session token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// session is a signed-in request's user and session.
type session struct {
	user *entdb.DashboardUser
	row  *entdb.DashboardSession
}

// signIn checks email and password and opens a session, returning its
// token. Every failure is the same false, whether the email is unknown,
// the password wrong or the user locked, and costs one password check.
func (h *Handler) signIn(ctx context.Context, email, password string) (string, bool, error) {
	select {
	case h.hashSlots <- struct{}{}:
		defer func() { <-h.hashSlots }()
	default:
		return "", false, ErrBusy
	}
	now := h.cfg.Now()
	if len(password) > MaxPasswordBytes {
		checkPassword(h.dummyHash, "")
		return "", false, nil
	}
	u, err := h.cfg.DB.DashboardUser.Query().Where(dashboarduser.Email(strings.ToLower(strings.TrimSpace(email)))).Only(ctx)
	if entdb.IsNotFound(err) {
		checkPassword(h.dummyHash, password)
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("find dashboard user: %w", err)
	}
	// Claim the attempt before the slow check, atomically: concurrent
	// guesses cannot all pass a count read before any of them was added.
	claimed, err := h.cfg.DB.DashboardUser.Update().
		Where(dashboarduser.ID(u.ID), dashboarduser.DisabledAtIsNil(), dashboarduser.FailedSigninsLT(MaxFailedSignins),
			dashboarduser.Or(dashboarduser.LockedUntilIsNil(), dashboarduser.LockedUntilLTE(now))).
		AddFailedSignins(1).Save(ctx)
	if err != nil {
		return "", false, fmt.Errorf("count sign-in attempt: %w", err)
	}
	if claimed == 0 { // disabled, locked, or its attempts are all in flight
		checkPassword(h.dummyHash, password)
		return "", false, nil
	}
	if !checkPassword(u.PasswordHash, password) {
		if _, err := h.cfg.DB.DashboardUser.Update().
			Where(dashboarduser.ID(u.ID), dashboarduser.FailedSigninsGTE(MaxFailedSignins)).
			SetFailedSignins(0).SetLockedUntil(now.Add(LockoutDuration)).Save(ctx); err != nil {
			return "", false, fmt.Errorf("lock dashboard user: %w", err)
		}
		return "", false, nil
	}
	if err := h.cfg.DB.DashboardUser.UpdateOneID(u.ID).SetFailedSignins(0).ClearLockedUntil().Exec(ctx); err != nil {
		return "", false, fmt.Errorf("reset failed sign-ins: %w", err)
	}
	pending := dashboardsession.PendingNone
	if u.TotpEnabledAt != nil {
		pending = dashboardsession.PendingTotp
	} else if required, err := h.requires2FA(ctx, u); err != nil {
		return "", false, err
	} else if required {
		pending = dashboardsession.PendingEnrol
	}
	token, err := h.openSession(ctx, h.cfg.DB, u, pending)
	if err != nil {
		return "", false, err
	}
	return token, true, nil
}

// openSession opens a session of u with db and returns its token. A
// session pending its TOTP code or enrolment lasts PendingTTL and has not
// re-authenticated; an open one has, now.
func (h *Handler) openSession(ctx context.Context, db *entdb.Client, u *entdb.DashboardUser, pending dashboardsession.Pending) (string, error) {
	now := h.cfg.Now()
	token, err := randomToken()
	if err != nil {
		return "", err
	}
	csrf, err := randomToken()
	if err != nil {
		return "", err
	}
	// Expired sessions of the user go when a new one opens.
	if _, err := db.DashboardSession.Delete().Where(dashboardsession.UserID(u.ID), dashboardsession.ExpiresAtLTE(now)).Exec(ctx); err != nil {
		return "", fmt.Errorf("delete expired sessions: %w", err)
	}
	c := db.DashboardSession.Create().SetTokenHash(tokenHash(token)).SetUserID(u.ID).SetCsrfToken(csrf).
		SetPending(pending).SetCreatedAt(now)
	if pending == dashboardsession.PendingNone {
		c.SetExpiresAt(now.Add(h.cfg.SessionTTL)).SetReauthAt(now)
	} else {
		c.SetExpiresAt(now.Add(PendingTTL))
	}
	if err := c.Exec(ctx); err != nil {
		return "", fmt.Errorf("open session: %w", err)
	}
	return token, nil
}

// lookup returns the open session of token, or nil.
func (h *Handler) lookup(ctx context.Context, token string) (*session, error) {
	if token == "" {
		return nil, nil
	}
	s, err := h.cfg.DB.DashboardSession.Query().
		Where(dashboardsession.TokenHash(tokenHash(token)), dashboardsession.ExpiresAtGT(h.cfg.Now())).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find session: %w", err)
	}
	u, err := h.cfg.DB.DashboardUser.Get(ctx, s.UserID)
	if entdb.IsNotFound(err) || (err == nil && u.DisabledAt != nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find session user: %w", err)
	}
	return &session{user: u, row: s}, nil
}

// signOut deletes the session.
func (h *Handler) signOut(ctx context.Context, s *session) error {
	if _, err := h.cfg.DB.DashboardSession.Delete().Where(dashboardsession.ID(s.row.ID)).Exec(ctx); err != nil {
		return fmt.Errorf("sign out: %w", err)
	}
	return nil
}
