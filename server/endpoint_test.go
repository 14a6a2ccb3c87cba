package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/mail/mailtest"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/dashboard"
)

// delivered is one request an endpoint received.
type delivered struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
	Secret  string            `json:"secret"`
	// Now is the receiver's clock, Unix seconds.
	Now int64 `json:"now"`
}

// endpointReceiver records what reaches it and answers 204.
type endpointReceiver struct {
	mu  sync.Mutex
	got []delivered
}

func (r *endpointReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	d := delivered{Headers: map[string]string{}, Body: string(b)}
	for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "x-service-signature"} {
		if v := req.Header.Get(h); v != "" {
			d.Headers[h] = v
		}
	}
	r.mu.Lock()
	r.got = append(r.got, d)
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *endpointReceiver) take() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// paymentFields is a payload of a checkout or deposit payment event (type
// like "checkout.payment.completed") as the invoice reactor builds it,
// with uuid id: what the event catalogue's schema asks.
func paymentFields(typ, id string) []payload.Field {
	parts := strings.Split(typ, ".")
	stage := parts[len(parts)-1]
	invoiceStatus := "pending"
	if stage == "completed" {
		invoiceStatus = "paid"
	}
	fs := []payload.Field{
		payload.String("event_type", typ), payload.String("uuid", id), payload.String("payment_id", "chk_1"),
		payload.String("payment_status", stage), payload.String("invoice_status", invoiceStatus),
	}
	if parts[0] == "checkout" {
		fs = append(fs, payload.String("value", "10.00"))
	}
	fs = append(fs, payload.String("currency", "USD"), payload.String("paid_coin", "btc"),
		payload.String("paid_amount", "0.0001"), payload.String("paid_amount_fiat", "10.00"))
	if stage == "completed" {
		fs = append(fs, payload.String("received_amount", "0.000099"), payload.String("received_amount_fiat", "9.90"))
	}
	return append(fs, payload.String("txid_in", "ab12"), payload.Int("confirmations", 3))
}

// verifyWithLibrary has the standardwebhooks npm package verify each
// delivery with its secret, as a merchant's receiver would, and returns the
// payload types it verified, in order.
func verifyWithLibrary(t *testing.T, ds []delivered) []string {
	t.Helper()
	node := needSDKs(t) // clients/sdkcompat holds standardwebhooks too
	in, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "verify_delivery.cjs")
	cmd.Dir = sdkDir
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("standardwebhooks refused a delivery: %v\n%s", err, out)
	}
	var types []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ok" {
			t.Fatalf("standardwebhooks: %q", line)
		}
		types = append(types, f[2])
	}
	return types
}

// endpointEnv is a test server delivering by hand (RunDue) on a manual
// clock, with a receiver (h) that project A's endpoints may point at
// (hook).
type endpointEnv struct {
	in   *servertest.Instance
	clk  *clock.Manual
	hook string
}

func newEndpointEnv(t *testing.T, d store.Dialect, h http.Handler, mutate ...func(*server.Config)) *endpointEnv {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e := &endpointEnv{clk: clock.NewManual(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)), hook: srv.URL + "/hook"}
	e.in = servertest.Start(t, d, append(mutate, func(c *server.Config) {
		c.ManualDelivery = true
		c.Now = e.clk.Now
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(e.hook, servertest.A)...)
	})...)
	return e
}

