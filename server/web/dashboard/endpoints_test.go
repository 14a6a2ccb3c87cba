package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/web/webtest"
)

var endpointIDShown = regexp.MustCompile(`<code id="ep-id">(ep_[a-z0-9]+)</code>`)

// shown is p's body as the browser shows its text (entities decoded).
func shown(p webtest.Page) string { return html.UnescapeString(p.Body) }

// wantShown fails t unless p has status code and its text contains every
// string of contains.
func wantShown(t *testing.T, p webtest.Page, code int, contains ...string) {
	t.Helper()
	if p.Code != code {
		t.Fatalf("%s: status %d, want %d\n%s", p.URL, p.Code, code, p.Body)
	}
	for _, c := range contains {
		if !strings.Contains(shown(p), c) {
			t.Errorf("%s: page lacks %q\n%s", p.URL, c, p.Body)
		}
	}
}

// liveEndpoints returns project's live endpoints, as stored.
func liveEndpoints(t *testing.T, d *dash, project int64) []*entdb.Endpoint {
	t.Helper()
	es, err := d.in.Server.DB().Client.Endpoint.Query().
		Where(entendpoint.ProjectID(project), entendpoint.DeletedAtIsNil()).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestDashboardEndpointForms: the create and edit forms refuse a bad URL,
// a filter entry that is malformed or matches no event type, and a bad
// max_per_second, each with the service's reason shown inline beside what
// was typed (a 400, never a 500), and change nothing; a form without the
// session's CSRF token is a 403 that changes nothing; a created endpoint's
// secret is shown once; another project's endpoint is a 404; pausing from
// the page shows the banner on every page, resuming removes it; resume
// and replay refusals are shown on the page; a rotation shows the new
// secret once; a test event is listed among the deliveries.
func TestDashboardEndpointForms(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		testDashboardEndpointForms(t, newDash(t, liveDatabase(t, dialect)))
	})
}

