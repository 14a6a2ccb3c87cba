package dashboard_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/dashboardinvitation"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/mail/mailtest"
	"github.com/payhook/payhook/server/web/dashboard"
)

// withMail makes the server email through smtp, with a public URL for the
// links.
func withMail(smtp *mailtest.Server) func(*server.Config) {
	return func(c *server.Config) {
		c.Email = mail.Config{URL: smtp.URL("payhook@pay.example"), RootCAs: smtp.Roots}
		c.API.PublicURL = "http://pay.example"
	}
}

var inviteLink = regexp.MustCompile(`http://pay\.example(/dashboard/invite/[A-Za-z0-9_-]+)`)

// invitationLink sends the due emails and returns the path of the
// invitation link of the n-th message the SMTP server took (from 1), which
// must be to to.
func (d *dash) invitationLink(t *testing.T, smtp *mailtest.Server, n int, to string) string {
	t.Helper()
	if err := d.in.Server.Mail().RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := smtp.Wait(t, n)[n-1]
	if len(m.To) != 1 || m.To[0] != to {
		t.Fatalf("message %d to %v, want %s", n, m.To, to)
	}
	l := inviteLink.FindStringSubmatch(m.Text())
	if l == nil || !strings.Contains(m.HTML(), l[0]) {
		t.Fatalf("no invitation link in %q", m.Text())
	}
	return l[1]
}

// TestTeamInvitation: an owner invites an email as developer; the SMTP
// server gets one email with a one-time link, whose token the database
// keeps only hashed; the invitee chooses a password (two that differ are
// refused) and is signed in as a developer; the link then opens nothing,
// nor does one past its 7 days or withdrawn; an email with an account is
// not invited; each step is in the audit log.
func TestTeamInvitation(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		smtp := mailtest.Start(t, mailtest.Options{TLS: true})
		d := newDash(t, liveDatabase(t, dialect), withMail(smtp))
		ctx := context.Background()
		db := d.in.Server.DB().Client
		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		if p := o.do(http.MethodPost, "/dashboard/team/invite", url.Values{"csrf": {token}, "email": {"New@Shop.example"}, "role": {"developer"}}); p.Code != http.StatusSeeOther {
			t.Fatalf("invite: %d %s", p.Code, p.Body)
		}
		o.do(http.MethodGet, "/dashboard/team/?done=invited", nil).Want(t, 200, "The invitation is sent", "new@shop.example")
		link := d.invitationLink(t, smtp, 1, "new@shop.example")
		tok := strings.TrimPrefix(link, "/dashboard/invite/")
		if n, _ := db.DashboardInvitation.Query().Where(dashboardinvitation.TokenHash(tok)).Count(ctx); n != 0 {
			t.Fatal("the database holds the invitation's token")
		}
		msg := smtp.Messages()[0]
		if !strings.Contains(msg.Subject(), "invited") || !strings.Contains(msg.Text(), d.emailA+" invited you") || !strings.Contains(msg.Text(), "as developer") {
			t.Errorf("invitation email %q: %q", msg.Subject(), msg.Text())
		}

		n := d.user(t)
		form := n.do(http.MethodGet, link, nil)
		form.Want(t, 200, "as <strong>developer</strong>", "new@shop.example")
		n.do(http.MethodPost, link, url.Values{"csrf": {csrf(t, form)}, "password": {password}, "password2": {password + "!"}}).Want(t, http.StatusBadRequest, "The two passwords differ")
		n.do(http.MethodPost, link, url.Values{"csrf": {"forged"}, "password": {password}, "password2": {password}}).Want(t, http.StatusForbidden)
		form = n.do(http.MethodGet, link, nil)
		if p := n.do(http.MethodPost, link, url.Values{"csrf": {csrf(t, form)}, "password": {password}, "password2": {password}}); p.Code != http.StatusSeeOther {
			t.Fatalf("accept: %d %s", p.Code, p.Body)
		}
		n.do(http.MethodGet, "/dashboard/settings/", nil).Want(t, 200, "new@shop.example")
		n.do(http.MethodGet, "/dashboard/team/", nil).Want(t, http.StatusForbidden)
		u, err := dashboard.UserByEmail(ctx, db, "new@shop.example")
		if err != nil || u.Role != dashboard.RoleDeveloper || u.ProjectID != d.in.ProjectA {
			t.Fatalf("the invitee's user %+v %v", u, err)
		}
		d.user(t).do(http.MethodGet, link, nil).Want(t, http.StatusGone, "expired, was used already or was withdrawn")
		// The password chosen signs in.
		d.user(t).signIn("new@shop.example", password)

		o.do(http.MethodPost, "/dashboard/team/invite", url.Values{"csrf": {token}, "email": {"new@shop.example"}, "role": {"viewer"}}).
			Want(t, http.StatusBadRequest, "already has a dashboard account")

		// Withdrawn.
		o.do(http.MethodPost, "/dashboard/team/invite", url.Values{"csrf": {token}, "email": {"gone@shop.example"}, "role": {"viewer"}})
		gone := d.invitationLink(t, smtp, 2, "gone@shop.example")
		inv, err := db.DashboardInvitation.Query().Where(dashboardinvitation.Email("gone@shop.example")).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		o.do(http.MethodPost, "/dashboard/team/invitations/"+itoa(inv.ID)+"/revoke", url.Values{"csrf": {token}})
		d.user(t).do(http.MethodGet, gone, nil).Want(t, http.StatusGone)

		// Expired.
		o.do(http.MethodPost, "/dashboard/team/invite", url.Values{"csrf": {token}, "email": {"late@shop.example"}, "role": {"viewer"}})
		late := d.invitationLink(t, smtp, 3, "late@shop.example")
		d.user(t).do(http.MethodGet, late, nil).Want(t, 200, "as <strong>viewer</strong>")
		d.clock.Advance(dashboard.DefaultInvitationTTL + time.Minute)
		d.user(t).do(http.MethodGet, late, nil).Want(t, http.StatusGone)

		var got []string
		rows, err := db.AuditEntry.Query().Where(auditentry.ProjectID(d.in.ProjectA)).Order(entdb.Asc(auditentry.FieldID)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range rows {
			got = append(got, e.Actor+" "+e.Action+" "+e.Target)
		}
		want := []string{
			d.emailA + " user.invite new@shop.example as developer",
			"new@shop.example user.accept_invitation developer",
			d.emailA + " user.invite gone@shop.example as viewer",
			d.emailA + " user.revoke_invitation gone@shop.example",
			d.emailA + " user.invite late@shop.example as viewer",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestTeamInvitationWithoutEmail: without email, inviting is refused with
// what the operator can do instead.
func TestTeamInvitationWithoutEmail(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		o := d.user(t)
		_, token := o.signIn(d.emailA, password)
		o.do(http.MethodPost, "/dashboard/team/invite", url.Values{"csrf": {token}, "email": {"new@shop.example"}, "role": {"viewer"}}).
			Want(t, http.StatusBadRequest, "payhook user create")
		if n, _ := d.in.Server.DB().Client.DashboardInvitation.Query().Count(context.Background()); n != 0 {
			t.Fatalf("%d invitations stored", n)
		}
	})
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }
