package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// password is every test user's password.
const password = "correct horse battery staple"

// dash is a server with a merchant endpoint that answers 500, a dashboard
// user per project and a settable clock.
type dash struct {
	in     *servertest.Instance
	clock  *clock.Manual
	hook   string
	emailA string
	emailB string
}

func newDash(t *testing.T, mutate ...func(*server.Config)) *dash {
	t.Helper()
	d := &dash{clock: clock.NewManual(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)), emailA: "alice@shop.example", emailB: "bob@other.example"}
	merchant := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database is down", http.StatusInternalServerError)
	}))
	t.Cleanup(merchant.Close)
	d.hook = merchant.URL + "/hook"
	d.in = servertest.Start(t, store.SQLite, append([]func(*server.Config){func(c *server.Config) {
		c.ManualDelivery = true
		c.Now = d.clock.Now
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(d.hook, servertest.A, servertest.B)
		c.Delivery.Window = time.Hour
	}}, mutate...)...)
	ctx := context.Background()
	if _, err := dashboard.CreateUser(ctx, d.in.Server.DB().Client, d.in.ProjectA, d.emailA, password, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := dashboard.CreateUser(ctx, d.in.Server.DB().Client, d.in.ProjectB, d.emailB, password, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	return d
}

// failedNotification stores a test webhook of project A to the endpoint
// that answers 500, attempts it, and lets its window close: it is failed.
func (d *dash) failedNotification(t *testing.T) string {
	t.Helper()
	r := d.in.Do(t, http.MethodPost, d.in.BaseURL+"/notification/test/?url="+url.QueryEscape(d.hook), d.in.KeyA)
	if r.Code != 200 {
		t.Fatalf("test webhook: %d %s", r.Code, r.Body)
	}
	id, _ := r.JSON["uuid"].(string)
	d.runDue(t)
	d.clock.Advance(2 * time.Hour)
	d.runDue(t)
	n, err := d.in.Server.Notifier().Queue.Get(context.Background(), d.in.ProjectA, id)
	if err != nil || n.Status != "failed" || n.Attempts != 1 {
		t.Fatalf("notification %s: %+v %v", id, n, err)
	}
	return id
}

func (d *dash) runDue(t *testing.T) {
	t.Helper()
	if err := d.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// browser is a cookie-keeping client that does not follow redirects.
type user struct {
	t    *testing.T
	base string
	c    *http.Client
}

func (d *dash) user(t *testing.T) *user {
	jar, _ := cookiejar.New(nil)
	return &user{t: t, base: d.in.BaseURL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (u *user) do(method, path string, form url.Values) webtest.Page {
	u.t.Helper()
	p := webtest.Do(u.t, u.c, method, u.base+path, form)
	p.URL = path
	return p
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the token of the first form of p.
func csrf(t *testing.T, p webtest.Page) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("%s: no csrf field\n%s", p.URL, p.Body)
	}
	return m[1]
}

// signIn signs in and returns the notifications page's CSRF token.
func (u *user) signIn(email, pw string) (webtest.Page, string) {
	u.t.Helper()
	p := u.do(http.MethodGet, "/dashboard/signin", nil)
	p.Want(u.t, 200, "Sign in")
	p = u.do(http.MethodPost, "/dashboard/signin", url.Values{"csrf": {csrf(u.t, p)}, "email": {email}, "password": {pw}})
	if p.Code != http.StatusSeeOther {
		return p, ""
	}
	q := u.do(http.MethodGet, "/dashboard/notifications/", nil)
	q.Want(u.t, 200, email)
	return p, csrf(u.t, q)
}

// TestDashboardSignInOut: a signed-out visitor is sent to sign in; a wrong
// password is refused; the session cookie is HttpOnly and SameSite=Lax (not
// Secure over plain HTTP); signing out needs the token, deletes the
// session and ends access.
func TestDashboardSignInOut(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	u := d.user(t)
	if p := u.do(http.MethodGet, "/dashboard/", nil); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
		t.Fatalf("signed out: %d %v", p.Code, p.Header)
	}
	if p := u.do(http.MethodGet, "/dashboard", nil); p.Code != http.StatusMovedPermanently {
		t.Fatalf("/dashboard: %d", p.Code)
	}
	p, _ := u.signIn(d.emailA, "wrong password!")
	p.Want(t, http.StatusUnauthorized, "The email or password is wrong")
	p, token := u.signIn(d.emailA, password)
	var session string
	for _, c := range p.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "payhook_session=") {
			session = c
		}
	}
	if !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Lax") || strings.Contains(session, "Secure") || !strings.Contains(session, "Path=/dashboard/") {
		t.Fatalf("session cookie %q", session)
	}
	if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	// The database holds the token's hash, never the token.
	raw := strings.TrimPrefix(strings.SplitN(session, ";", 2)[0], "payhook_session=")
	rows, err := d.in.Server.DB().Client.DashboardSession.Query().All(context.Background())
	if err != nil || len(rows) != 1 || rows[0].TokenHash == raw || len(rows[0].TokenHash) != 64 {
		t.Fatalf("sessions %v %v", rows, err)
	}
	u.do(http.MethodGet, "/dashboard/notifications/", nil).Want(t, 200, "Notifications", "project A")

	u.do(http.MethodPost, "/dashboard/signout", url.Values{}).Want(t, http.StatusForbidden, "Refused")
	if p := u.do(http.MethodPost, "/dashboard/signout", url.Values{"csrf": {token}}); p.Code != http.StatusSeeOther {
		t.Fatalf("sign out: %d", p.Code)
	}
	if n, _ := d.in.Server.DB().Client.DashboardSession.Query().Where(dashboardsession.UserID(rows[0].UserID)).Count(context.Background()); n != 0 {
		t.Fatalf("%d sessions after sign-out", n)
	}
	if p := u.do(http.MethodGet, "/dashboard/notifications/", nil); p.Code != http.StatusSeeOther {
		t.Fatalf("after sign-out: %d", p.Code)
	}
}

// TestDashboardLockout: five wrong passwords lock the user for 15 minutes,
// when even the right one fails, with the message an unknown email gets;
// the clock moving past the lock lets them in.
func TestDashboardLockout(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	u := d.user(t)
	for i := range dashboard.MaxFailedSignins {
		p, _ := u.signIn(d.emailA, fmt.Sprintf("wrong password %d", i))
		p.Want(t, http.StatusUnauthorized, "The email or password is wrong")
	}
	locked, _ := u.signIn(d.emailA, password)
	unknown, _ := u.signIn("nobody@shop.example", password)
	locked.Want(t, http.StatusUnauthorized)
	unknown.Want(t, http.StatusUnauthorized)
	if strip(locked.Body) != strip(unknown.Body) {
		t.Fatalf("a locked user's page differs from an unknown email's:\n%s\n%s", locked.Body, unknown.Body)
	}
	d.clock.Advance(dashboard.LockoutDuration - time.Second)
	if p, _ := u.signIn(d.emailA, password); p.Code != http.StatusUnauthorized {
		t.Fatalf("still locked: %d", p.Code)
	}
	d.clock.Advance(2 * time.Second)
	if p, _ := u.signIn(d.emailA, password); p.Code != http.StatusSeeOther {
		t.Fatalf("after the lock: %d %s", p.Code, p.Body)
	}
}

// strip removes the per-response CSRF token and the echoed email.
func strip(s string) string {
	s = csrfField.ReplaceAllString(s, "")
	return regexp.MustCompile(`name="email" id="email" value="[^"]*"`).ReplaceAllString(s, "")
}

