package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
)

// TestTeamRoleAndEnable: an owner changes a signed-in developer's role to
// viewer and the developer's very next request has the viewer's rights,
// in the same session; promotes the viewer to owner; the project's last
// enabled owner cannot be demoted (themselves included) or disabled; an
// owner may demote themselves while another owner remains, and then loses
// the Team page; an owner enables a disabled user, who signs in again;
// another project's user is 404, a role that is none is 400; changing a
// role needs a recent re-authentication; every change is in the audit
// log, naming the user (and the new role).
func TestTeamRoleAndEnable(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		dev := d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		viewer := d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		owner := d.userByEmail(t, d.emailA)
		other := d.userByEmail(t, d.emailB)
		id := func(u *entdb.DashboardUser) string { return strconv.FormatInt(u.ID, 10) }
		role := func(u *entdb.DashboardUser) dashboarduser.Role {
			t.Helper()
			got, err := db.DashboardUser.Get(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.Role
		}

		du := d.user(t)
		_, dt := du.signIn("dev@shop.example", password)
		du.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `id="rotate"`)
		o := d.user(t)
		_, ot := o.signIn(d.emailA, password)
		o.do(http.MethodGet, "/dashboard/team/", nil).Want(t, 200, `action="/dashboard/team/`+id(dev)+`/role"`, `id="role-`+id(dev)+`"`)

		// The developer becomes a viewer: their open session stays, and its
		// next request has a viewer's rights.
		if p := o.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/role", url.Values{"csrf": {ot}, "role": {"viewer"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/team/?done=role" {
			t.Fatalf("role: %d %v %s", p.Code, p.Header, p.Body)
		}
		o.do(http.MethodGet, "/dashboard/team/?done=role", nil).Want(t, 200, "The role is changed")
		settings := du.do(http.MethodGet, "/dashboard/settings/", nil)
		settings.Want(t, 200, "Your role (viewer) cannot change this.")
		settings.WantNot(t, `id="rotate"`)
		du.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {dt}}).Want(t, http.StatusForbidden, `id="denied"`)
		if role(dev) != dashboard.RoleViewer {
			t.Fatalf("role %s", role(dev))
		}
		if p := o.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/role", url.Values{"csrf": {ot}, "role": {"Viewer"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/team/?done=same-role" {
			t.Fatalf("the same role: %d %v", p.Code, p.Header)
		}

		// Refused: a role that is none, another project's user, an unknown
		// one; a viewer or developer may not change roles at all.
		o.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/role", url.Values{"csrf": {ot}, "role": {"admin"}}).Want(t, http.StatusBadRequest, "none of owner, developer, viewer")
		o.do(http.MethodPost, "/dashboard/team/"+id(other)+"/role", url.Values{"csrf": {ot}, "role": {"viewer"}}).Want(t, http.StatusNotFound)
		o.do(http.MethodPost, "/dashboard/team/999999/role", url.Values{"csrf": {ot}, "role": {"viewer"}}).Want(t, http.StatusNotFound)
		o.do(http.MethodPost, "/dashboard/team/"+id(other)+"/enable", url.Values{"csrf": {ot}}).Want(t, http.StatusNotFound)
		du.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/role", url.Values{"csrf": {dt}, "role": {"owner"}}).Want(t, http.StatusForbidden, `id="denied"`)
		if o, _ := db.DashboardUser.Get(ctx, other.ID); o.Role != dashboard.RoleOwner || role(dev) != dashboard.RoleViewer {
			t.Fatal("a refused change changed a role")
		}

		// The last enabled owner: not demoted, not disabled.
		o.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/role", url.Values{"csrf": {ot}, "role": {"developer"}}).
			Want(t, http.StatusConflict, d.emailA+" is the project&#39;s last enabled owner")
		if err := dashboard.DisableUser(ctx, db, owner.ID, d.clock.Now(), nil); !errors.Is(err, dashboard.ErrLastOwner) {
			t.Fatalf("disable the last owner: %v", err)
		}
		if _, err := dashboard.SetUserRole(ctx, db, d.in.ProjectA, owner.ID, dashboard.RoleViewer, d.clock.Now(), nil); !errors.Is(err, dashboard.ErrLastOwner) {
			t.Fatalf("demote the last owner: %v", err)
		}

		// The viewer becomes an owner; the first owner may then step down,
		// and is then no owner on their next page. The new owner, now the
		// last, cannot step down.
		vu := d.user(t)
		_, vt := vu.signIn("viewer@shop.example", password)
		vu.do(http.MethodGet, "/dashboard/team/", nil).Want(t, http.StatusForbidden)
		if p := o.do(http.MethodPost, "/dashboard/team/"+id(viewer)+"/role", url.Values{"csrf": {ot}, "role": {"owner"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("promote: %d %s", p.Code, p.Body)
		}
		vu.do(http.MethodGet, "/dashboard/team/", nil).Want(t, 200, "viewer@shop.example (you)")
		if p := o.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/role", url.Values{"csrf": {ot}, "role": {"developer"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/notifications/" {
			t.Fatalf("step down: %d %v %s", p.Code, p.Header, p.Body)
		}
		o.do(http.MethodGet, "/dashboard/team/", nil).Want(t, http.StatusForbidden, `id="denied"`)
		vu.do(http.MethodPost, "/dashboard/team/"+id(viewer)+"/role", url.Values{"csrf": {vt}, "role": {"viewer"}}).
			Want(t, http.StatusConflict, "viewer@shop.example is the project&#39;s last enabled owner")
		if err := dashboard.DisableUser(ctx, db, viewer.ID, d.clock.Now(), nil); !errors.Is(err, dashboard.ErrLastOwner) {
			t.Fatalf("disable the last owner: %v", err)
		}

		// Enable: the new owner disables the first (now a developer) and
		// enables them again; they sign in again. Enabling an enabled user
		// is refused.
		if p := vu.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/disable", url.Values{"csrf": {vt}}); p.Code != http.StatusSeeOther {
			t.Fatalf("disable: %d %s", p.Code, p.Body)
		}
		p, _ := d.user(t).signIn(d.emailA, password)
		p.Want(t, http.StatusUnauthorized)
		vu.do(http.MethodGet, "/dashboard/team/", nil).Want(t, 200, `action="/dashboard/team/`+id(owner)+`/enable"`)
		if p := vu.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/enable", url.Values{"csrf": {vt}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/team/?done=enabled" {
			t.Fatalf("enable: %d %v %s", p.Code, p.Header, p.Body)
		}
		vu.do(http.MethodGet, "/dashboard/team/?done=enabled", nil).Want(t, 200, "The user is enabled")
		vu.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/enable", url.Values{"csrf": {vt}}).Want(t, http.StatusConflict, "is not disabled")
		d.user(t).signIn(d.emailA, password)

		// A role change needs a recent re-authentication; enabling does not.
		d.clock.Advance(dashboard.DefaultReauthWindow + time.Minute)
		vu.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/role", url.Values{"csrf": {vt}, "role": {"developer"}}).Want(t, http.StatusForbidden, `id="reauth"`)
		if role(dev) != dashboard.RoleViewer {
			t.Fatal("changed without re-authentication")
		}

		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA)).Order(entdb.Asc(auditentry.FieldID)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []struct{ actor, action, target string }{
			{d.emailA, "user.role", "dev@shop.example as viewer"},
			{d.emailA, "user.role", "viewer@shop.example as owner"},
			{d.emailA, "user.role", d.emailA + " as developer"},
			{"viewer@shop.example", "user.disable", d.emailA},
			{"viewer@shop.example", "user.enable", d.emailA},
		}
		if len(rows) != len(want) {
			t.Fatalf("%d audit entries, want %d: %v", len(rows), len(want), rows)
		}
		for i, w := range want {
			if e := rows[i]; e.Actor != w.actor || e.Action != w.action || e.Target != w.target {
				t.Errorf("entry %d: %s %s %q, want %v", i, e.Actor, e.Action, e.Target, w)
			}
		}
	})
}