// runDue makes the attempts due now.
func (e *endpointEnv) runDue(t *testing.T) {
	t.Helper()
	if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// publish publishes a payment event of type typ of project A and returns
// its uuid.
func (e *endpointEnv) publish(t *testing.T, typ string) string {
	t.Helper()
	ctx := context.Background()
	evID := uuid.NewString()
	if err := store.WithTx(ctx, e.in.Server.DB().Client, func(tx *entdb.Tx) error {
		return e.in.Server.Endpoints().Publish(ctx, tx, e.in.Server.Notifier().Queue, endpoint.Event{
			Project: e.in.ProjectA, UUID: evID, Type: typ, Service: strings.Split(typ, ".")[0], Ref: "chk_1",
			Fields: paymentFields(typ, evID),
		})
	}); err != nil {
		t.Fatal(err)
	}
	return evID
}

// TestEndpoints: a project's endpoint is created, listed, changed and
// deleted over REST, with errors that name the parameter and no access to
// another project's; a published event reaches every endpoint whose filter
// matches (and is recorded in the event log), signed with the endpoint's
// secret under the Standard Webhooks headers, which the standardwebhooks
// npm package verifies unmodified; the test delivery ignores the filter; a
// rotated secret signs beside the new one during its grace; a deleted
// endpoint receives nothing more.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rcv := &endpointReceiver{}
			e := newEndpointEnv(t, d, rcv)
			in, clk, hookURL := e.in, e.clk, e.hook
			runDue := func() { t.Helper(); e.runDue(t) }
			publish := func(typ string) string { t.Helper(); return e.publish(t, typ) }

			// Refusals name what is wrong.
			for _, c := range []struct{ body, want string }{
				{`{"url": "http://10.0.0.1/hook", "event_types": ["*"]}`, "url"},
				{`{"url": "` + hookURL + `", "event_types": []}`, "event_types"},
				{`{"url": "` + hookURL + `", "event_types": ["checkout..payment"]}`, "empty segment"},
				{`{"url": "` + hookURL + `", "event_types": ["Checkout.*"]}`, "lowercase"},
				{`{"url": "` + hookURL + `", "event_types": ["chekout.*"]}`, "matches no event type"},
				{`{"url": "` + hookURL + `", "event_types": ["checkout.payment.confirmd"]}`, "matches no event type"},
				{`{"url": "` + hookURL + `", "event_types": ["*"], "max_per_second": 5000}`, "max_per_second"},
			} {
				r := in.PostJSON(t, "/endpoint/create/", c.body, in.KeyA)
				if r.Code != 400 || !strings.Contains(string(r.Body), c.want) {
					t.Errorf("create %s: %d %s; want 400 naming %s", c.body, r.Code, r.Body, c.want)
				}
			}
			// Project B may not use A's private exception.
			if r := in.PostJSON(t, "/endpoint/create/", `{"url": "`+hookURL+`", "event_types": ["*"]}`, in.KeyB); r.Code != 400 {
				t.Errorf("B with A's private endpoint: %d %s", r.Code, r.Body)
			}

			r := in.PostJSON(t, "/endpoint/create/", `{"url": "`+hookURL+`", "event_types": ["checkout.*", "checkout.*"], "description": "orders"}`, in.KeyA)
			if r.Code != 200 {
				t.Fatalf("create: %d %s", r.Code, r.Body)
			}
			ep, _ := r.JSON["endpoint"].(map[string]any)
			secret, _ := r.JSON["secret"].(string)
			id, _ := ep["endpoint_id"].(string)
			if !strings.HasPrefix(id, endpoint.IDPrefix) || !strings.HasPrefix(secret, "whsec_") || ep["status"] != "active" ||
				fmt.Sprint(ep["event_types"]) != "[checkout.*]" || ep["description"] != "orders" {
				t.Fatalf("created %s", r.Body)
			}
			if l := in.Get(t, "/endpoint/list/", nil, in.KeyA); l.Code != 200 || !strings.Contains(string(l.Body), id) || strings.Contains(string(l.Body), secret) {
				t.Fatalf("list: %d %s", l.Code, l.Body)
			}
			if g := in.Get(t, "/endpoint/get/", url.Values{"endpoint_id": {id}}, in.KeyB); g.Code != 404 {
				t.Fatalf("B reads A's endpoint: %d %s", g.Code, g.Body)
			}
			if l := in.Get(t, "/endpoint/list/", nil, in.KeyB); l.Code != 200 || strings.Contains(string(l.Body), id) {
				t.Fatalf("B's list: %d %s", l.Code, l.Body)
			}
			u := in.PostJSON(t, "/endpoint/update/", `{"endpoint_id": "`+id+`", "event_types": ["*.payment.completed"]}`, in.KeyA)
			if u.Code != 200 || !strings.Contains(string(u.Body), `*.payment.completed`) || !strings.Contains(string(u.Body), `"orders"`) {
				t.Fatalf("update: %d %s", u.Code, u.Body)
			}

			// Two events: the endpoint wants the completed one only.
			publish("checkout.payment.pending")
			completed := publish("checkout.payment.completed")
			tr := in.PostJSON(t, "/endpoint/test/", `{"endpoint_id": "`+id+`"}`, in.KeyA)
			if tr.Code != 200 {
				t.Fatalf("test: %d %s", tr.Code, tr.Body)
			}
			runDue()
			got := rcv.take()
			if len(got) != 2 {
				t.Fatalf("%d deliveries, want the completed event and the test", len(got))
			}
			for i := range got {
				got[i].Secret, got[i].Now = secret, clk.Now().Unix()
				if got[i].Headers["content-type"] != "application/json" || got[i].Headers["x-service-signature"] != "" {
					t.Fatalf("delivery headers %v", got[i].Headers)
				}
			}
			// Deliveries are concurrent: in no particular order.
			if types := verifyWithLibrary(t, got); !slices.Equal(slices.Sorted(slices.Values(types)), []string{"checkout.payment.completed", "test.webhook"}) {
				t.Fatalf("verified types %v", types)
			}
			body := got[0].Body
			if !strings.Contains(body, `"type":"checkout.payment.completed"`) {
				body = got[1].Body
			}
			var env endpoint.Envelope
			want, _ := payload.JSON(paymentFields("checkout.payment.completed", completed))
			if err := json.Unmarshal([]byte(body), &env); err != nil || env.Type != "checkout.payment.completed" ||
				string(env.Data) != string(want) {
				t.Fatalf("delivery body %s (%v)", body, err)
			}
			// Both events are in the log; the deliveries carry the endpoint
			// and the event.
			db := in.Server.DB().Client
			if n, _ := db.Event.Query().Count(ctx); n != 2 {
				t.Fatalf("%d events logged, want 2", n)
			}
			ns, err := db.Notification.Query().Where(notification.EndpointIDNotNil()).All(ctx)
			if err != nil || len(ns) != 2 {
				t.Fatalf("endpoint notifications %d %v", len(ns), err)
			}
			for _, n := range ns {
				if n.Status != notification.StatusAcknowledged || (n.Event != "test.webhook" && n.EventID == nil) {
					t.Fatalf("notification %+v", n)
				}
			}

			// Rotation: the old secret also signs during the grace.
			rot := in.PostJSON(t, "/endpoint/rotate-secret/", `{"endpoint_id": "`+id+`", "grace_seconds": 3600}`, in.KeyA)
			newSecret, _ := rot.JSON["secret"].(string)
			if rot.Code != 200 || newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") {
				t.Fatalf("rotate: %d %s", rot.Code, rot.Body)
			}
			clk.Advance(2 * time.Second) // past the secrets' cache
			publish("deposit.payment.completed")
			runDue()
			got = rcv.take()
			if len(got) != 1 || len(strings.Fields(got[0].Headers["webhook-signature"])) != 2 {
				t.Fatalf("after the rotation: %+v", got)
			}
			got[0].Now = clk.Now().Unix()
			withOld, withNew := got[0], got[0]
			withOld.Secret, withNew.Secret = secret, newSecret
			verifyWithLibrary(t, []delivered{withOld, withNew})

			// Deleted: nothing more; gone from the API.
			if r := in.PostJSON(t, "/endpoint/delete/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 200 {
				t.Fatalf("delete: %d %s", r.Code, r.Body)
			}
			if r := in.PostJSON(t, "/endpoint/delete/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 404 {
				t.Fatalf("delete twice: %d %s", r.Code, r.Body)
			}
			publish("checkout.payment.completed")
			runDue()
			if got := rcv.take(); len(got) != 0 {
				t.Fatalf("a deleted endpoint received %d deliveries", len(got))
			}
		})
	}
}

