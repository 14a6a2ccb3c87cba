package dashboard_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/mail/mailtest"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestBrowserTeam in a real browser: an owner invites a viewer from the
// Team page; the viewer opens the emailed link (read from the SMTP
// message), chooses a password and is signed in; enrols two-factor
// sign-in (the QR code shown, the code computed from the key with the
// test's clock) and sees the recovery codes; signs out and in again with
// the password and then a TOTP code; is shown no button to rotate the
// secret (the section says the role cannot change it) and is refused the
// Team page; the owner's audit log then shows the invitation, its
// acceptance and the enrolment.
func TestBrowserTeam(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		ctx := webtest.Browser(t)
		smtp := mailtest.Start(t, mailtest.Options{TLS: true})
		d := newDash(t, liveDatabase(t, dialect), withMail(smtp))
		const viewer = "val@shop.example"
		if err := chromedp.Do(ctx,
			signIn(d.in.BaseURL, d.emailA),
			chromedp.Navigate(d.in.BaseURL+"/dashboard/team/"),
			chromedp.WaitVisible(chromedp.CSS(`#invite-form`)),
			chromedp.SendKeys(chromedp.CSS(`#invite-email`), viewer),
			chromedp.SetValue(chromedp.CSS(`#invite-role`), "viewer"),
			chromedp.Click(chromedp.CSS(`#invite`)),
			chromedp.WaitVisible(chromedp.CSS(`#open-invitations`)),
			webtest.Shot("dashboard-team.png"),
			chromedp.Click(chromedp.CSS(`#signout`)),
			chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		); err != nil {
			t.Fatalf("invite: %v", err)
		}
		link := d.invitationLink(t, smtp, 1, viewer)

		var secret, qr string
		if err := chromedp.Do(ctx,
			chromedp.Navigate(d.in.BaseURL+link),
			chromedp.WaitVisible(chromedp.CSS(`#accept-form`)),
			chromedp.SendKeys(chromedp.CSS(`#password`), password),
			chromedp.SendKeys(chromedp.CSS(`#password2`), password),
			chromedp.Click(chromedp.CSS(`#accept`)),
			chromedp.WaitVisible(chromedp.CSS(`#signout`)),
			chromedp.Click(chromedp.CSS(`#account`)),
			chromedp.WaitVisible(chromedp.CSS(`#totp-start`)),
			chromedp.Click(chromedp.CSS(`#totp-start`)),
			chromedp.WaitVisible(chromedp.CSS(`#totp-qr`)),
			webtest.Into(&secret, chromedp.Text(chromedp.CSS(`#totp-secret`))),
			webtest.Into(&qr, chromedp.Evaluate[string](`(() => { const i = document.getElementById("totp-qr"); return i.complete && i.naturalWidth > 0 ? i.src.slice(0, 22) : "not loaded" })()`)),
			webtest.Shot("dashboard-totp-enrol.png"),
		); err != nil {
			t.Fatalf("accept, start enrolment: %v", err)
		}
		if qr != "data:image/png;base64," || secret == "" {
			t.Fatalf("QR code %q, key %q", qr, secret)
		}
		code := func() string {
			c, err := totp.GenerateCode(secret, d.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		var codes string
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`#totp-code`), code()),
			chromedp.Click(chromedp.CSS(`#totp-confirm`)),
			chromedp.WaitVisible(chromedp.CSS(`#recovery-codes`)),
			webtest.Into(&codes, chromedp.Text(chromedp.CSS(`#recovery-codes`))),
			chromedp.Click(chromedp.CSS(`#continue`)),
			chromedp.WaitVisible(chromedp.CSS(`#signout`)),
			chromedp.Click(chromedp.CSS(`#signout`)),
			chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		); err != nil {
			t.Fatalf("confirm enrolment, sign out: %v", err)
		}
		if n := strings.Count(codes, "-"); n != 3*dashboard.RecoveryCodes {
			t.Fatalf("recovery codes shown: %q", codes)
		}

		// The next step's code: the one that confirmed enrolment is spent.
		d.clock.Advance(dashboard.TOTPPeriod)
		var denied, readOnly string
		var rotate bool
		if err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS(`#email`), viewer),
			chromedp.SendKeys(chromedp.CSS(`#password`), password),
			chromedp.Click(chromedp.CSS(`#signin`)),
			chromedp.WaitVisible(chromedp.CSS(`#totp-form`)),
			chromedp.SendKeys(chromedp.CSS(`#code`), code()),
			chromedp.Click(chromedp.CSS(`#verify`)),
			chromedp.WaitVisible(chromedp.CSS(`#signout`)),
			chromedp.Navigate(d.in.BaseURL+"/dashboard/settings/"),
			chromedp.WaitVisible(chromedp.CSS(`#secret .read-only`)),
			webtest.Into(&readOnly, chromedp.Text(chromedp.CSS(`#secret .read-only`))),
			webtest.Into(&rotate, chromedp.Evaluate[bool](`document.querySelector("#rotate") !== null`)),
			chromedp.Navigate(d.in.BaseURL+"/dashboard/team/"),
			chromedp.WaitVisible(chromedp.CSS(`#denied`)),
			webtest.Into(&denied, chromedp.Text(chromedp.CSS(`#denied`))),
			webtest.Shot("dashboard-denied.png"),
			chromedp.Click(chromedp.CSS(`#signout`)),
			chromedp.WaitVisible(chromedp.CSS(`#signin-form`)),
		); err != nil {
			t.Fatalf("TOTP sign-in, refused change: %v", err)
		}
		if !strings.Contains(denied, "viewer") || !strings.Contains(denied, "owner") {
			t.Fatalf("refusal: %q", denied)
		}
		if rotate || readOnly != "Your role (viewer) cannot change this." {
			t.Fatalf("the viewer's settings: rotate button %v, %q", rotate, readOnly)
		}

		var log string
		if err := chromedp.Do(ctx,
			signIn(d.in.BaseURL, d.emailA),
			chromedp.Click(chromedp.CSS(`a[href="/dashboard/audit/"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#audit`)),
			webtest.Into(&log, chromedp.Text(chromedp.CSS(`#audit`))),
			webtest.Shot("dashboard-audit.png"),
		); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		for _, want := range []string{"user.invite", viewer + " as viewer", "user.accept_invitation", "user.totp_enable"} {
			if !strings.Contains(log, want) {
				t.Errorf("audit log lacks %q:\n%s", want, log)
			}
		}
		if strings.Contains(log, "settings.rotate_ipn_secret") {
			t.Errorf("the refused rotation is in the audit log:\n%s", log)
		}
	})
}
