package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/dashboardrecoverycode"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
)

// TestRecoveryCodesRegenerate: a user with two-factor sign-in makes ten
// new recovery codes on the account page (after confirming it is them,
// once the re-authentication window has passed); they are shown once and
// stored hashed, every old code stops working at once, and a new one signs
// in once; a user without two-factor sign-in has none to replace; the
// change is in the audit log.
func TestRecoveryCodesRegenerate(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		d.addUser(t, "viewer@shop.example", dashboard.RoleViewer)
		u := d.user(t)
		_, token := u.signIn(d.emailA, password)
		secret, old := d.enrol(t, u, token)
		owner := d.userByEmail(t, d.emailA)
		// One old code used: the account page counts nine left and offers
		// new ones.
		if p := d.user(t).signInTOTP(d.emailA, old[0]); p.Code != http.StatusSeeOther {
			t.Fatalf("an old code: %d", p.Code)
		}
		u.do(http.MethodGet, "/dashboard/account/", nil).Want(t, 200, `<span id="recovery-left">9</span>`, `id="recovery-regenerate"`)

		// Past the window, the page asks for a code first and changes nothing.
		d.clock.Advance(dashboard.DefaultReauthWindow + time.Minute)
		u.do(http.MethodPost, "/dashboard/account/recovery-codes", url.Values{"csrf": {token}}).Want(t, http.StatusForbidden, `id="reauth-code"`)
		if p := d.user(t).signInTOTP(d.emailA, old[1]); p.Code != http.StatusSeeOther {
			t.Fatalf("an old code before the new ones: %d", p.Code)
		}
		if p := u.do(http.MethodPost, "/dashboard/reauth", url.Values{"csrf": {token}, "code": {d.code(t, secret)}, "next": {"/dashboard/account/"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("reauth: %d %s", p.Code, p.Body)
		}
		p := u.do(http.MethodPost, "/dashboard/account/recovery-codes", url.Values{"csrf": {token}})
		p.Want(t, 200, "they are shown only now", "New recovery codes are made")
		var fresh []string
		for _, m := range recoveryCode.FindAllStringSubmatch(p.Body, -1) {
			fresh = append(fresh, m[1])
		}
		if len(fresh) != dashboard.RecoveryCodes {
			t.Fatalf("%d new codes shown", len(fresh))
		}
		for _, c := range fresh {
			for _, o := range old {
				if c == o {
					t.Fatalf("a new code %s is an old one", c)
				}
			}
		}
		rows, err := db.DashboardRecoveryCode.Query().Where(dashboardrecoverycode.UserID(owner.ID)).All(ctx)
		if err != nil || len(rows) != dashboard.RecoveryCodes {
			t.Fatalf("stored codes %d %v", len(rows), err)
		}
		for _, r := range rows {
			if r.UsedAt != nil || len(r.CodeHash) != 64 {
				t.Fatalf("stored code %+v", r)
			}
		}
		u.do(http.MethodGet, "/dashboard/account/", nil).Want(t, 200, `<span id="recovery-left">10</span>`)

		// An old code, unused before, no longer signs in; a new one does,
		// once.
		d.user(t).signInTOTP(d.emailA, old[2]).Want(t, http.StatusUnauthorized, "The code is wrong or was used already")
		if p := d.user(t).signInTOTP(d.emailA, fresh[4]); p.Code != http.StatusSeeOther {
			t.Fatalf("a new code: %d %s", p.Code, p.Body)
		}
		d.user(t).signInTOTP(d.emailA, fresh[4]).Want(t, http.StatusUnauthorized)

		// Without two-factor sign-in there are none to replace.
		v := d.user(t)
		_, vt := v.signIn("viewer@shop.example", password)
		v.do(http.MethodGet, "/dashboard/account/", nil).WantNot(t, `id="recovery-regenerate"`)
		v.do(http.MethodPost, "/dashboard/account/recovery-codes", url.Values{"csrf": {vt}}).Want(t, http.StatusBadRequest, "Two-factor sign-in is off")

		es, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA), auditentry.Action("user.recovery_codes")).All(ctx)
		if err != nil || len(es) != 1 || es[0].Actor != d.emailA || es[0].Target != d.emailA {
			t.Fatalf("audit entries %v %v", es, err)
		}
	})
}