// TestEndpointMatches: the filter patterns.
func TestEndpointMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, t string
		want bool
	}{
		{"*", "checkout.payment.confirmed", true},
		{"*", "test.webhook", true},
		{"checkout.*", "checkout.payment.confirmed", true},
		{"checkout.*", "checkout.refund.pending", true},
		{"checkout.*", "deposit.payment.confirmed", false},
		{"checkout.*", "checkout", false},
		{"*.payment.completed", "subscription.payment.completed", true},
		{"*.payment.completed", "subscription.payment.confirmed", false},
		{"*.payment.completed", "payment.completed", false},
		{"checkout.payment.confirmed", "checkout.payment.confirmed", true},
		{"checkout.payment", "checkout.payment.confirmed", false},
		{"checkout.*.confirmed", "checkout.payment.confirmed", true},
		{"checkout.*.confirmed", "checkout.refund.payment.confirmed", false},
	} {
		if got := endpoint.Matches(c.p, c.t); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.p, c.t, got, c.want)
		}
	}
}

// TestEndpointPause: an endpoint whose every attempt has failed for 24
// hours is paused by the monitor (not before): its deliveries wait,
// unattempted, and events published meanwhile wait too; resuming delivers
// them all, each once, each window extended by the time it waited. A
// merchant pauses and resumes over REST; resuming an active endpoint is a
// 400-class refusal.
func TestEndpointPause(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var down sync.Mutex
			failing := true
			var order []string
			receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				down.Lock()
				defer down.Unlock()
				if failing {
					http.Error(w, "down", http.StatusServiceUnavailable)
					return
				}
				b, _ := io.ReadAll(r.Body)
				var env endpoint.Envelope
				_ = json.Unmarshal(b, &env)
				var data struct{ UUID string }
				_ = json.Unmarshal(env.Data, &data)
				order = append(order, data.UUID)
				w.WriteHeader(http.StatusNoContent)
			})
			smtp := mailtest.Start(t, mailtest.Options{TLS: true})
			env := newEndpointEnv(t, d, receiver, withEmail(smtp))
			in, clk, hookURL := env.in, env.clk, env.hook
			db := in.Server.DB().Client
			if _, err := dashboard.CreateUser(ctx, db, in.ProjectA, "owner@shop.example", "a long password 1", clk.Now()); err != nil {
				t.Fatal(err)
			}
			runDue := func() { t.Helper(); env.runDue(t) }
			check := func() int {
				t.Helper()
				n, err := in.Server.EndpointMonitor().Check(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			r := in.PostJSON(t, "/endpoint/create/", `{"url": "`+hookURL+`", "event_types": ["*"]}`, in.KeyA)
			ep, _ := r.JSON["endpoint"].(map[string]any)
			id, _ := ep["endpoint_id"].(string)
			if r.Code != 200 || id == "" {
				t.Fatalf("create: %d %s", r.Code, r.Body)
			}
			publish := func() string { t.Helper(); return env.publish(t, "checkout.payment.completed") }
			first := publish()
			runDue() // fails at 12:00: failing since then
			e, _ := db.Endpoint.Query().Only(ctx)
			if e.FailingSince == nil || !e.FailingSince.Equal(clk.Now()) {
				t.Fatalf("failing_since %v", e.FailingSince)
			}
			// Retried on its schedule, failing, for 23 hours: not paused.
			for range 23 {
				clk.Advance(time.Hour)
				runDue()
			}
			if n := check(); n != 0 {
				t.Fatalf("paused after 23 hours of failures")
			}
			second := publish()
			clk.Advance(time.Hour)
			runDue()
			if n := check(); n != 1 {
				t.Fatalf("not paused after 24 hours of failures")
			}
			g := in.Get(t, "/endpoint/get/", url.Values{"endpoint_id": {id}}, in.KeyA)
			if !strings.Contains(string(g.Body), `"status":"paused"`) || !strings.Contains(string(g.Body), `"paused_reason":"failing"`) {
				t.Fatalf("paused endpoint: %s", g.Body)
			}
			// The project's users are emailed, once.
			runMail(t, in)
			if got := smtp.Wait(t, 1); len(got) != 1 || !strings.Contains(string(got[0].Raw), strings.TrimSuffix(strings.TrimPrefix(hookURL, "http://"), "/hook")) || got[0].To[0] != "owner@shop.example" {
				t.Fatalf("paused email: %+v", got)
			}
			if n := check(); n != 0 {
				t.Fatal("paused twice")
			}
			// The operator is told: the gauge its alert reads, the counter.
			m := in.Get(t, "/metrics", nil, in.OperatorKey(t))
			for _, line := range []string{"payhook_webhook_endpoints_paused_failing 1\n", `payhook_webhook_endpoint_pauses_total{reason="failing"} 1` + "\n"} {
				if !strings.Contains(string(m.Body), line) {
					t.Fatalf("/metrics lacks %q", line)
				}
			}
			pausedAt := clk.Now()
			third := publish() // stored paused
			ns, _ := db.Notification.Query().Where(notification.EndpointIDNotNil()).All(ctx)
			if len(ns) != 3 {
				t.Fatalf("%d deliveries", len(ns))
			}
			attempts := map[string]int{}
			for _, n := range ns {
				if n.Status != notification.StatusPaused || n.NextAttemptAt != nil {
					t.Fatalf("while paused: %s %s next %v", n.UUID, n.Status, n.NextAttemptAt)
				}
				attempts[n.UUID] = n.Attempts
			}
			// Three days pass: nothing is attempted, nothing expires.
			clk.Advance(72 * time.Hour)
			runDue()
			check()
			for _, n := range ns {
				cur, _ := db.Notification.Get(ctx, n.ID)
				if cur.Status != notification.StatusPaused || cur.Attempts != attempts[n.UUID] {
					t.Fatalf("attempted or expired while paused: %+v", cur)
				}
			}
			// Resumed (the receiver is back): everything, oldest first.
			down.Lock()
			failing = false
			down.Unlock()
			if r := in.PostJSON(t, "/endpoint/resume/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 200 || !strings.Contains(string(r.Body), `"status":"active"`) {
				t.Fatalf("resume: %d %s", r.Code, r.Body)
			}
			for _, n := range ns {
				cur, _ := db.Notification.Get(ctx, n.ID)
				from := pausedAt
				if n.CreatedAt.After(from) {
					from = n.CreatedAt
				}
				if want := n.ExpiresAt.Add(clk.Now().Sub(from)); !cur.ExpiresAt.Equal(want) {
					t.Fatalf("window of %s ends %v, want %v (extended by the wait)", n.UUID, cur.ExpiresAt, want)
				}
			}
			runDue()
			// Due together, claimed oldest first; attempted in parallel, so
			// they may arrive in any order (docs/decisions.md).
			if !slices.Equal(slices.Sorted(slices.Values(order)), slices.Sorted(slices.Values([]string{first, second, third}))) {
				t.Fatalf("delivered %v, want each of %v once", order, []string{first, second, third})
			}
			if r := in.PostJSON(t, "/endpoint/resume/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 400 || !strings.Contains(string(r.Body), "not paused") {
				t.Fatalf("resume an active endpoint: %d %s", r.Code, r.Body)
			}
			// The merchant pauses by hand: a new event waits.
			if r := in.PostJSON(t, "/endpoint/pause/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 200 || !strings.Contains(string(r.Body), `"paused_reason":"merchant"`) {
				t.Fatalf("pause: %d %s", r.Code, r.Body)
			}
			clk.Advance(2 * time.Second) // past the endpoints' cache
			publish()
			runDue()
			if len(order) != 3 {
				t.Fatalf("a paused endpoint received %v", order)
			}
			m = in.Get(t, "/metrics", nil, in.OperatorKey(t))
			for _, line := range []string{"payhook_webhook_endpoints_paused_failing 0\n", `payhook_webhook_endpoint_pauses_total{reason="merchant"} 1` + "\n"} {
				if !strings.Contains(string(m.Body), line) {
					t.Fatalf("/metrics lacks %q", line)
				}
			}
		})
	}
}

