package admin

import (
	"context"
	"fmt"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/web/dashboard"
)

// CreateDashboardUserRole creates a dashboard user of project id with role
// (owner, developer or viewer; see dashboard.CreateUserRole).
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
		return nil
	})
	return uid, err
}

// DisableDashboardUser disables the dashboard user signing in as email and
// ends all their sessions (dashboard.DisableUser).
func DisableDashboardUser(ctx context.Context, dsn, email string) error {
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		return dashboard.DisableUser(ctx, db.Client, u.ID, clock.UTC(), nil)
	})
}

// ResetDashboardPassword sets the password of the dashboard user signing
// in as email, lifts a lockout and ends their sessions.
func ResetDashboardPassword(ctx context.Context, dsn, email, password string) error {
	return withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		return dashboard.ResetPassword(ctx, db.Client, u.ID, password)
	})
}

// RevokeDashboardSessions ends every session of the dashboard user
// signing in as email and returns how many there were.
func RevokeDashboardSessions(ctx context.Context, dsn, email string) (n int, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		n, err = dashboard.EndSessions(ctx, db.Client, u.ID, nil)
		return err
	})
	return n, err
}

// GeneratePassword returns a new random password for a dashboard user.
func GeneratePassword() (string, error) { return dashboard.GeneratePassword() }