// TestDashboardCSRF: a sign-in without the pre-session token, and a
// resend, sign-out or rotation without the session's token (or with
// another session's) are refused with 403 and change nothing.
func TestDashboardCSRF(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	id := d.failedNotification(t)
	anon := d.user(t)
	anon.do(http.MethodPost, "/dashboard/signin", url.Values{"email": {d.emailA}, "password": {password}}).Want(t, http.StatusForbidden)
	anon.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", url.Values{}).Want(t, http.StatusForbidden)

	a := d.user(t)
	_, tokenA := a.signIn(d.emailA, password)
	a2 := d.user(t)
	_, tokenA2 := a2.signIn(d.emailA, password)
	if tokenA == tokenA2 {
		t.Fatal("two sessions share a CSRF token")
	}
	p0, _ := project.Get(context.Background(), d.in.Server.DB().Client, d.in.ProjectA)
	for _, form := range []url.Values{{}, {"csrf": {""}}, {"csrf": {tokenA2}}} {
		a.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", form).Want(t, http.StatusForbidden)
		a.do(http.MethodPost, "/dashboard/settings/rotate-secret", form).Want(t, http.StatusForbidden)
	}
	n, _ := d.in.Server.Notifier().Queue.Get(context.Background(), d.in.ProjectA, id)
	p1, _ := project.Get(context.Background(), d.in.Server.DB().Client, d.in.ProjectA)
	if n.Resend || p1.IpnSecret != p0.IpnSecret {
		t.Fatalf("a refused request changed something: resend %v, secret rotated %v", n.Resend, p1.IpnSecret != p0.IpnSecret)
	}
}

// TestDashboardNotifications: project A's user sees the failed
// notification first, its payload, headers and attempt, the rule of a
// resend after the deadline, resends it, and sees the new attempt;
// project B's user gets 404 for its page and its resend.
func TestDashboardNotifications(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	id := d.failedNotification(t)
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/notifications/", nil)
	list.Want(t, 200, `<section id="failed">`, id, "test.webhook")
	a.do(http.MethodGet, "/dashboard/notifications/?status=failed&event=test.webhook&from=2026-11-24&to=2026-11-24", nil).Want(t, 200, id)
	a.do(http.MethodGet, "/dashboard/notifications/?status=acknowledged", nil).Want(t, 200, "No notification matches.")
	a.do(http.MethodGet, "/dashboard/notifications/?from=yesterday", nil).Want(t, 400, "from is not a date")

	detail := a.do(http.MethodGet, "/dashboard/notifications/"+id+"/", nil)
	detail.Want(t, 200, `id="attempt-1"`, "database is down", "500", "Idempotency-Key", id, "After the deadline", "exactly one extra attempt")
	if !strings.Contains(html.UnescapeString(detail.Body), `"event_type":"test.webhook"`) {
		t.Errorf("payload not shown:\n%s", detail.Body)
	}

	b := d.user(t)
	_, tokenB := b.signIn(d.emailB, password)
	b.do(http.MethodGet, "/dashboard/notifications/"+id+"/", nil).Want(t, 404)
	b.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", url.Values{"csrf": {tokenB}}).Want(t, 404)
	b.do(http.MethodGet, "/dashboard/notifications/", nil).WantNot(t, id)
	a.do(http.MethodGet, "/dashboard/notifications/no-such-uuid/", nil).Want(t, 404)

	p := a.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", url.Values{"csrf": {token}})
	if p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/notifications/"+id+"/?resent=1" {
		t.Fatalf("resend: %d %v", p.Code, p.Header)
	}
	d.runDue(t)
	a.do(http.MethodGet, "/dashboard/notifications/"+id+"/?resent=1", nil).Want(t, 200, "Resend requested", `id="attempt-2"`)
	d.runDue(t) // one attempt only: after the deadline nothing follows
	if n, _ := d.in.Server.Notifier().Queue.Get(context.Background(), d.in.ProjectA, id); n.Attempts != 2 || n.Status != "failed" {
		t.Fatalf("after the resend: %d attempts, %s", n.Attempts, n.Status)
	}
}

