package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/payhook/payhook/ent/db/dashboardrecoverycode"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

var (
	totpSecret   = regexp.MustCompile(`<code id="totp-secret">([A-Z2-7]+)</code>`)
	recoveryCode = regexp.MustCompile(`<li><code>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})</code></li>`)
)

// code is the TOTP code of secret at the test's clock.
func (d *dash) code(t *testing.T, secret string) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, d.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enrol sets up two-factor sign-in of u's user (signed in, token its CSRF
// token) and returns the secret and the recovery codes.
func (d *dash) enrol(t *testing.T, u *user, token string) (string, []string) {
	t.Helper()
	p := u.do(http.MethodPost, "/dashboard/account/totp/start", url.Values{"csrf": {token}})
	p.Want(t, 200, `src="data:image/png;base64,`, `id="totp-secret"`)
	m := totpSecret.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no secret on %s", p.Body)
	}
	u.do(http.MethodPost, "/dashboard/account/totp/confirm", url.Values{"csrf": {token}, "code": {"000000"}}).Want(t, http.StatusBadRequest, "The code is wrong")
	p = u.do(http.MethodPost, "/dashboard/account/totp/confirm", url.Values{"csrf": {token}, "code": {d.code(t, m[1])}})
	p.Want(t, 200, "Two-factor sign-in is on", "they are shown only now")
	var codes []string
	for _, c := range recoveryCode.FindAllStringSubmatch(p.Body, -1) {
		codes = append(codes, c[1])
	}
	if len(codes) != dashboard.RecoveryCodes {
		t.Fatalf("%d recovery codes", len(codes))
	}
	return m[1], codes
}

// signInTOTP signs in with the password, then code; it returns the page
// answering the code.
func (u *user) signInTOTP(email, code string) webtest.Page {
	u.t.Helper()
	p, _ := u.signInPassword(email)
	if p.Code != http.StatusSeeOther {
		u.t.Fatalf("password: %d %s", p.Code, p.Body)
	}
	if q := u.do(http.MethodGet, "/dashboard/notifications/", nil); q.Code != http.StatusSeeOther || q.Header.Get("Location") != "/dashboard/signin/totp" {
		u.t.Fatalf("after the password: %d %v", q.Code, q.Header)
	}
	form := u.do(http.MethodGet, "/dashboard/signin/totp", nil)
	form.Want(u.t, 200, "Two-factor sign-in")
	return u.do(http.MethodPost, "/dashboard/signin/totp", url.Values{"csrf": {csrf(u.t, form)}, "code": {code}})
}

// signInPassword posts the sign-in form only.
func (u *user) signInPassword(email string) (webtest.Page, string) {
	u.t.Helper()
	p := u.do(http.MethodGet, "/dashboard/signin", nil)
	token := csrf(u.t, p)
	return u.do(http.MethodPost, "/dashboard/signin", url.Values{"csrf": {token}, "email": {email}, "password": {password}}), token
}

// TestTOTPEnrolAndSignIn: a user enrols (QR code, a wrong code refused,
// ten recovery codes stored hashed); sign-in then asks for the code after
// the password, and a half-signed-in session opens nothing; a code is
// accepted once (the one that confirmed enrolment is refused); a recovery
// code signs in once; five wrong codes end the session; sensitive changes
// ask for a code again once the re-authentication window has passed.
func TestTOTPEnrolAndSignIn(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		u := d.user(t)
		_, token := u.signIn(d.emailA, password)
		u.do(http.MethodGet, "/dashboard/account/", nil).Want(t, 200, `id="totp-off"`)
		secret, codes := d.enrol(t, u, token)
		owner, err := dashboard.UserByEmail(ctx, db, d.emailA)
		if err != nil || owner.TotpEnabledAt == nil || owner.TotpSecret != secret {
			t.Fatalf("enrolled user %+v %v", owner, err)
		}
		rows, err := db.DashboardRecoveryCode.Query().Where(dashboardrecoverycode.UserID(owner.ID)).All(ctx)
		if err != nil || len(rows) != dashboard.RecoveryCodes {
			t.Fatalf("recovery codes %v %v", rows, err)
		}
		for _, r := range rows {
			for _, c := range codes {
				if strings.Contains(r.CodeHash, strings.ReplaceAll(c, "-", "")) {
					t.Fatal("a recovery code is stored as it is")
				}
			}
		}
		u.do(http.MethodGet, "/dashboard/account/", nil).Want(t, 200, `id="totp-on"`, `<span id="recovery-left">10</span>`)
		used := d.code(t, secret)

		// The code that confirmed enrolment is spent; a half-signed-in session
		// opens nothing and posts nothing.
		v := d.user(t)
		v.signInTOTP(d.emailA, used).Want(t, http.StatusUnauthorized, "The code is wrong or was used already")
		v.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {token}}).Want(t, http.StatusForbidden)
		d.clock.Advance(dashboard.TOTPPeriod)
		form := v.do(http.MethodGet, "/dashboard/signin/totp", nil)
		if p := v.do(http.MethodPost, "/dashboard/signin/totp", url.Values{"csrf": {csrf(t, form)}, "code": {d.code(t, secret)}}); p.Code != http.StatusSeeOther {
			t.Fatalf("the next code: %d %s", p.Code, p.Body)
		}
		v.do(http.MethodGet, "/dashboard/notifications/", nil).Want(t, 200, d.emailA)

		// A recovery code, once.
		if p := d.user(t).signInTOTP(d.emailA, strings.ToUpper(codes[3])); p.Code != http.StatusSeeOther {
			t.Fatalf("recovery code: %d %s", p.Code, p.Body)
		}
		d.user(t).signInTOTP(d.emailA, codes[3]).Want(t, http.StatusUnauthorized)

		// Re-authentication: past the window, rotating the secret asks for a
		// code first, and changes nothing until then.
		before, _ := db.Project.Get(ctx, d.in.ProjectA)
		d.clock.Advance(dashboard.DefaultReauthWindow + time.Minute)
		_, vt := v.signInPasswordless()
		v.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {vt}}).Want(t, http.StatusForbidden, `id="reauth"`, `id="reauth-code"`)
		if after, _ := db.Project.Get(ctx, d.in.ProjectA); after.IpnSecret != before.IpnSecret {
			t.Fatal("rotated without re-authentication")
		}
		v.do(http.MethodPost, "/dashboard/reauth", url.Values{"csrf": {vt}, "code": {"123456"}, "next": {"/dashboard/settings/"}}).Want(t, http.StatusUnauthorized)
		if p := v.do(http.MethodPost, "/dashboard/reauth", url.Values{"csrf": {vt}, "code": {d.code(t, secret)}, "next": {"//evil.example/"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/" {
			t.Fatalf("reauth: %d %v", p.Code, p.Header)
		}
		v.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {vt}}).Want(t, 200, "whsec_")

		// Five wrong codes end the half-signed-in session (and lock the user).
		w := d.user(t)
		w.signInTOTP(d.emailA, "111111").Want(t, http.StatusUnauthorized)
		for range dashboard.MaxFailedSignins - 2 {
			form := w.do(http.MethodGet, "/dashboard/signin/totp", nil)
			w.do(http.MethodPost, "/dashboard/signin/totp", url.Values{"csrf": {csrf(t, form)}, "code": {"111111"}}).Want(t, http.StatusUnauthorized)
		}
		form = w.do(http.MethodGet, "/dashboard/signin/totp", nil)
		if p := w.do(http.MethodPost, "/dashboard/signin/totp", url.Values{"csrf": {csrf(t, form)}, "code": {"111111"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
			t.Fatalf("the fifth wrong code: %d %v %s", p.Code, p.Header, p.Body)
		}
		if p := v.do(http.MethodGet, "/dashboard/notifications/", nil); p.Code != http.StatusSeeOther {
			t.Fatalf("the lockout left a session open: %d", p.Code)
		}
	})
}

