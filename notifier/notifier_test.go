package notifier

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/receiver"
)

var testKey *rsa.PrivateKey

// TestMain makes the shared signing key and fails the run when a goroutine
// started by a test outlives it.
func TestMain(m *testing.M) {
	var err error
	if testKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// got is one request a receiver saw.
type got struct {
	method, url, contentType, signature, idempotencyKey string
	body                                                []byte
	header                                              http.Header
}

// receiverServer is a real HTTP receiver whose answers the test scripts.
type receiverServer struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []got
	reply   func(n int, r *http.Request) (int, string) // n counts from 1
	arrived chan got
}

func newReceiver(t *testing.T, reply func(n int, r *http.Request) (int, string)) *receiverServer {
	rs := &receiverServer{reply: reply, arrived: make(chan got, 100)}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body)) // the scripted reply may verify it
		g := got{method: r.Method, url: "http://" + r.Host + r.RequestURI, contentType: r.Header.Get("Content-Type"), signature: r.Header.Get(signer.SignatureHeader), idempotencyKey: r.Header.Get("Idempotency-Key"), body: body, header: r.Header.Clone()}
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, g)
		n := len(rs.reqs)
		rs.mu.Unlock()
		rs.arrived <- g
		code, text := rs.reply(n, r)
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *receiverServer) requests() []got {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]got(nil), rs.reqs...)
}

func ok(int, *http.Request) (int, string) { return 200, `{"status":"ok"}` }

type fixture struct {
	db    *store.DB
	clock *clock.Manual
	n     *Notifier
	d     *Dispatcher
	keyID int64
	hook  string
}