// TestEndpointReplay: a replay sends an endpoint, again, the events of a
// time range its filter and the request's types match, as new deliveries
// (new ids) carrying the same payloads; the range's bounds hold; a missing
// since is a 400. GET /events/ pages through the log in order from a
// cursor, filtered by type, the project's own only.
func TestEndpointReplay(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			rcv := &endpointReceiver{}
			env := newEndpointEnv(t, d, rcv)
			in, clk, hookURL := env.in, env.clk, env.hook
			r := in.PostJSON(t, "/endpoint/create/", `{"url": "`+hookURL+`", "event_types": ["checkout.*", "deposit.*"]}`, in.KeyA)
			ep, _ := r.JSON["endpoint"].(map[string]any)
			id, _ := ep["endpoint_id"].(string)
			if r.Code != 200 {
				t.Fatalf("create: %d %s", r.Code, r.Body)
			}
			publish := func(typ string) string {
				t.Helper()
				evID := env.publish(t, typ)
				clk.Advance(time.Minute)
				return evID
			}
			early := publish("checkout.payment.pending")  // 12:00
			c1 := publish("checkout.payment.completed")   // 12:01
			publish("subscription.payment.completed")     // 12:02, not in the filter
			d1 := publish("deposit.payment.completed")    // 12:03
			late := publish("checkout.payment.completed") // 12:04
			env.runDue(t)
			first := rcv.take()
			if len(first) != 4 {
				t.Fatalf("%d first deliveries, want 4", len(first))
			}
			body := func(ds []delivered) []string {
				var ids []string
				for _, d := range ds {
					var env endpoint.Envelope
					var data struct{ UUID string }
					if json.Unmarshal([]byte(d.Body), &env) != nil || json.Unmarshal(env.Data, &data) != nil {
						t.Fatalf("body %s", d.Body)
					}
					ids = append(ids, data.UUID)
				}
				return slices.Sorted(slices.Values(ids))
			}
			// 12:01 to 12:04, completed payments only.
			rp := in.PostJSON(t, "/endpoint/replay/", `{"endpoint_id": "`+id+`", "since": "2026-11-28T12:01:00Z", "until": "2026-11-28T12:04:00Z", "event_types": ["*.payment.completed"]}`, in.KeyA)
			if rp.Code != 200 || rp.JSON["replayed"] != float64(2) {
				t.Fatalf("replay: %d %s", rp.Code, rp.Body)
			}
			env.runDue(t)
			again := rcv.take()
			if got, want := body(again), slices.Sorted(slices.Values([]string{c1, d1})); !slices.Equal(got, want) {
				t.Fatalf("replayed %v, want %v (not %s, %s)", got, want, early, late)
			}
			for _, a := range again {
				for _, f := range first {
					if a.Headers["webhook-id"] == f.Headers["webhook-id"] {
						t.Fatalf("a replay reused delivery id %s", a.Headers["webhook-id"])
					}
				}
			}
			// The event log, pulled in pages from a cursor.
			var pulled []string
			after := ""
			for range 10 {
				l := in.Get(t, "/events/", url.Values{"after": {after}, "limit": {"2"}}, in.KeyA)
				if l.Code != 200 {
					t.Fatalf("events: %d %s", l.Code, l.Body)
				}
				evs, _ := l.JSON["events"].([]any)
				for _, e := range evs {
					m := e.(map[string]any)
					var data struct{ UUID string }
					if err := json.Unmarshal([]byte(m["payload"].(string)), &data); err != nil || data.UUID != m["uuid"] {
						t.Fatalf("event %v: payload %v", m, err)
					}
					pulled = append(pulled, m["uuid"].(string))
				}
				next, _ := l.JSON["next_cursor"].(string)
				if len(evs) == 0 {
					if next != after {
						t.Fatalf("an empty page moved the cursor from %q to %q", after, next)
					}
					break
				}
				after = next
			}
			if len(pulled) != 5 || pulled[0] != early || pulled[1] != c1 || pulled[3] != d1 || pulled[4] != late {
				t.Fatalf("pulled %v", pulled)
			}
			if l := in.Get(t, "/events/", url.Values{"event_types": {"deposit.*"}}, in.KeyA); !strings.Contains(string(l.Body), d1) || strings.Contains(string(l.Body), c1) {
				t.Fatalf("events of deposit.*: %s", l.Body)
			}
			if l := in.Get(t, "/events/", nil, in.KeyB); l.Code != 200 || strings.Contains(string(l.Body), c1) {
				t.Fatalf("B's events: %d %s", l.Code, l.Body)
			}
			if l := in.Get(t, "/events/", url.Values{"after": {"x1"}}, in.KeyA); l.Code != 400 || !strings.Contains(string(l.Body), "after") {
				t.Fatalf("a bad cursor: %d %s", l.Code, l.Body)
			}
			if r := in.PostJSON(t, "/endpoint/replay/", `{"endpoint_id": "`+id+`"}`, in.KeyA); r.Code != 400 || !strings.Contains(string(r.Body), "since") {
				t.Fatalf("replay without since: %d %s", r.Code, r.Body)
			}
			if r := in.PostJSON(t, "/endpoint/replay/", `{"endpoint_id": "`+id+`", "since": "2026-11-28T12:00:00Z"}`, in.KeyB); r.Code != 404 {
				t.Fatalf("B replays A's endpoint: %d %s", r.Code, r.Body)
			}
		})
	}
}

