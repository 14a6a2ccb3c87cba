package admin

import (
	"context"
	"fmt"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/web/dashboard"
)

// EnableDashboardUser enables the disabled dashboard user signing in as
// email (dashboard.EnableUser): they sign in with their password again.
// It reports false, changing nothing, when the user was not disabled.
func EnableDashboardUser(ctx context.Context, dsn, email string) (enabled bool, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		enabled, err = dashboard.EnableUser(ctx, db.Client, u.ProjectID, u.ID, func(tx *entdb.Client) error {
			return recordInTx(ctx, tx, u.ProjectID, "user.enable", u.Email, clock.UTC())
		})
		return err
	})
	return enabled, err
}

// SetDashboardUserRole gives the dashboard user signing in as email role
// (owner, developer or viewer; dashboard.SetUserRole) and returns the role
// they had. Their sessions go on with the new role from their next
// request; giving the project's last enabled owner another role is
// refused (dashboard.ErrLastOwner).
func SetDashboardUserRole(ctx context.Context, dsn, email, role string) (was string, err error) {
	r, ok := dashboard.ParseRole(role)
	if !ok {
		return "", fmt.Errorf("%w: --role %q: one of owner, developer, viewer", dashboard.ErrInvalidUser, role)
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		u, err := dashboard.UserByEmail(ctx, db.Client, email)
		if err != nil {
			return err
		}
		now := clock.UTC()
		old, err := dashboard.SetUserRole(ctx, db.Client, u.ProjectID, u.ID, r, now, func(tx *entdb.Client) error {
			return recordInTx(ctx, tx, u.ProjectID, "user.role", u.Email+" as "+string(r), now)
		})
		was = string(old)
		return err
	})
	return was, err
}
