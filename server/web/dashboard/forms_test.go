package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
)

// crawlForms walks every dashboard page u reaches by links from the
// notifications page and returns the post forms they show: each route
// (as declared) with a page showing it, and each page's body.
func crawlForms(t *testing.T, u *user) (forms map[string]string, pages map[string]string) {
	t.Helper()
	forms, pages = map[string]string{}, map[string]string{}
	seen := map[string]bool{}
	queue := []string{"/dashboard/notifications/"}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		if seen[path] || path == "/dashboard/events" {
			continue
		}
		seen[path] = true
		p := u.do(http.MethodGet, path, nil)
		if p.Code != http.StatusOK {
			continue
		}
		pages[path] = p.Body
		for _, m := range actions.FindAllStringSubmatch(p.Body, -1) {
			rt, ok := dashboard.RouteOf(http.MethodPost, strings.TrimPrefix(m[1], dashboard.Prefix))
			if !ok {
				t.Errorf("form on %s posts to %s: no declared route", path, m[1])
				continue
			}
			forms[rt.Path+" needs "+rt.Role] = path
		}
		for _, m := range hrefs.FindAllStringSubmatch(p.Body, -1) {
			if !seen[m[1]] {
				queue = append(queue, m[1])
			}
		}
	}
	return forms, pages
}

// TestRoleFormsShown crawls the dashboard as a viewer, a developer and an
// owner: every form a page shows posts to a route the role is admitted to
// (the viewer is shown only sign-out and their own account's), each role
// is shown the changes it may make, and a section whose changes the role
// may not make says so instead of offering them.
func TestRoleFormsShown(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := devDash(t, dialect)
		d.failedNotification(t)
		d.paidCheckout(t, "an order")
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		gone := d.addUser(t, "gone@shop.example", dashboard.RoleViewer)
		if err := dashboard.DisableUser(context.Background(), d.in.Server.DB().Client, gone.ID, d.clock.Now(), nil); err != nil {
			t.Fatal(err)
		}
		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		o.do(http.MethodPost, "/dashboard/endpoints/", url.Values{"csrf": {token}, "url": {d.hook}, "event_types": {"*"}}).Want(t, 200, `id="new-secret"`)

		rank := map[string]int{"viewer": 1, "developer": 2, "owner": 3}
		shown := map[string]map[string]bool{}
		bodies := map[string]map[string]string{}
		for role, email := range map[string]string{"viewer": "viewer@shop.example", "developer": "dev@shop.example", "owner": d.emailA} {
			u := d.user(t)
			u.signIn(email, password)
			forms, pages := crawlForms(t, u)
			if len(pages) < 8 {
				t.Fatalf("%s: crawled %d pages: too few to mean anything", role, len(pages))
			}
			shown[role], bodies[role] = map[string]bool{}, pages
			for form, page := range forms {
				path, need, _ := strings.Cut(form, " needs ")
				if rank[need] > rank[role] {
					t.Errorf("%s is shown on %s a form posting to %s, which needs %s", role, page, path, need)
				}
				shown[role][path] = true
			}
		}
		list := func(m map[string]bool) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			sort.Strings(out)
			return out
		}
		// The viewer is shown nothing but the viewer's routes: signing out
		// and setting up two-factor sign-in.
		if got := strings.Join(list(shown["viewer"]), " "); got != "account/totp/start signout" {
			t.Errorf("the viewer is shown forms to %s", got)
		}
		for role, want := range map[string][]string{
			"developer": {"signout", "notifications/{id}/resend", "settings/rotate-secret", "settings/keys", "settings/keys/{id}/revoke",
				"settings/branding", "endpoints/", "endpoints/{id}/update", "endpoints/{id}/delete"},
			"owner": {"signout", "notifications/{id}/resend", "settings/rotate-secret", "settings/wallets", "checkouts/{id}/refund",
				"endpoints/{id}/update", "team/{id}/role", "team/{id}/enable", "team/{id}/disable", "team/invite", "team/security"},
		} {
			for _, path := range want {
				if !shown[role][path] {
					t.Errorf("%s is not shown the form to %s; shown %v", role, path, list(shown[role]))
				}
			}
		}

		// Where a role may change nothing, the page says so.
		says := func(role, path, what string) {
			t.Helper()
			body, ok := bodies[role][path]
			if !ok || !strings.Contains(body, what) {
				t.Errorf("%s's %s (crawled: %v) lacks %q", role, path, ok, what)
			}
		}
		says("viewer", "/dashboard/settings/", `class="note read-only">Your role (viewer) cannot change this.`)
		says("viewer", "/dashboard/endpoints/", `class="note read-only">Your role (viewer) cannot change this.`)
		says("developer", "/dashboard/settings/", `class="note read-only">Your role (developer) cannot change this.`)
		says("developer", "/dashboard/payouts/", `id="payouts-read-only">Your role (developer) cannot approve`)
		details := 0
		for path, body := range bodies["viewer"] {
			rest := strings.TrimPrefix(path, "/dashboard/")
			switch {
			case strings.HasPrefix(rest, "notifications/") && rest != "notifications/":
				says("viewer", path, `class="note read-only">Your role (viewer) cannot change this.`)
			case strings.HasPrefix(rest, "endpoints/") && rest != "endpoints/":
				says("viewer", path, `id="endpoint-read-only">Your role (viewer) cannot change this endpoint`)
			case strings.HasPrefix(rest, "checkouts/") && rest != "checkouts/" && strings.Contains(body, "Refunds"):
				says("viewer", path, `id="refund-read-only">Your role (viewer) cannot refund`)
			default:
				continue
			}
			details++
		}
		if details < 3 {
			t.Errorf("the viewer crawled %d notification, endpoint and checkout pages", details)
		}
		for path, body := range bodies["owner"] {
			if strings.Contains(body, "read-only") {
				t.Errorf("the owner's %s says they cannot change it", path)
			}
		}
	})
}