func newFixture(t testing.TB, d store.Dialect, hook string, mutate ...func(*Config)) *fixture {
	t.Helper()
	db := storetest.Open(t, d)
	clk := clock.NewManual(t0)
	cfg := Config{
		Delivery:     Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(hook)},
		Now:          clk.Now,
		Signers:      []signer.Signer{signer.NewRSASigner(testKey)},
		PollInterval: 10 * time.Millisecond,
		StopTimeout:  5 * time.Second,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	n, err := New(db, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return &fixture{db: db, clock: clk, n: n, d: n.Dispatcher, keyID: testOwner, hook: hook}
}

// testOwner owns the fixtures' messages.
const testOwner = 7

// allow returns the operator exceptions that let testOwner's messages
// reach the endpoints.
func allow(endpoints ...string) []string {
	out := make([]string, len(endpoints))
	for i, e := range endpoints {
		out[i] = fmt.Sprintf("%d=%s", testOwner, e)
	}
	return out
}

// testAddressIn is the payment address the test payloads speak of.
const testAddressIn = "bc1qjcnhwsw976enmkvdlnyas0lcpc5fcee2gkl64h"

// testMessage is what a test says of a message; the fixture turns it into
// a Message as a producer would, with its payload encoded once.
type testMessage struct {
	UUID, CallbackURL, Status, TxidIn, Sequence string
	Transport                                   payload.Transport
	Signing                                     Signing
	// FirstOfSequence is Subject.FirstOfSequence.
	FirstOfSequence bool
}

// envelope is a callback-like message to the fixture's hook (with its own
// query, order=42, echoed in POST bodies).
func (f *fixture) envelope(status string, tr payload.Transport) testMessage {
	return testMessage{CallbackURL: f.hook + "?order=42", Status: status, TxidIn: "a1b2c3", Transport: tr, Signing: Signing{Scheme: signer.SchemeRSASHA256}}
}

func (f *fixture) message(t testing.TB, e testMessage) Message {
	t.Helper()
	if e.UUID == "" {
		e.UUID = uuid.NewString()
	}
	req, err := payload.Encode(e.CallbackURL, e.Transport, []payload.Field{
		payload.String("uuid", e.UUID),
		payload.String("address_in", testAddressIn),
		payload.Object("address_out", `{"bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu":1}`),
		payload.String("txid_in", e.TxidIn),
		payload.Int("confirmations", 1),
		payload.Int("required_confirmations", 1),
		payload.String("payment_status", e.Status),
		payload.String("coin", "btc"),
		{Name: "value_coin", Kind: payload.KindNumber, Text: "0.0015"},
	}, []payload.Param{{Key: "order", Value: "42"}})
	if err != nil {
		t.Fatal(err)
	}
	return Message{
		UUID:    e.UUID,
		Owner:   f.keyID,
		Subject: Subject{Service: "address", Event: e.Status, Ref: testAddressIn, Topic: "btc", Sequence: e.Sequence, FirstOfSequence: e.FirstOfSequence},
		Request: req,
		Signing: e.Signing,
	}
}

func (f *fixture) enqueue(t *testing.T, e testMessage) *entdb.Notification {
	t.Helper()
	row, err := f.n.Queue.EnqueueNow(context.Background(), f.message(t, e))
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func (f *fixture) run(t *testing.T) {
	t.Helper()
	if err := f.d.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) reload(t *testing.T, row *entdb.Notification) *entdb.Notification {
	t.Helper()
	r, err := f.db.Client.Notification.Get(context.Background(), row.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (f *fixture) attempts(t *testing.T, row *entdb.Notification) []*entdb.DeliveryAttempt {
	t.Helper()
	at, err := f.db.Client.DeliveryAttempt.Query().Where(deliveryattempt.NotificationID(row.ID)).Order(entdb.Asc(deliveryattempt.FieldNumber)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func eachDialect(t *testing.T, fn func(t *testing.T, d store.Dialect)) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

func verifier(t *testing.T) *receiver.Verifier {
	return receiver.NewVerifier(&testKey.PublicKey)
}

// TestTransportsDeliverSignedBytes is the delivery suite every transport
// passes: first attempt immediate, the receiver verifies the signature, the
// request has the transport's shape.
func TestTransportsDeliverSignedBytes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportForm, payload.TransportJSON} {
			t.Run(tr.String(), func(t *testing.T) {
				var verified bool
				var mu sync.Mutex
				v := verifier(t)
				rs := newReceiver(t, func(_ int, r *http.Request) (int, string) {
					_, err := v.Verify(r)
					mu.Lock()
					verified = err == nil
					mu.Unlock()
					if err != nil {
						return 401, err.Error()
					}
					return 200, "ok"
				})
				f := newFixture(t, d, rs.URL+"/hook")
				row := f.enqueue(t, f.envelope("confirmed", tr))
				f.run(t)
				reqs := rs.requests()
				if len(reqs) != 1 {
					t.Fatalf("%d requests, want 1 immediate attempt", len(reqs))
				}
				mu.Lock()
				if !verified {
					t.Fatal("receiver could not verify the signature")
				}
				mu.Unlock()
				r := reqs[0]
				want := map[payload.Transport]struct{ method, ct string }{
					payload.TransportGET:  {"GET", ""},
					payload.TransportForm: {"POST", "application/x-www-form-urlencoded"},
					payload.TransportJSON: {"POST", "application/json"},
				}[tr]
				wantMethod, wantCT := want.method, want.ct
				if r.method != wantMethod || !strings.HasPrefix(r.contentType, wantCT) {
					t.Fatalf("%s %q, want %s %q", r.method, r.contentType, wantMethod, wantCT)
				}
				if !strings.Contains(r.url, "order=42") {
					t.Fatalf("custom parameter left the URL: %s", r.url)
				}
				if !strings.Contains(r.url+string(r.body), row.UUID) {
					t.Fatal("uuid not in the request")
				}
				if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.NextAttemptAt != nil || got.Attempts != 1 {
					t.Fatalf("notification %s attempts %d next %v", got.Status, got.Attempts, got.NextAttemptAt)
				}
				at := f.attempts(t, row)
				if len(at) != 1 || at[0].Outcome != deliveryattempt.OutcomeAcknowledged || at[0].ResponseStatus == nil || *at[0].ResponseStatus != 200 || at[0].ResponseBody != "ok" || at[0].FinishedAt == nil {
					t.Fatalf("attempt log %+v", at)
				}
			})
		}
	})
}

// TestRetryScheduleSameBytes drives a failing receiver through the retry
// schedule on the test clock.
func TestRetryScheduleSameBytes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n < 6 {
				return 500, "down"
			}
			return 200, `{"status":"ok","extra":1}`
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("pending", payload.TransportJSON))
		f.run(t) // attempt 1, immediate
		for i, delay := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour} {
			got := f.reload(t, row)
			if got.Status != notification.StatusRetrying || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(f.clock.Now().Add(delay)) {
				t.Fatalf("after attempt %d: %s next %v, want retrying at +%s", i+1, got.Status, got.NextAttemptAt, delay)
			}
			f.clock.Advance(delay - time.Second)
			f.run(t)
			if n := len(rs.requests()); n != i+1 {
				t.Fatalf("attempt started %s early", time.Second)
			}
			f.clock.Advance(time.Second)
			f.run(t)
			if n := len(rs.requests()); n != i+2 {
				t.Fatalf("%d requests after the delay, want %d", n, i+2)
			}
		}
		reqs := rs.requests()
		for _, r := range reqs[1:] {
			if r.url != reqs[0].url || !bytes.Equal(r.body, reqs[0].body) || r.signature != reqs[0].signature || r.signature == "" {
				t.Fatal("a retry sent different bytes")
			}
			// Every attempt names the notification as its idempotency key.
			if r.idempotencyKey != row.UUID || reqs[0].idempotencyKey != row.UUID {
				t.Fatalf("Idempotency-Key %q, want the notification's uuid %s", r.idempotencyKey, row.UUID)
			}
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.Attempts != 6 {
			t.Fatalf("%s after %d attempts", got.Status, got.Attempts)
		}
		f.clock.Advance(10 * time.Hour)
		f.run(t)
		if len(rs.requests()) != 6 {
			t.Fatal("an acknowledged notification was attempted again")
		}
		at := f.attempts(t, row)
		if len(at) != 6 || at[0].Outcome != deliveryattempt.OutcomeFailed || at[0].Error == "" || at[5].Outcome != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("attempt log %+v", at)
		}
		if at[0].NextAttemptAt == nil || !at[0].NextAttemptAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("attempt 1 scheduled %v", at[0].NextAttemptAt)
		}
	})
}

