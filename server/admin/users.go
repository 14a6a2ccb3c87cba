package admin

import (
	"context"
	"fmt"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/web/dashboard"
)

// CreateDashboardUserRole creates a dashboard user of project id with role
// (owner, developer or viewer; see dashboard.CreateUserRole), recorded in
// the project's audit log (user.create, "EMAIL as ROLE") once created.
func CreateDashboardUserRole(ctx context.Context, dsn string, id int64, email, password, role string) (uid int64, err error) {
	r, ok := dashboard.ParseRole(role)
	if !ok {
		return 0, fmt.Errorf("%w: --role %q: one of owner, developer, viewer", dashboard.ErrInvalidUser, role)
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.CreateUserRole(ctx, db.Client, id, email, password, r, clock.UTC())
		if err != nil {
			return err
		}
		uid = u.ID
		recordDone(ctx, db.Client, u.ProjectID, "user.create", u.Email+" as "+string(u.Role))
		return nil
	})
	return uid, err
}

// DisableDashboardUser disables the dashboard user signing in as email and
// ends all their sessions (dashboard.DisableUser); the audit entry
// (user.disable) commits with it.
func DisableDashboardUser(ctx context.Context, dsn, email string) error {
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		now := clock.UTC()
		return dashboard.DisableUser(ctx, db.Client, u.ID, now, func(tx *entdb.Client) error {
			return recordInTx(ctx, tx, u.ProjectID, "user.disable", u.Email, now)
		})
	})
}

// ResetDashboardPassword sets the password of the dashboard user signing
// in as email, lifts a lockout and ends their sessions, recorded in the
// audit log (user.reset_password; never the password) once done: the
// password's hash is computed inside dashboard.ResetPassword, before its
// transaction, which an enclosing one would hold open meanwhile.
func ResetDashboardPassword(ctx context.Context, dsn, email, password string) error {
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		if err := dashboard.ResetPassword(ctx, db.Client, u.ID, password); err != nil {
			return err
		}
		recordDone(ctx, db.Client, u.ProjectID, "user.reset_password", u.Email)
		return nil
	})
}

// RevokeDashboardSessions ends every session of the dashboard user
// signing in as email and returns how many there were; the audit entry
// (user.end_sessions) commits with it.
func RevokeDashboardSessions(ctx context.Context, dsn, email string) (n int, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		n, err = dashboard.EndSessions(ctx, db.Client, u.ID, func(tx *entdb.Client) error {
			return recordInTx(ctx, tx, u.ProjectID, "user.end_sessions", u.Email, clock.UTC())
		})
		return err
	})
	return n, err
}

// GeneratePassword returns a new random password for a dashboard user.
func GeneratePassword() (string, error) { return dashboard.GeneratePassword() }