// TestDashboardRotateSecret: the settings page rotates the project's IPN
// secret, shows the new one once with the grace period's end, and the old
// one keeps signing until then.
func TestDashboardRotateSecret(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	ctx := context.Background()
	before, _ := project.Get(ctx, d.in.Server.DB().Client, d.in.ProjectA)
	sp := a.do(http.MethodGet, "/dashboard/settings/", nil)
	sp.Want(t, 200, "Rotate the IPN secret")
	sp.WantNot(t, "whsec_")
	p := a.do(http.MethodPost, "/dashboard/settings/rotate-secret", url.Values{"csrf": {token}})
	after, _ := project.Get(ctx, d.in.Server.DB().Client, d.in.ProjectA)
	until := d.clock.Now().Add(project.DefaultGrace)
	p.Want(t, 200, "shown only this once", until.Format("2006-01-02 15:04:05 UTC"))
	if shown := html.UnescapeString(p.Body); !strings.Contains(shown, `<code id="new-secret">`+after.IpnSecret+`</code>`) || strings.Contains(shown, before.IpnSecret) {
		t.Fatalf("rotation page:\n%s", p.Body)
	}
	if after.IpnSecret == before.IpnSecret || p.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("not rotated, or cached: %v", p.Header)
	}
	if s := project.Secrets(after, d.clock.Now()); len(s) != 2 || s[1] != before.IpnSecret {
		t.Fatalf("secrets in the grace: %d", len(s))
	}
	sp = a.do(http.MethodGet, "/dashboard/settings/", nil)
	sp.Want(t, 200, "A previous secret still signs until")
	if strings.Contains(html.UnescapeString(sp.Body), after.IpnSecret) {
		t.Fatal("the secret is shown again")
	}
}