// finishedObserver records the notifications reported finished.
type finishedObserver struct {
	mu       sync.Mutex
	finished []string
}

func (o *finishedObserver) AttemptFinished(string, string, time.Duration) {}

func (o *finishedObserver) NotificationFinished(status string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.finished = append(o.finished, status)
}

func (o *finishedObserver) get() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.finished)
}

// lastEvent is the latest delivery event of row.
func (f *fixture) lastEvent(row *entdb.Notification) (*entdb.DeliveryEvent, error) {
	return f.db.Client.DeliveryEvent.Query().Where(deliveryevent.NotificationID(row.ID)).Order(entdb.Desc(deliveryevent.FieldID)).First(context.Background())
}

// TestExpiryAfterWindow keeps a receiver failing until the window closes.
func TestExpiryAfterWindow(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(int, *http.Request) (int, string) { return 503, "" })
		obs := &finishedObserver{}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.Observer = obs })
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		for i := 0; i < 100; i++ {
			got := f.reload(t, row)
			if got.Status == notification.StatusFailed {
				break
			}
			f.clock.Set(*got.NextAttemptAt)
			f.run(t)
		}
		got := f.reload(t, row)
		want := len(expectedAttempts(schedule.Default()))
		if got.Status != notification.StatusFailed || got.NextAttemptAt != nil || got.Attempts != want || len(rs.requests()) != want {
			t.Fatalf("%s after %d attempts (%d requests), want failed after %d", got.Status, got.Attempts, len(rs.requests()), want)
		}
		f.clock.Advance(24 * time.Hour)
		f.run(t)
		if len(rs.requests()) != want {
			t.Fatal("a failed notification was attempted")
		}
		if n := len(f.attempts(t, row)); n != want {
			t.Fatalf("history has %d attempts, want %d", n, want)
		}
		if got := obs.get(); !slices.Equal(got, []string{"failed"}) {
			t.Fatalf("observer told of finished notifications %v, want one failed", got)
		}
		last, err := f.lastEvent(row)
		if err != nil || last.DeliveryStatus != "failed" {
			t.Fatalf("last event %+v %v", last, err)
		}
	})
}