// TestEndpointsReceivePaymentEvents: a checkout paid on the devnet sends
// its webhooks to the notify_url as before and the same events (the same
// uuids and payloads, as JSON) to the project's endpoint whose filter
// matches, where the standardwebhooks package verifies them; the event log
// holds each once; project B's endpoint receives nothing of A's.
func TestEndpointsReceivePaymentEvents(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			rcvA, rcvB := &endpointReceiver{}, &endpointReceiver{}
			hookA, hookB := httptest.NewServer(rcvA), httptest.NewServer(rcvB)
			t.Cleanup(hookA.Close)
			t.Cleanup(hookB.Close)
			e := newMerchantEnv(t, d, func(c *server.Config) {
				c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints,
					servertest.AllowPrivate(hookA.URL+"/hook", servertest.A)[0], servertest.AllowPrivate(hookB.URL+"/hook", servertest.B)[0])
			})
			mk := func(key, url, filter string) string {
				t.Helper()
				r := e.in.PostJSON(t, "/endpoint/create/", `{"url": "`+url+`", "event_types": ["`+filter+`"]}`, key)
				if r.Code != 200 {
					t.Fatalf("create: %d %s", r.Code, r.Body)
				}
				s, _ := r.JSON["secret"].(string)
				return s
			}
			secretA := mk(e.in.KeyA, hookA.URL+"/hook", "checkout.*")
			mk(e.in.KeyB, hookB.URL+"/hook", "*")
			c := newExceptionCheckout(t, e)
			hooks := c.pay(t, e, c.quote)
			e.mine(t, "btc", 3)
			more, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			hooks = append(hooks, more...)
			got := rcvA.take()
			if len(hooks) == 0 || len(got) != len(hooks) {
				t.Fatalf("%d notify_url webhooks, %d endpoint deliveries", len(hooks), len(got))
			}
			for i := range got {
				got[i].Secret, got[i].Now = secretA, clock.Now().Unix()
			}
			types := verifyWithLibrary(t, got)
			var want []string
			for _, h := range hooks {
				want = append(want, h.event)
			}
			if !slices.Equal(slices.Sorted(slices.Values(types)), slices.Sorted(slices.Values(want))) {
				t.Fatalf("endpoint got %v, notify_url %v", types, want)
			}
			if n, _ := e.in.Server.DB().Client.Event.Query().Count(ctx); n != len(hooks) {
				t.Fatalf("%d events logged, want %d", n, len(hooks))
			}
			if b := rcvB.take(); len(b) != 0 {
				t.Fatalf("B's endpoint received %d of A's events", len(b))
			}

		})
	}
}