// TestDashboardSecureCookie: with an https public URL (TLS ending in a
// proxy), the session and sign-in cookies are Secure.
func TestDashboardSecureCookie(t *testing.T) {
	t.Parallel()
	d := newDash(t, func(c *server.Config) { c.API.PublicURL = "https://pay.shop.example" })
	u := d.user(t)
	p := u.do(http.MethodGet, "/dashboard/signin", nil)
	for _, c := range p.Header.Values("Set-Cookie") {
		if !strings.Contains(c, "Secure") || !strings.Contains(c, "HttpOnly") || !strings.Contains(c, "SameSite=Lax") {
			t.Fatalf("cookie %q", c)
		}
	}
	// The jar keeps a Secure cookie away from http://, so post by hand.
	var signin string
	for _, c := range p.Header.Values("Set-Cookie") {
		if v, ok := strings.CutPrefix(strings.SplitN(c, ";", 2)[0], "payhook_signin="); ok {
			signin = v
		}
	}
	req, _ := http.NewRequest(http.MethodPost, d.in.BaseURL+"/dashboard/signin", strings.NewReader(url.Values{"csrf": {signin}, "email": {d.emailA}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "payhook_signin", Value: signin})
	resp, err := webtest.NoRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var session string
	for _, c := range resp.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "payhook_session=") {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(session, "Secure") || !strings.Contains(session, "HttpOnly") {
		t.Fatalf("sign-in over an https public URL: %d %q", resp.StatusCode, session)
	}
}

// TestDashboardSignInFlood: sign-ins beyond MaxConcurrentPasswordChecks
// at once are answered 503 instead of each costing a 64 MiB hash, and an
// oversized form is 413. (That concurrent guesses cannot pass the lockout
// is the atomic claim in signIn; TestDashboardLockout covers its counting.)
func TestDashboardSignInFlood(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	const burst = 16
	codes := make(chan int, burst)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range burst {
		u := d.user(t)
		u.do(http.MethodGet, "/dashboard/signin", nil) // its sign-in cookie, before the burst
		wg.Go(func() {
			<-start
			p, _ := u.signIn(d.emailA, fmt.Sprintf("wrong guess %d", i))
			codes <- p.Code
		})
	}
	close(start) // all at once
	wg.Wait()
	close(codes)
	wrong, busy := 0, 0
	for c := range codes {
		switch c {
		case http.StatusUnauthorized:
			wrong++
		case http.StatusServiceUnavailable:
			busy++
		default:
			t.Errorf("a guess answered %d", c)
		}
	}
	t.Logf("%d wrong, %d refused as busy", wrong, busy)
	if busy == 0 || wrong > burst-busy {
		t.Errorf("%d of %d concurrent sign-ins refused as busy; the password checks are not bounded", busy, burst)
	}
	// Whatever got through, the right password now fails if five wrong
	// ones were checked, and no more than five are counted before a lock.
	u := d.user(t)
	p, _ := u.signIn(d.emailA, password)
	if wrong >= dashboard.MaxFailedSignins && p.Code != http.StatusUnauthorized {
		t.Errorf("after %d wrong guesses the right password: HTTP %d, want the lockout", wrong, p.Code)
	}
	big := d.user(t)
	page := big.do(http.MethodGet, "/dashboard/signin", nil)
	r := big.do(http.MethodPost, "/dashboard/signin", url.Values{"csrf": {csrf(t, page)}, "email": {d.emailA}, "password": {strings.Repeat("x", 10<<10)}})
	r.Want(t, http.StatusRequestEntityTooLarge)
}

// TestDashboardSignInLimitPerNetwork: one client network trying many
// accounts (each too few times to lock one) is stopped after
// SigninFailuresPerIP failures with 429 and Retry-After, even with a right
// password; the clock moving on lets one more attempt through.
func TestDashboardSignInLimitPerNetwork(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	u := d.user(t)
	for i := range dashboard.SigninFailuresPerIP {
		p, _ := u.signIn(fmt.Sprintf("guess%d@shop.example", i), "not the password at all")
		p.Want(t, http.StatusUnauthorized, "The email or password is wrong")
	}
	p, _ := u.signIn(d.emailA, password)
	p.Want(t, http.StatusTooManyRequests, "Too many failed sign-ins from your network")
	if p.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	d.clock.Advance(dashboard.SigninFailureRefill)
	if p, _ := u.signIn(d.emailA, password); p.Code != http.StatusSeeOther {
		t.Fatalf("after a refill, the right password: %d %s", p.Code, p.Body)
	}
}

// TestDashboardHeadersAsRecorded: the page shows the per-attempt HMAC
// signature the receiver got, as recorded with the attempt, even after the
// project's secret was rotated (a recomputed one would differ).
func TestDashboardHeadersAsRecorded(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case got <- r.Header.Get("X-Service-Signature"):
		default:
		}
		http.Error(w, "not today", http.StatusServiceUnavailable)
	}))
	t.Cleanup(receiver.Close)
	hook := receiver.URL + "/capture"
	d := newDash(t, func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(hook, servertest.A)...)
	})
	r := d.in.Do(t, http.MethodPost, d.in.BaseURL+"/notification/test/?url="+url.QueryEscape(hook), d.in.KeyA)
	if r.Code != 200 {
		t.Fatalf("test webhook: %d %s", r.Code, r.Body)
	}
	id, _ := r.JSON["uuid"].(string)
	d.runDue(t)
	sent := <-got
	if sent == "" {
		t.Fatal("the receiver got no x-service-signature")
	}
	d.clock.Advance(time.Minute)
	if _, err := project.RotateSecret(context.Background(), d.in.Server.DB().Client, d.in.ProjectA, time.Hour, d.clock.Now()); err != nil {
		t.Fatal(err)
	}
	a := d.user(t)
	a.signIn(d.emailA, password)
	page := a.do(http.MethodGet, "/dashboard/notifications/"+id+"/", nil)
	page.Want(t, 200, "The headers attempt 1 sent at", "as recorded")
	if !strings.Contains(html.UnescapeString(page.Body), sent) {
		t.Fatalf("the page does not show the signature sent (%s):\n%s", sent, page.Body)
	}
	now, err := d.in.Server.Notifier().Queue.AttemptHeaders(context.Background(), mustGet(t, d, id), d.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if now.Get("X-Service-Signature") == sent {
		t.Fatal("a signature made now equals the one sent: the test proves nothing")
	}
}

func mustGet(t *testing.T, d *dash, id string) *entdb.Notification {
	t.Helper()
	n, err := d.in.Server.Notifier().Queue.Get(context.Background(), d.in.ProjectA, id)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