func testDashboardEndpointForms(t *testing.T, d *dash) {
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	list := a.do(http.MethodGet, "/dashboard/endpoints/", nil)
	list.Want(t, 200, "The project has no webhook endpoint.", `aria-current="page">Endpoints`)
	a.do(http.MethodGet, "/dashboard/notifications/", nil).Want(t, 200, `<a href="/dashboard/endpoints/">Endpoints</a>`)

	form := func(kv ...string) url.Values {
		v := url.Values{"csrf": {token}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	for _, tc := range []struct {
		name    string
		form    url.Values
		refusal string
		echoed  string
	}{
		{"not http", form("url", "ftp://shop.example/hook", "event_types", "*"), "url: ", "ftp://shop.example/hook"},
		{"private", form("url", "http://127.0.0.1:9/hook", "event_types", "*"), "url: host 127.0.0.1 is a loopback address (RFC 1122); webhooks must reach a public HTTP(S) address", "http://127.0.0.1:9/hook"},
		{"unknown type", form("url", d.hook, "event_types", "checkout.*, checkout.payment.nope"), `event_types: "checkout.payment.nope" matches no event type payhook sends`, "checkout.*, checkout.payment.nope"},
		{"malformed pattern", form("url", d.hook, "event_types", "Checkout.*"), `event_types: "Checkout.*": 'C' is not allowed`, "Checkout.*"},
		{"no type", form("url", d.hook, "event_types", " , "), "event_types: name at least one event type", d.hook},
		{"rate not a number", form("url", d.hook, "event_types", "*", "max_per_second", "fast"), "max_per_second: must be a whole number", "fast"},
		{"rate too high", form("url", d.hook, "event_types", "*", "max_per_second", "5000"), "max_per_second: must be 0 (no limit) to 1000", "5000"},
	} {
		p := a.do(http.MethodPost, "/dashboard/endpoints/", tc.form)
		p.URL += " (" + tc.name + ")"
		wantShown(t, p, http.StatusBadRequest, "The endpoint was not created: "+tc.refusal, `value="`+tc.echoed+`"`)
	}
	a.do(http.MethodPost, "/dashboard/endpoints/", url.Values{"url": {d.hook}, "event_types": {"*"}}).Want(t, http.StatusForbidden)
	b := d.user(t)
	_, tokenB := b.signIn(d.emailB, password)
	a.do(http.MethodPost, "/dashboard/endpoints/", url.Values{"csrf": {tokenB}, "url": {d.hook}, "event_types": {"*"}}).Want(t, http.StatusForbidden)
	if es := liveEndpoints(t, d, d.in.ProjectA); len(es) != 0 {
		t.Fatalf("refused forms created %d endpoints", len(es))
	}

	created := a.do(http.MethodPost, "/dashboard/endpoints/", form("url", d.hook, "description", "order service", "event_types", "checkout.*, deposit.payment.completed", "max_per_second", "10"))
	created.Want(t, 200, "shown only this once")
	m := endpointIDShown.FindStringSubmatch(created.Body)
	if m == nil {
		t.Fatalf("no endpoint id on the created page:\n%s", created.Body)
	}
	id := m[1]
	es := liveEndpoints(t, d, d.in.ProjectA)
	if len(es) != 1 || es[0].PublicID != id || es[0].URL != d.hook || es[0].Description != "order service" ||
		strings.Join(es[0].EventTypes, ",") != "checkout.*,deposit.payment.completed" || es[0].MaxPerSecond != 10 {
		t.Fatalf("stored %+v", es)
	}
	secret := es[0].Secret
	wantShown(t, created, 200, `<code id="new-secret">`+secret+`</code>`)
	if created.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the secret's page may be cached: %v", created.Header)
	}
	page := "/dashboard/endpoints/" + id + "/"
	again := a.do(http.MethodGet, page, nil)
	again.Want(t, 200, `<span class="badge st-active">active</span>`, "order service", d.hook)
	again.WantNot(t, secret, "whsec_")
	a.do(http.MethodGet, "/dashboard/endpoints/", nil).Want(t, 200, `href="/dashboard/endpoints/`+id+`/"`, "order service", "never")

	// Edit: a refusal keeps the endpoint as it was and echoes the form.
	bad := a.do(http.MethodPost, page+"update", form("url", d.hook, "description", "changed", "event_types", "refund.*"))
	wantShown(t, bad, 400, `The endpoint was not saved: event_types: "refund.*" matches no event type`, `value="refund.*"`, `value="changed"`)
	if e := liveEndpoints(t, d, d.in.ProjectA)[0]; e.Description != "order service" {
		t.Fatalf("a refused edit changed the endpoint: %+v", e)
	}
	ok := a.do(http.MethodPost, page+"update", form("url", d.hook, "description", "all payments", "event_types", "*.payment.completed", "max_per_second", ""))
	if ok.Code != http.StatusSeeOther || ok.Header.Get("Location") != page+"?done=saved" {
		t.Fatalf("edit: %d %v", ok.Code, ok.Header)
	}
	a.do(http.MethodGet, page+"?done=saved", nil).Want(t, 200, "The endpoint is saved", "all payments")
	if e := liveEndpoints(t, d, d.in.ProjectA)[0]; e.Description != "all payments" || strings.Join(e.EventTypes, ",") != "*.payment.completed" || e.MaxPerSecond != 0 {
		t.Fatalf("edited: %+v", e)
	}

	// Every change needs the session's token.
	for _, action := range []string{"update", "pause", "resume", "test", "replay", "rotate-secret", "delete"} {
		a.do(http.MethodPost, page+action, url.Values{"url": {"https://evil.example/"}, "event_types": {"*"}, "since": {"2026-11-24T00:00"}}).Want(t, http.StatusForbidden)
	}
	if e := liveEndpoints(t, d, d.in.ProjectA); len(e) != 1 || e[0].URL != d.hook || e[0].PausedAt != nil || e[0].Secret != secret {
		t.Fatalf("a refused request changed the endpoint: %+v", e)
	}

	// Another project's endpoint is not found.
	b.do(http.MethodGet, page, nil).Want(t, 404)
	b.do(http.MethodPost, page+"update", url.Values{"csrf": {tokenB}, "url": {d.hook}, "event_types": {"*"}}).Want(t, 404)
	b.do(http.MethodPost, page+"pause", url.Values{"csrf": {tokenB}}).Want(t, 404)
	b.do(http.MethodPost, page+"delete", url.Values{"csrf": {tokenB}}).Want(t, 404)
	b.do(http.MethodGet, "/dashboard/endpoints/", nil).WantNot(t, id)
	a.do(http.MethodGet, "/dashboard/endpoints/ep_nosuchendpoint/", nil).Want(t, 404)

	// Refusals of the actions, on the page.
	wantShown(t, a.do(http.MethodPost, page+"resume", form()), http.StatusConflict, "the endpoint is not paused")
	wantShown(t, a.do(http.MethodPost, page+"replay", form()), 400, "Nothing was replayed: since: is required")
	wantShown(t, a.do(http.MethodPost, page+"replay", form("since", "yesterday")), 400, "since: is not a date and time")
	wantShown(t, a.do(http.MethodPost, page+"replay", form("since", "2026-11-24T12:00", "until", "2026-11-24T11:00")), 400, "until: must be after since", `value="2026-11-24T11:00"`)
	wantShown(t, a.do(http.MethodPost, page+"replay", form("since", "2026-11-24T12:00", "event_types", "nope.*")), 400, `"nope.*" matches no event type`)
	wantShown(t, a.do(http.MethodPost, page+"replay", form("since", "2026-11-24T00:00")), 200, `<span id="replayed-count">0</span> events queued`)

	// Rotation: the new secret once, the old one signing for the grace.
	rotated := a.do(http.MethodPost, page+"rotate-secret", form())
	e := liveEndpoints(t, d, d.in.ProjectA)[0]
	if e.Secret == secret || e.PreviousSecret != secret || e.PreviousSecretUntil == nil {
		t.Fatalf("not rotated: %+v", e)
	}
	wantShown(t, rotated, 200, `<code id="new-secret">`+e.Secret+`</code>`,
		"keeps signing beside it until "+e.PreviousSecretUntil.UTC().Format("2006-01-02 15:04:05 UTC"))
	if strings.Contains(shown(rotated), secret) {
		t.Fatal("the old secret is shown")
	}
	a.do(http.MethodGet, page, nil).WantNot(t, e.Secret)

	// Paused: a banner on every page, linking to the endpoint; resumed: gone.
	banner := `id="banner-` + id + `"`
	a.do(http.MethodGet, "/dashboard/notifications/", nil).WantNot(t, banner)
	if p := a.do(http.MethodPost, page+"pause", form()); p.Code != http.StatusSeeOther || p.Header.Get("Location") != page+"?done=paused" {
		t.Fatalf("pause: %d %v", p.Code, p.Header)
	}
	for _, path := range []string{"/dashboard/notifications/", "/dashboard/settings/", "/dashboard/checkouts/", "/dashboard/activity/", "/dashboard/endpoints/", page} {
		wantShown(t, a.do(http.MethodGet, path, nil), 200, banner, "Endpoint <strong>all payments</strong> is paused since 2026-11-24 12:00:00 UTC: 0 deliveries waiting.",
			`<a href="/dashboard/endpoints/`+id+`/">Resume</a>`)
	}
	b.do(http.MethodGet, "/dashboard/notifications/", nil).WantNot(t, banner)
	a.do(http.MethodGet, page, nil).Want(t, 200, `<span class="badge st-paused">paused</span> since 2026-11-24 12:00:00 UTC (paused from this project)`, `id="resume"`)
	if p := a.do(http.MethodPost, page+"resume", form()); p.Code != http.StatusSeeOther {
		t.Fatalf("resume: %d %s", p.Code, p.Body)
	}
	a.do(http.MethodGet, "/dashboard/notifications/", nil).WantNot(t, banner)

	// A test event: a test.webhook delivery, listed on the page.
	if p := a.do(http.MethodPost, page+"test", form()); p.Code != http.StatusSeeOther || p.Header.Get("Location") != page+"?done=test#deliveries" {
		t.Fatalf("test: %d %v", p.Code, p.Header)
	}
	a.do(http.MethodGet, page+"?done=test", nil).Want(t, 200, "A test.webhook event is queued", "<td>test.webhook</td>", `<dd id="ep-waiting">1</dd>`)
	// Its row links to its notification's page, which shows it.
	n, err := d.in.Server.DB().Client.Notification.Query().Where(notification.EndpointIDNotNil()).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	a.do(http.MethodGet, page, nil).Want(t, 200, `<a href="/dashboard/notifications/`+n.UUID+`/">`)
	a.do(http.MethodGet, "/dashboard/notifications/"+n.UUID+"/", nil).Want(t, 200, n.UUID, "test.webhook", d.hook, "Webhook-Signature")

	if p := a.do(http.MethodPost, page+"delete", form()); p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/endpoints/?done=deleted" {
		t.Fatalf("delete: %d %v", p.Code, p.Header)
	}
	a.do(http.MethodGet, "/dashboard/endpoints/?done=deleted", nil).Want(t, 200, "The endpoint is deleted", "The project has no webhook endpoint.")
	a.do(http.MethodGet, page, nil).Want(t, 404)
	if n := len(liveEndpoints(t, d, d.in.ProjectA)); n != 0 {
		t.Fatalf("%d endpoints after the delete", n)
	}
}