// TestExpiryWhileWaiting: a notification whose window closed while it
// waited for its next attempt (payhook was down) fails when it is next
// claimed, without another request, and is reported as finished.
func TestExpiryWhileWaiting(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(int, *http.Request) (int, string) { return 503, "" })
		obs := &finishedObserver{}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.Observer = obs })
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		if got := f.reload(t, row); got.Status != notification.StatusRetrying || got.NextAttemptAt == nil {
			t.Fatalf("after a failed first attempt: %s, next %v", got.Status, got.NextAttemptAt)
		}
		// Down past the whole delivery window.
		f.clock.Set(f.reload(t, row).ExpiresAt.Add(time.Hour))
		f.run(t)
		got := f.reload(t, row)
		if got.Status != notification.StatusFailed || got.NextAttemptAt != nil || got.Attempts != 1 {
			t.Fatalf("%s after %d attempts, next %v; want failed after 1", got.Status, got.Attempts, got.NextAttemptAt)
		}
		if n := len(rs.requests()); n != 1 {
			t.Fatalf("%d requests, want only the first attempt", n)
		}
		last, err := f.lastEvent(row)
		if err != nil || last.Kind != deliveryevent.KindExpired || last.DeliveryStatus != "failed" {
			t.Fatalf("last event %+v %v, want expired and failed", last, err)
		}
		if got := obs.get(); !slices.Equal(got, []string{"failed"}) {
			t.Fatalf("observer told of finished notifications %v, want one failed", got)
		}
	})
}

// expectedAttempts lists attempt start times under p with instant attempts.
func expectedAttempts(p schedule.Policy) []time.Time {
	at := []time.Time{t0}
	for {
		next, ok := p.Next(t0, at[len(at)-1], len(at))
		if !ok {
			return at
		}
		at = append(at, next)
	}
}

// TestInFlightAttemptFinishingAfterDeadline: an attempt that started inside
// the window and is acknowledged after it acknowledges the notification.
func TestInFlightAttemptFinishingAfterDeadline(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		release := make(chan struct{})
		var f *fixture
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			<-release
			return 200, "OK\n"
		})
		f = newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Policy = schedule.Policy{Delays: []time.Duration{47 * time.Hour}, Window: 48 * time.Hour}
		})
		row := f.enqueue(t, f.envelope("completed", payload.TransportForm))
		f.run(t)
		f.clock.Set(t0.Add(47 * time.Hour))
		done := make(chan error, 1)
		go func() { done <- f.d.RunDue(context.Background()) }()
		<-rs.arrived // attempt 1
		<-rs.arrived // attempt 2, now in flight
		f.clock.Set(t0.Add(49 * time.Hour))
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got := f.reload(t, row)
		if got.Status != notification.StatusAcknowledged {
			t.Fatalf("status %s, want acknowledged", got.Status)
		}
	})
}

