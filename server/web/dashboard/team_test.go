package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
)

// addUser creates a user of project A with role.
func (d *dash) addUser(t *testing.T, email string, role dashboarduser.Role) *entdb.DashboardUser {
	t.Helper()
	u, err := dashboard.CreateUserRole(context.Background(), d.in.Server.DB().Client, d.in.ProjectA, email, password, role, d.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// userByEmail returns the dashboard user signing in as email.
func (d *dash) userByEmail(t *testing.T, email string) *entdb.DashboardUser {
	t.Helper()
	u, err := dashboard.UserByEmail(context.Background(), d.in.Server.DB().Client, email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var (
	hrefs   = regexp.MustCompile(`href="(/dashboard/[^"#?]*)`)
	actions = regexp.MustCompile(`<form method="post" action="(/dashboard/[^"#?]*)`)
)

// TestRoleEveryRoute walks every route: each declared route is refused to
// the roles below its own (403, before its handler runs) and not to the
// others; every link and form the owner's pages offer is declared (a route
// added without a role would be refused to everyone, so its test fails);
// an undeclared path is 404 even for an owner and a declared path with
// another method 405.
func TestRoleEveryRoute(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		d.failedNotification(t)
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		rank := map[string]int{"viewer": 1, "developer": 2, "owner": 3}
		users := map[string]*user{}
		tokens := map[string]string{}
		for role, email := range map[string]string{"owner": d.emailA, "developer": "dev@shop.example", "viewer": "viewer@shop.example"} {
			u := d.user(t)
			_, tokens[role] = u.signIn(email, password)
			users[role] = u
		}

		// The owner's pages: every link and form is a declared route.
		seen := map[string]bool{}
		queue := []string{"/dashboard/notifications/"}
		forms := 0
		for len(queue) > 0 {
			path := queue[0]
			queue = queue[1:]
			if seen[path] {
				continue
			}
			seen[path] = true
			rest := strings.TrimPrefix(path, dashboard.Prefix)
			if !dashboard.Declared(http.MethodGet, rest) {
				t.Errorf("link %s: no declared route", path)
				continue
			}
			p := users["owner"].do(http.MethodGet, path, nil)
			if p.Code == http.StatusForbidden {
				t.Errorf("owner refused %s", path)
			}
			if p.Code != 200 || path == "/dashboard/events" {
				continue
			}
			for _, m := range actions.FindAllStringSubmatch(p.Body, -1) {
				forms++
				if !dashboard.Declared(http.MethodPost, strings.TrimPrefix(m[1], dashboard.Prefix)) {
					t.Errorf("form on %s posts to %s: no declared route", path, m[1])
				}
			}
			for _, m := range hrefs.FindAllStringSubmatch(p.Body, -1) {
				if m[1] != "/dashboard/events" && !seen[m[1]] {
					queue = append(queue, m[1])
				}
			}
		}
		if len(seen) < 8 || forms < 10 {
			t.Fatalf("walked %d pages and %d forms: too few to mean anything", len(seen), forms)
		}

		// Every declared route, as every role.
		for _, rt := range dashboard.Routes() {
			path := dashboard.Prefix + regexp.MustCompile(`\{[a-z]+\}`).ReplaceAllString(rt.Path, "x")
			for role, u := range users {
				admitted := rank[role] >= rank[rt.Role]
				if rt.Method == http.MethodPost && (admitted || rt.Path == "signout") {
					continue // a change; the tests of each route make it
				}
				if rt.Path == "events" {
					continue // a stream
				}
				var form url.Values
				if rt.Method == http.MethodPost {
					form = url.Values{"csrf": {tokens[role]}}
				}
				p := u.do(rt.Method, path, form)
				if rt.Path == "settings/logo" && rt.Method == http.MethodPost {
					p = u.upload(path, form, []byte("\x89PNG\r\n\x1a\n"))
				}
				if rt.Path == "payouts/{id}/psbt" && rt.Method == http.MethodPost {
					p = u.upload(path, form, nil) // multipart, as the logo
				}
				denied := p.Code == http.StatusForbidden && strings.Contains(p.Body, `id="denied"`)
				if denied == admitted {
					t.Errorf("%s %s as %s: %d (want refused: %v)", rt.Method, path, role, p.Code, !admitted)
				}
			}
		}
		for _, path := range []string{"/dashboard/no-such-page/", "/dashboard/settings/keys/1/delete", "/dashboard/team/1/promote"} {
			users["owner"].do(http.MethodGet, path, nil).Want(t, http.StatusNotFound)
			users["owner"].do(http.MethodPost, path, url.Values{"csrf": {tokens["owner"]}}).Want(t, http.StatusNotFound)
		}
		users["owner"].do(http.MethodGet, "/dashboard/team/1/disable", nil).Want(t, http.StatusMethodNotAllowed)
	})
}

// TestRoleViewerAndDeveloper: a viewer's change is refused and changes
// nothing; a developer rotates the secret but may not set a payout wallet,
// approve payouts or see the team; only an owner's nav shows Team.
func TestRoleViewerAndDeveloper(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		before, err := db.Project.Get(ctx, d.in.ProjectA)
		if err != nil {
			t.Fatal(err)
		}
		v := d.user(t)
		_, vt := v.signIn("viewer@shop.example", password)
		vs := v.do(http.MethodGet, "/dashboard/settings/", nil)
		vs.Want(t, 200, "Project settings")
		vs.WantNot(t, `href="/dashboard/team/"`)
		v.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {vt}}).
			Want(t, http.StatusForbidden, "Your role in this project, <strong>viewer</strong>, cannot do this: it needs <strong>developer</strong> or owner")
		v.do(http.MethodPost, "/dashboard/settings/keys", url.Values{"csrf": {vt}, "name": {"x"}, "scope": {"read"}}).Want(t, http.StatusForbidden)
		after, err := db.Project.Get(ctx, d.in.ProjectA)
		if err != nil || after.IpnSecret != before.IpnSecret {
			t.Fatalf("a viewer's refused rotation changed the secret (%v)", err)
		}

		dev := d.user(t)
		_, dt := dev.signIn("dev@shop.example", password)
		dev.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {dt}}).Want(t, 200, "whsec_")
		dev.do(http.MethodPost, "/dashboard/settings/wallets", url.Values{"csrf": {dt}, "ticker": {"btc"}, "addresses": {"x"}}).
			Want(t, http.StatusForbidden, "it needs <strong>owner</strong>")
		dev.do(http.MethodPost, "/dashboard/payouts/1/approve", url.Values{"csrf": {dt}}).Want(t, http.StatusForbidden)
		dev.do(http.MethodGet, "/dashboard/team/", nil).Want(t, http.StatusForbidden)

		o := d.user(t)
		o.signIn(d.emailA, password)
		o.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, `href="/dashboard/team/"`)
		// The developer's rotation is in the audit log; the refused ones are not.
		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA)).All(ctx)
		if err != nil || len(rows) != 1 || rows[0].Action != "settings.rotate_ipn_secret" || rows[0].Actor != "dev@shop.example" {
			t.Fatalf("audit entries %v %v", rows, err)
		}
	})
}