// TestEndpointThrottle: an endpoint's max_per_second holds its deliveries
// to that rate on the injected clock (a second's worth at once, then one
// per 1/rate), with the rest left stored and due, while another endpoint
// of the same project and host gets every event at once; lifting the limit
// delivers the rest at once.
func TestEndpointThrottle(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var mu sync.Mutex
			got := map[string]int{}
			receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got[r.URL.Query().Get("to")]++
				mu.Unlock()
				w.WriteHeader(http.StatusNoContent)
			})
			env := newEndpointEnv(t, d, receiver)
			in, clk := env.in, env.clk
			create := func(body string) string {
				t.Helper()
				r := in.PostJSON(t, "/endpoint/create/", body, in.KeyA)
				ep, _ := r.JSON["endpoint"].(map[string]any)
				id, _ := ep["endpoint_id"].(string)
				if r.Code != 200 || id == "" {
					t.Fatalf("create: %d %s", r.Code, r.Body)
				}
				return id
			}
			slow := create(`{"url": "` + env.hook + `?to=slow", "event_types": ["*"], "max_per_second": 2}`)
			create(`{"url": "` + env.hook + `?to=fast", "event_types": ["*"]}`)
			want := func(step string, slowN, fastN int) {
				t.Helper()
				env.runDue(t)
				mu.Lock()
				defer mu.Unlock()
				if got["slow"] != slowN || got["fast"] != fastN {
					t.Fatalf("%s: slow endpoint got %d, fast %d; want %d and %d", step, got["slow"], got["fast"], slowN, fastN)
				}
			}
			for range 7 {
				env.publish(t, "checkout.payment.completed")
			}
			want("at once", 2, 7)
			want("again at the same instant", 2, 7)
			clk.Advance(500 * time.Millisecond)
			want("half a second later", 3, 7)
			clk.Advance(500 * time.Millisecond)
			want("a second later", 4, 7)
			clk.Advance(time.Hour) // the bucket holds a second's worth at most
			want("an hour later", 6, 7)
			n, err := in.Server.DB().Client.Notification.Query().
				Where(notification.StatusEQ(notification.StatusPending)).Count(ctx)
			if err != nil || n != 1 {
				t.Fatalf("pending deliveries: %d, %v; want the slow endpoint's last, stored", n, err)
			}
			// Lifting the limit: what is left, and what comes, goes at once.
			if r := in.PostJSON(t, "/endpoint/update/", `{"endpoint_id": "`+slow+`", "max_per_second": 0}`, in.KeyA); r.Code != 200 {
				t.Fatalf("update: %d %s", r.Code, r.Body)
			}
			for range 3 {
				env.publish(t, "checkout.payment.completed")
			}
			want("without a limit", 10, 10)
		})
	}
}
