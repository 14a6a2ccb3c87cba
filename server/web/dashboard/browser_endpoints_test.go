package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/webtest"
)

// endpointReceiver is a merchant's endpoint: it answers 500 while down,
// and otherwise verifies each delivery's Standard Webhooks signature with
// the endpoint's secret, records the event's uuid and answers 204.
type endpointReceiver struct {
	now func() time.Time

	mu      sync.Mutex
	down    bool
	secret  string
	refused int
	got     []string // data.uuid of each delivery acknowledged
	bad     []string // why a delivery did not verify
}

func (rc *endpointReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.down {
		rc.refused++
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "database is down", http.StatusInternalServerError)
		return
	}
	// Standard Webhooks' headers under the names receiver reads.
	for std, ours := range map[string]string{"webhook-id": receiver.WebhookIDHeader, "webhook-timestamp": receiver.WebhookTimestampHeader,
		"webhook-signature": receiver.WebhookSignatureHeader} {
		r.Header.Set(ours, r.Header.Get(std))
	}
	body, err := receiver.NewWebhookVerifier([]string{rc.secret}, receiver.WithClock(rc.now)).Verify(r)
	if err != nil {
		rc.bad = append(rc.bad, err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var env struct {
		Data struct{ UUID string } `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Data.UUID == "" {
		rc.bad = append(rc.bad, fmt.Sprintf("body %s: %v", body, err))
	}
	rc.got = append(rc.got, env.Data.UUID)
	w.WriteHeader(http.StatusNoContent)
}

func (rc *endpointReceiver) set(fn func(rc *endpointReceiver)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fn(rc)
}

// take returns the uuids acknowledged since the last take, sorted, and
// fails t on a delivery that did not verify.
func (rc *endpointReceiver) take(t *testing.T) []string {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		t.Fatalf("deliveries that did not verify: %v", rc.bad)
	}
	out := slices.Sorted(slices.Values(rc.got))
	rc.got = nil
	return out
}

// publishEvent publishes a merchant event of type typ of project A (as a
// payment's reactor does) and returns its uuid.
func (d *dash) publishEvent(t *testing.T, typ string) string {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	if err := store.WithTx(ctx, d.in.Server.DB().Client, func(tx *entdb.Tx) error {
		return d.in.Server.Endpoints().Publish(ctx, tx, d.in.Server.Notifier().Queue, endpoint.Event{
			Project: d.in.ProjectA, UUID: id, Type: typ, Service: "checkout", Ref: "chk_1", Fields: checkoutFields(typ, id),
		})
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// checkoutFields is the payload of a checkout payment event (typ like
// "checkout.payment.completed") with uuid id, as the event catalogue's
// schema asks.
func checkoutFields(typ, id string) []payload.Field {
	stage := typ[strings.LastIndex(typ, ".")+1:]
	invoiceStatus := "pending"
	if stage == "completed" {
		invoiceStatus = "paid"
	}
	fs := []payload.Field{
		payload.String("event_type", typ), payload.String("uuid", id), payload.String("payment_id", "chk_1"),
		payload.String("payment_status", stage), payload.String("invoice_status", invoiceStatus), payload.String("value", "10.00"),
		payload.String("currency", "USD"), payload.String("paid_coin", "btc"), payload.String("paid_amount", "0.0001"),
		payload.String("paid_amount_fiat", "10.00"),
	}
	if stage == "completed" {
		fs = append(fs, payload.String("received_amount", "0.000099"), payload.String("received_amount_fiat", "9.90"))
	}
	return append(fs, payload.String("txid_in", "ab12"), payload.Int("confirmations", 3))
}

// text reads the text of the element sel once the page shows it.
func text(sel string, dst *string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)), webtest.Into(dst, chromedp.Text(chromedp.CSS(sel))))
}

// TestBrowserDashboardEndpoints: a user creates a webhook endpoint in a
// real browser and sees its secret once; the receiver is down, so the
// first deliveries fail and the page says the endpoint is failing since
// then; a day later the monitor pauses it, and the user, signing in
// again, finds the banner with the deliveries waiting; the receiver is fixed, the user follows the
// banner to the endpoint and resumes it: the waiting deliveries arrive,
// signed with the secret the page showed, and the banner is gone; a replay
// of a range from the page queues the events of that range, which arrive
// again. Neither page scrolls sideways on a phone.
func TestBrowserDashboardEndpoints(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		rc := &endpointReceiver{down: true}
		srv := httptest.NewServer(rc)
		t.Cleanup(srv.Close)
		hook := srv.URL + "/payhook-events"
		d := newDash(t, liveDatabase(t, dialect), func(c *server.Config) {
			c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(hook, servertest.A)...)
			c.Delivery.Window = 0 // the default, longer than the pause: the deliveries wait, not expire
		})
		rc.now = d.clock.Now
		// One dialect's run writes the screenshots.
		shot := func(name string) chromedp.Action[chromedp.Void] { return chromedp.Steps() }
		if dialect == store.SQLite {
			shot = webtest.Shot
		}
		testBrowserDashboardEndpoints(t, d, rc, hook, shot)
	})
}

func testBrowserDashboardEndpoints(t *testing.T, d *dash, rc *endpointReceiver, hook string, shot func(string) chromedp.Action[chromedp.Void]) {
	ctx := webtest.Browser(t)
	var id, secret string
	if err := chromedp.Do(ctx,
		signIn(d.in.BaseURL, d.emailA),
		chromedp.Click(chromedp.CSS(`a[href="/dashboard/endpoints/"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#no-endpoints`)),
		chromedp.SendKeys(chromedp.CSS(`#ep-url`), hook),
		chromedp.SendKeys(chromedp.CSS(`#ep-description`), "order service"),
		chromedp.SetValue(chromedp.CSS(`#ep-types`), "checkout.*"),
		chromedp.Click(chromedp.CSS(`#create-endpoint`)),
		text(`#new-secret`, &secret),
		text(`#ep-id`, &id),
	); err != nil {
		t.Fatalf("create an endpoint: %v", err)
	}
	stored, err := d.in.Server.Endpoints().Get(context.Background(), d.in.ProjectA, id)
	if err != nil || stored.Secret != secret || stored.URL != hook || strings.Join(stored.EventTypes, ",") != "checkout.*" {
		t.Fatalf("the endpoint %s shown with secret %q; stored %+v (%v)", id, secret, stored, err)
	}
	rc.set(func(rc *endpointReceiver) { rc.secret = secret })
	page := d.in.BaseURL + "/dashboard/endpoints/" + id + "/"

	// Three events, a minute apart, from 12:00; all three fail at 12:02.
	var events []string
	for i, typ := range []string{"checkout.payment.pending", "checkout.payment.confirmed", "checkout.payment.completed"} {
		if i > 0 {
			d.clock.Advance(time.Minute)
		}
		events = append(events, d.publishEvent(t, typ))
	}
	d.runDue(t)
	var status, waiting, listed string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		text(`#ep-status`, &status),
		text(`#ep-waiting`, &waiting),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/endpoints/"),
		text(`#endpoint-`+id, &listed),
	); err != nil {
		t.Fatalf("the failing endpoint: %v", err)
	}
	if status != "failing since 2026-11-24 12:02:00 UTC" || waiting != "3" || !strings.Contains(listed, "failing since 2026-11-24 12:02:00 UTC") ||
		!strings.Contains(listed, "never") || !strings.HasSuffix(strings.TrimSpace(listed), "3") {
		t.Fatalf("after 3 failed deliveries: status %q, waiting %q; listed as %q", status, waiting, listed)
	}
	var refused int
	rc.set(func(rc *endpointReceiver) { refused = rc.refused })
	if refused != 3 {
		t.Fatalf("the receiver refused %d deliveries, want 3", refused)
	}

	// A day and an hour of failures later, the monitor pauses it.
	d.clock.Advance(25 * time.Hour)
	if n, err := d.in.Server.EndpointMonitor().Check(context.Background()); err != nil || n != 1 {
		t.Fatalf("the monitor paused %d endpoints (%v), want 1", n, err)
	}
	banner := `#banner-` + id
	var bannerText string
	if err := chromedp.Do(ctx,
		// The next day: the session has ended, the user signs in again
		// and lands on the notifications, under the banner.
		signIn(d.in.BaseURL, d.emailA),
		text(banner, &bannerText),
		chromedp.Click(chromedp.CSS(banner+` a`)),
		chromedp.WaitVisible(chromedp.CSS(`#resume`)),
		text(`#ep-status`, &status),
		shot("dashboard-endpoint-paused.png"),
	); err != nil {
		t.Fatalf("the paused endpoint's banner: %v", err)
	}
	if bannerText != "Endpoint order service is paused since 2026-11-25 13:02:00 UTC: 3 deliveries waiting. Resume" {
		t.Fatalf("banner %q", bannerText)
	}
	if status != "paused since 2026-11-25 13:02:00 UTC (every attempt failed for too long)" {
		t.Fatalf("paused endpoint's status %q", status)
	}

	// The receiver is fixed; resumed from the page, the waiting three
	// arrive.
	rc.set(func(rc *endpointReceiver) { rc.down = false })
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#resume`)),
		chromedp.WaitVisible(chromedp.CSS(`#done`)),
		chromedp.WaitNotPresent(chromedp.CSS(banner)),
		chromedp.WaitVisible(chromedp.CSS(`#pause`)),
	); err != nil {
		t.Fatalf("resume: %v", err)
	}
	d.runDue(t)
	if got, want := rc.take(t), slices.Sorted(slices.Values(events)); !slices.Equal(got, want) {
		t.Fatalf("after the resume the receiver got %v, want %v", got, want)
	}
	var success string
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		text(`#ep-waiting`, &waiting),
		text(`#ep-status`, &status),
		text(`#ep-last-success`, &success),
	); err != nil {
		t.Fatalf("the resumed endpoint: %v", err)
	}
	if waiting != "0" || status != "active" || success != "2026-11-25 13:02:00 UTC" {
		t.Fatalf("after the deliveries: waiting %q, status %q, last success %q", waiting, status, success)
	}

	// Replay 12:01 (included) to 12:02:30: the confirmed and completed
	// events, not the pending one.
	var count string
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#replay-since`), "2026-11-24T12:01"),
		chromedp.SetValue(chromedp.CSS(`#replay-until`), "2026-11-24T12:02:30"),
		chromedp.Click(chromedp.CSS(`#replay-send`)),
		text(`#replayed-count`, &count),
	); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if count != "2" {
		t.Fatalf("replayed %q events, want 2", count)
	}
	d.runDue(t)
	if got, want := rc.take(t), slices.Sorted(slices.Values(events[1:])); !slices.Equal(got, want) {
		t.Fatalf("the replay delivered %v, want %v", got, want)
	}
	var rows int
	if err := chromedp.Do(ctx,
		chromedp.Navigate(page),
		chromedp.WaitVisible(chromedp.CSS(`#delivery-list`)),
		webtest.Into(&rows, chromedp.Evaluate[int](`document.querySelectorAll("#delivery-list tr.delivery .st-acknowledged").length`)),
		shot("dashboard-endpoint.png"),
		chromedp.Navigate(d.in.BaseURL+"/dashboard/endpoints/"),
		text(`#endpoint-`+id, &listed),
		shot("dashboard-endpoints.png"),
	); err != nil {
		t.Fatalf("the deliveries: %v", err)
	}
	if rows != 5 || !strings.Contains(listed, "active") || !strings.Contains(listed, "2026-11-25 13:02:00 UTC") {
		t.Fatalf("%d deliveries acknowledged on the page, want 5; listed as %q", rows, listed)
	}
	// On a phone, neither page scrolls sideways (tables scroll in their
	// own box).
	if err := chromedp.Do(ctx, webtest.AtPhoneWidth()); err != nil {
		t.Fatal(err)
	}
	webtest.FitsWidth(t, ctx, d.in.BaseURL+"/dashboard/endpoints/", "#endpoints")
	webtest.FitsWidth(t, ctx, page, "#facts")
}