// TestTeamDisable: an owner disables a developer from the Team page: the
// developer's open session ends at once and they cannot sign in again
// (the message an unknown email gets); an owner cannot disable
// themselves; another project's user is 404; ending sessions signs a user
// out; each change is in the audit log with the owner as its actor.
func TestTeamDisable(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		dev := d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		viewer := d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		other := d.userByEmail(t, d.emailB)
		owner := d.userByEmail(t, d.emailA)
		du := d.user(t)
		du.signIn("dev@shop.example", password)
		vu := d.user(t)
		vu.signIn("viewer@shop.example", password)

		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		team := o.do(http.MethodGet, "/dashboard/team/", nil)
		team.Want(t, 200, "dev@shop.example", "viewer@shop.example", d.emailA+" (you)")
		team.WantNot(t, d.emailB, "/dashboard/team/"+strconv.FormatInt(owner.ID, 10)+"/disable")
		id := func(u *entdb.DashboardUser) string { return strconv.FormatInt(u.ID, 10) }
		o.do(http.MethodPost, "/dashboard/team/"+id(owner)+"/disable", url.Values{"csrf": {token}}).Want(t, http.StatusBadRequest, "You cannot disable yourself")
		o.do(http.MethodPost, "/dashboard/team/"+id(other)+"/disable", url.Values{"csrf": {token}}).Want(t, http.StatusNotFound)
		if p := o.do(http.MethodPost, "/dashboard/team/"+id(dev)+"/disable", url.Values{"csrf": {token}}); p.Code != http.StatusSeeOther {
			t.Fatalf("disable: %d %s", p.Code, p.Body)
		}
		o.do(http.MethodGet, "/dashboard/team/?done=disabled", nil).Want(t, 200, "The user is disabled")
		if p := du.do(http.MethodGet, "/dashboard/notifications/", nil); p.Code != http.StatusSeeOther {
			t.Fatalf("the disabled user's session still opens pages: %d", p.Code)
		}
		p, _ := du.signIn("dev@shop.example", password)
		p.Want(t, http.StatusUnauthorized, "The email or password is wrong")

		if p := o.do(http.MethodPost, "/dashboard/team/"+id(viewer)+"/sessions/revoke", url.Values{"csrf": {token}}); p.Code != http.StatusSeeOther {
			t.Fatalf("end sessions: %d %s", p.Code, p.Body)
		}
		if p := vu.do(http.MethodGet, "/dashboard/notifications/", nil); p.Code != http.StatusSeeOther {
			t.Fatalf("the viewer's ended session still opens pages: %d", p.Code)
		}
		vu.signIn("viewer@shop.example", password) // not disabled: signs in again

		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA)).Order(entdb.Asc(auditentry.FieldID)).All(ctx)
		if err != nil || len(rows) != 2 {
			t.Fatalf("audit entries %v %v", rows, err)
		}
		for i, want := range []struct{ action, target string }{{"user.disable", "dev@shop.example"}, {"user.end_sessions", "viewer@shop.example"}} {
			if e := rows[i]; e.Action != want.action || e.Target != want.target || e.Actor != d.emailA || e.ActorID != owner.ID || e.IP != "127.0.0.1" || e.UserAgent == "" {
				t.Errorf("entry %d: %+v", i, e)
			}
		}
	})
}