// TestDashboardEndpointReplayCapped: a replay of more than
// endpoint.MaxReplay events queues that many, says where the rest starts
// and fills the form with it; sent again, the form queues the rest.
func TestDashboardEndpointReplayCapped(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		testDashboardEndpointReplayCapped(t, newDash(t, liveDatabase(t, dialect)))
	})
}

func testDashboardEndpointReplayCapped(t *testing.T, d *dash) {
	ctx := context.Background()
	db := d.in.Server.DB().Client
	publish := func(n int) {
		t.Helper()
		if err := store.WithTx(ctx, db, func(tx *entdb.Tx) error {
			for range n {
				id := uuid.NewString()
				if err := d.in.Server.Endpoints().Publish(ctx, tx, d.in.Server.Notifier().Queue, endpoint.Event{
					Project: d.in.ProjectA, UUID: id, Type: "checkout.payment.completed", Service: "checkout", Ref: "chk_1",
					Fields: checkoutFields("checkout.payment.completed", id),
				}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	publish(endpoint.MaxReplay) // at 12:00, before the endpoint: logged, not delivered
	d.clock.Advance(5 * time.Minute)
	publish(1) // at 12:05

	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	created := a.do(http.MethodPost, "/dashboard/endpoints/", url.Values{"csrf": {token}, "url": {d.hook}, "event_types": {"checkout.*"}})
	created.Want(t, 200, "shown only this once")
	page := "/dashboard/endpoints/" + endpointIDShown.FindStringSubmatch(created.Body)[1] + "/"
	first := a.do(http.MethodPost, page+"replay", url.Values{"csrf": {token}, "since": {"2026-11-24T00:00"}})
	wantShown(t, first, 200, fmt.Sprintf(`<span id="replayed-count">%d</span> events queued`, endpoint.MaxReplay),
		`the rest starts at <span id="next-since">2026-11-24 12:05:00 UTC</span>`, `id="replay-since" value="2026-11-24T12:05:00"`)
	rest := a.do(http.MethodPost, page+"replay", url.Values{"csrf": {token}, "since": {"2026-11-24T12:05:00"}})
	wantShown(t, rest, 200, `<span id="replayed-count">1</span> event queued`)
	rest.WantNot(t, "next-since")
	if n, err := db.Notification.Query().Where(notification.EndpointIDNotNil()).Count(ctx); err != nil || n != endpoint.MaxReplay+1 {
		t.Fatalf("%d deliveries stored (%v), want %d", n, err, endpoint.MaxReplay+1)
	}
}

// TestDashboardEndpointTestQuota: a test event beyond the project's test
// webhooks of the day is refused with 429 and the quota's reason, on the
// endpoint's page.
func TestDashboardEndpointTestQuota(t *testing.T) {
	t.Parallel()
	d := newDash(t, func(c *server.Config) { c.Limits.TestEvents = 1 })
	a := d.user(t)
	_, token := a.signIn(d.emailA, password)
	created := a.do(http.MethodPost, "/dashboard/endpoints/", url.Values{"csrf": {token}, "url": {d.hook}, "event_types": {"*"}})
	created.Want(t, 200, "shown only this once")
	page := "/dashboard/endpoints/" + endpointIDShown.FindStringSubmatch(created.Body)[1] + "/"
	if p := a.do(http.MethodPost, page+"test", url.Values{"csrf": {token}}); p.Code != http.StatusSeeOther {
		t.Fatalf("the first test: %d %s", p.Code, p.Body)
	}
	wantShown(t, a.do(http.MethodPost, page+"test", url.Values{"csrf": {token}}), http.StatusTooManyRequests,
		`<p class="error" id="action-error" role="alert">test webhooks: this project may send 1 a day and has sent them; retry in`)
}