// TestInterruptedAttemptIsRecordedAndRetried: the process dies after
// claiming (the attempt row is in flight); another instance takes the row
// over when the lease expires.
func TestInterruptedAttemptIsRecordedAndRetried(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		res, err := f.d.claim(context.Background(), &capacity{free: 10, perHostMax: 16, perHost: map[string]int{}, sequences: map[string]bool{}, failingRoom: 10, newRoom: 10}, nil, nil, nil) // ... and the process dies
		claims := res.claims
		if err != nil || len(claims) != 1 {
			t.Fatalf("claim: %v %d", err, len(claims))
		}
		second, err := New(f.db, Config{Signers: []signer.Signer{signer.NewRSASigner(testKey)}, Delivery: Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(rs.URL + "/hook")}, Now: f.clock.Now}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(second.Stop)
		if err := second.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if len(rs.requests()) != 0 {
			t.Fatal("a leased row was taken over before its lease expired")
		}
		f.clock.Advance(second.Dispatcher.cfg.Lease + time.Second)
		if err := second.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		at := f.attempts(t, row)
		if len(at) != 2 || at[0].Outcome != deliveryattempt.OutcomeInterrupted || at[0].Error == "" || at[1].Outcome != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("attempts %+v", at)
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.Attempts != 2 {
			t.Fatalf("%s after %d", got.Status, got.Attempts)
		}
	})
}

// TestRestartResumesQueuedWork: notifications stored by one instance are
// delivered by the next.
func TestRestartResumesQueuedWork(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return 200, "ok"
		})
		f := newFixture(t, d, rs.URL+"/hook")
		a := f.enqueue(t, f.envelope("pending", payload.TransportGET))
		f.run(t) // fails, retry scheduled
		b := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.n.Stop() // "restart": b is queued, a is retrying

		next, err := New(f.db, Config{Signers: []signer.Signer{signer.NewRSASigner(testKey)}, Delivery: Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(rs.URL + "/hook")}, Now: f.clock.Now}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(next.Stop)
		f.clock.Advance(time.Minute)
		if err := next.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, row := range []*entdb.Notification{a, b} {
			if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
				t.Fatalf("%s: %s after restart", row.Event, got.Status)
			}
		}
	})
}

// TestBlockedDestinationIsLoggedAndRetried: a loopback callback without an
// operator exception is refused at every attempt.
func TestBlockedDestinationIsLoggedAndRetried(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		f := newFixture(t, d, "http://127.0.0.1:1/never-allowed")
		e := f.envelope("confirmed", payload.TransportJSON)
		e.CallbackURL = rs.URL + "/hook" // loopback, not allowed
		row := f.enqueue(t, e)
		f.run(t)
		f.clock.Advance(time.Minute)
		f.run(t)
		if len(rs.requests()) != 0 {
			t.Fatal("a blocked destination was reached")
		}
		at := f.attempts(t, row)
		if len(at) != 2 || at[0].Outcome != deliveryattempt.OutcomeBlocked || !strings.Contains(at[0].Error, "127.0.0.1") || at[0].NextAttemptAt == nil {
			t.Fatalf("attempts %+v", at)
		}
		if got := f.reload(t, row); got.Status != notification.StatusRetrying {
			t.Fatalf("status %s", got.Status)
		}
	})
}

// TestAllowedEndpointOfAnotherOwnerIsBlocked: an operator exception is
// its owner's only. Another owner's notification to exactly that endpoint
// is refused at every attempt, though it was stored (as it is when the
// exception moved to another owner on a restart), and the owner's own
// notification to it is delivered.
func TestAllowedEndpointOfAnotherOwnerIsBlocked(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook")
		f.keyID = testOwner + 1
		other := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		f.run(t)
		if len(rs.requests()) != 0 {
			t.Fatal("another owner's notification reached the endpoint")
		}
		at := f.attempts(t, other)
		if len(at) != 1 || at[0].Outcome != deliveryattempt.OutcomeBlocked || !strings.Contains(at[0].Error, "127.0.0.1 is a loopback address") {
			t.Fatalf("attempts %+v", at)
		}
		f.keyID = testOwner
		own := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		f.run(t)
		if got := f.reload(t, own); got.Status != notification.StatusAcknowledged || len(rs.requests()) != 1 {
			t.Fatalf("the owner's notification: %s, %d requests", got.Status, len(rs.requests()))
		}
	})
}