// signInPasswordless returns the CSRF token of the session u holds.
func (u *user) signInPasswordless() (webtest.Page, string) {
	u.t.Helper()
	p := u.do(http.MethodGet, "/dashboard/notifications/", nil)
	p.Want(u.t, 200)
	return p, csrf(u.t, p)
}

// TestTOTPRequiredOfOwners: once the project requires two-factor sign-in
// of owners, an owner without it is sent to set it up at sign-in and
// reaches nothing else until they have; a developer is not asked; the
// setting is in the audit log. Re-authentication without TOTP asks for
// the password.
func TestTOTPRequiredOfOwners(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		d.addUser(t, "owner2@shop.example", dashboard.RoleOwner)
		d.addUser(t, "dev@shop.example", dashboard.RoleDeveloper)
		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		if p := o.do(http.MethodPost, "/dashboard/team/security", url.Values{"csrf": {token}, "require_owner_2fa": {"1"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("require: %d %s", p.Code, p.Body)
		}
		o.do(http.MethodGet, "/dashboard/team/", nil).Want(t, 200, `id="require-owner-2fa" checked`)

		dev := d.user(t)
		_, dt := dev.signIn("dev@shop.example", password)
		// Re-authentication by password, past the window.
		d.clock.Advance(dashboard.DefaultReauthWindow + time.Minute)
		dev.do(http.MethodPost, "/dashboard/settings/rotate-callback-key", url.Values{"csrf": {dt}}).Want(t, http.StatusForbidden, `id="reauth-password"`)
		dev.do(http.MethodPost, "/dashboard/reauth", url.Values{"csrf": {dt}, "password": {"not the password"}, "next": {"/dashboard/settings/"}}).Want(t, http.StatusUnauthorized)
		if p := dev.do(http.MethodPost, "/dashboard/reauth", url.Values{"csrf": {dt}, "password": {password}, "next": {"/dashboard/settings/"}}); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/settings/" {
			t.Fatalf("reauth: %d %v", p.Code, p.Header)
		}

		o2 := d.user(t)
		p, _ := o2.signInPassword("owner2@shop.example")
		if p.Code != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", p.Code)
		}
		for _, path := range []string{"/dashboard/notifications/", "/dashboard/settings/", "/dashboard/team/"} {
			if p := o2.do(http.MethodGet, path, nil); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/account/" {
				t.Fatalf("%s before enrolment: %d %v", path, p.Code, p.Header)
			}
		}
		acct := o2.do(http.MethodGet, "/dashboard/account/", nil)
		acct.Want(t, 200, "this project requires it of its owners")
		ot := csrf(t, acct)
		o2.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {ot}}).Want(t, http.StatusForbidden)
		d.enrol(t, o2, ot)
		o2.do(http.MethodGet, "/dashboard/notifications/", nil).Want(t, 200, "owner2@shop.example")
		acct = o2.do(http.MethodGet, "/dashboard/account/", nil)
		acct.Want(t, 200, "it stays on")
		acct.WantNot(t, `id="totp-disable"`)
	})
}