// TestTeamRolePromotedOwnerEnrols: in a project that requires two-factor
// sign-in of owners, a developer without it promoted to owner keeps their
// session, but its next request is sent to set two-factor sign-in up
// first, as their next sign-in would be.
func TestTeamRolePromotedOwnerEnrols(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		dev := d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		du := d.user(t)
		du.signIn("dev@shop.example", password)
		o := d.user(t)
		_, ot := o.signIn(d.emailA, password)
		d.enrol(t, o, ot)
		if p := o.do(http.MethodPost, "/dashboard/team/security", url.Values{"csrf": {ot}, "require_owner_2fa": {"1"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("require: %d %s", p.Code, p.Body)
		}
		du.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200)
		if p := o.do(http.MethodPost, "/dashboard/team/"+strconv.FormatInt(dev.ID, 10)+"/role", url.Values{"csrf": {ot}, "role": {"owner"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("promote: %d %s", p.Code, p.Body)
		}
		if p := du.do(http.MethodGet, "/dashboard/team/", nil); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/account/" {
			t.Fatalf("the promoted owner's next page: %d %v", p.Code, p.Header)
		}
		du.do(http.MethodGet, "/dashboard/account/", nil).Want(t, 200, "this project requires it of its owners")
	})
}

// TestLastOwnerAtOnce: two owners each demoting the other at the same
// time, or each disabling the other, never leave the project without an
// enabled owner: one change waits for the other and is then refused.
func TestLastOwnerAtOnce(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		a := d.userByEmail(t, d.emailA)
		b := d.addUser(t, "second@shop.example", dashboard.RoleOwner)
		for round := range 10 {
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, u := range []*entdb.DashboardUser{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if round%2 == 0 {
						_, errs[i] = dashboard.SetUserRole(ctx, db, d.in.ProjectA, u.ID, dashboard.RoleDeveloper, d.clock.Now(), nil)
					} else {
						errs[i] = dashboard.DisableUser(ctx, db, u.ID, d.clock.Now(), nil)
					}
				}()
			}
			wg.Wait()
			n, err := db.DashboardUser.Query().Where(dashboarduser.ProjectID(d.in.ProjectA), dashboarduser.RoleEQ(dashboard.RoleOwner),
				dashboarduser.DisabledAtIsNil()).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			refused := 0
			for _, err := range errs {
				switch {
				case errors.Is(err, dashboard.ErrLastOwner):
					refused++
				case err != nil:
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if n != 1 || refused != 1 {
				t.Fatalf("round %d: %d enabled owners, %d refused (%v)", round, n, refused, errs)
			}
			// Both owners again, enabled.
			for _, u := range []*entdb.DashboardUser{a, b} {
				if err := db.DashboardUser.UpdateOneID(u.ID).SetRole(dashboard.RoleOwner).ClearDisabledAt().Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