// TestDeadEndpointDoesNotDelayHealthyOne: attempts to a hanging endpoint
// hold at most PerHost workers; a healthy endpoint is served meanwhile.
func TestDeadEndpointDoesNotDelayHealthyOne(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		hang := make(chan struct{})
		dead := newReceiver(t, func(int, *http.Request) (int, string) { <-hang; return 500, "" })
		healthy := newReceiver(t, ok)
		f := newFixture(t, d, healthy.URL+"/hook", func(c *Config) {
			c.AllowPrivateEndpoints = append(c.AllowPrivateEndpoints, allow(dead.URL+"/hook")...)
			c.Workers, c.PerHost = 4, 2
		})
		t.Cleanup(func() { close(hang) })
		for range 10 {
			e := f.envelope("pending", payload.TransportGET)
			e.CallbackURL = dead.URL + "/hook"
			f.enqueue(t, e)
		}
		f.start(t)
		<-dead.arrived
		<-dead.arrived
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		defer unsubscribe()
		good := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		select {
		case <-healthy.arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("the healthy endpoint waited behind the dead one")
		}
		if n := len(dead.requests()); n > 2 {
			t.Fatalf("%d concurrent attempts to the dead endpoint, bound is 2", n)
		}
		// Nothing beyond the bound is even leased: the other 8 stay
		// unclaimed, so a crash now would interrupt only 2 attempts.
		leased, err := f.db.Client.Notification.Query().
			Where(notification.LeaseUntilNotNil(), notification.Host(strings.TrimPrefix(dead.URL, "http://"))).
			Count(context.Background())
		if err != nil || leased > 2 {
			t.Fatalf("%d notifications leased, bound is 2 (%v)", leased, err)
		}
		timeout := time.After(10 * time.Second)
		for f.reload(t, good).Status != notification.StatusAcknowledged {
			select {
			case <-changed: // an event of this owner was recorded
			case <-timeout:
				t.Fatal("healthy notification not acknowledged")
			}
		}
	})
}

// TestAnyResponseBodyIsRecorded: a receiver answering bytes that are not
// valid UTF-8 (or hold NUL) still gets its attempt logged and the
// notification rescheduled; PostgreSQL text refuses such bytes as they are.
func TestAnyResponseBodyIsRecorded(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(int, *http.Request) (int, string) { return 500, "\xe9chec\x00 \xff" })
		f := newFixture(t, d, rs.URL+"/hook")
		ok := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		f.run(t)
		at := f.attempts(t, ok)
		if len(at) != 1 || at[0].Outcome != deliveryattempt.OutcomeFailed || at[0].ResponseStatus == nil || *at[0].ResponseStatus != 500 {
			t.Fatalf("attempts %+v", at)
		}
		if got := f.reload(t, ok); got.Status != notification.StatusRetrying || got.LeaseUntil != nil {
			t.Fatalf("notification %s, lease %v", got.Status, got.LeaseUntil)
		}
	})
}

// start runs the notifier's background parts until the test ends.
func (f *fixture) start(t testing.TB) {
	t.Helper()
	if err := f.n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAcknowledgedAttemptsLogAtDebug: at the default level (info) a failed
// attempt is logged and an acknowledged one is not (the attempt log has
// it); at debug both are.
func TestAcknowledgedAttemptsLogAtDebug(t *testing.T) {
	t.Parallel()
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n < 2 { // requests are counted from 1
				return 500, "down"
			}
			return 200, `{"status":"ok"}`
		})
		f := newFixture(t, store.SQLite, rs.URL+"/hook")
		var logs lockedBuffer
		f.d.logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))
		row := f.enqueue(t, f.envelope("pending", payload.TransportJSON))
		f.run(t) // attempt 1 fails
		f.clock.Advance(time.Minute)
		f.run(t) // attempt 2 is acknowledged
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
			t.Fatalf("level %s: %s", level, got.Status)
		}
		out := logs.String()
		failed := strings.Contains(out, `msg="delivery attempt"`) && strings.Contains(out, "outcome=failed")
		acked := strings.Contains(out, "outcome=acknowledged")
		if !failed || acked != (level == slog.LevelDebug) {
			t.Errorf("level %s: failed attempt logged %v, acknowledged logged %v:\n%s", level, failed, acked, out)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
