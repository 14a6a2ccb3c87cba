package notifier

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/notifier/signer"
)

// resend asks for a resend of row as its owner and checks what it returns.
func (f *fixture) resend(t *testing.T, row *entdb.Notification) *entdb.Notification {
	t.Helper()
	got, err := f.n.Queue.Resend(context.Background(), f.keyID, row.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID != row.UUID || !got.Resend {
		t.Fatalf("resend returned %s with resend %v", got.UUID, got.Resend)
	}
	return got
}

// failByDeadline runs the clock past row's deadline so the next claim fails it,
// with only its first (failed) attempt made.
func (f *fixture) failByDeadline(t *testing.T, row *entdb.Notification) {
	t.Helper()
	f.clock.Set(f.reload(t, row).ExpiresAt.Add(time.Hour))
	f.run(t)
	if got := f.reload(t, row); got.Status != notification.StatusFailed || got.NextAttemptAt != nil {
		t.Fatalf("past its deadline: %s, next %v; want failed", got.Status, got.NextAttemptAt)
	}
}

// attemptEvents lists the attempt events of row, oldest first.
func (f *fixture) attemptEvents(t *testing.T, row *entdb.Notification) []*entdb.DeliveryEvent {
	t.Helper()
	evs, err := f.db.Client.DeliveryEvent.Query().
		Where(deliveryevent.NotificationID(row.ID), deliveryevent.KindEQ(deliveryevent.KindAttempt)).
		Order(entdb.Asc(deliveryevent.FieldID)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestResendWithinWindow: a resend of a retrying notification makes one
// attempt at once, with the same uuid and bytes and a signature made for
// that attempt; when it fails, the schedule continues from it and the
// deadline does not move.
func TestResendWithinWindow(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n < 3 {
				return 500, "down"
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = append(c.Signers, signer.NewWebhookSigner(signer.StaticSecrets("whsec_"+base64.StdEncoding.EncodeToString([]byte("project secret of 32 bytes......")))))
		})
		e := f.envelope("confirmed", payload.TransportJSON)
		e.Signing = Signing{Scheme: signer.SchemeWebhook, Key: "project:1"}
		row := f.enqueue(t, e)
		f.run(t) // attempt 1 fails: retrying, due in a minute
		before := f.reload(t, row)
		if before.Status != notification.StatusRetrying || !before.NextAttemptAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after attempt 1: %s next %v", before.Status, before.NextAttemptAt)
		}

		f.clock.Advance(30 * time.Second)
		asked := f.resend(t, row)
		if asked.Status != notification.StatusRetrying || !asked.NextAttemptAt.Equal(f.clock.Now()) || !asked.ExpiresAt.Equal(before.ExpiresAt) {
			t.Fatalf("resend: %s next %v expires %v; want retrying, due now, deadline %v", asked.Status, asked.NextAttemptAt, asked.ExpiresAt, before.ExpiresAt)
		}
		f.run(t)
		reqs := rs.requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want the resend's attempt at once", len(reqs))
		}
		if reqs[1].url != reqs[0].url || !bytes.Equal(reqs[1].body, reqs[0].body) || reqs[1].idempotencyKey != row.UUID {
			t.Fatal("the resend sent another request than the notification's")
		}
		if sameSignature(reqs[0].header, reqs[1].header) {
			t.Fatalf("the resend reused the first attempt's signature headers %v", reqs[1].header)
		}
		resent := f.clock.Now()
		got := f.reload(t, row)
		want := resent.Add(schedule.Default().Delays[1]) // attempt 2 failed: the schedule's second delay
		if got.Status != notification.StatusRetrying || got.Resend || got.Attempts != 2 || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(want) || !got.ExpiresAt.Equal(before.ExpiresAt) {
			t.Fatalf("after the resend's attempt: %s resend %v attempts %d next %v expires %v; want retrying at %v, deadline unchanged",
				got.Status, got.Resend, got.Attempts, got.NextAttemptAt, got.ExpiresAt, want)
		}
		// The first attempt's schedule (due at t0+1m) is gone: nothing is due
		// before the new one.
		f.clock.Set(want.Add(-time.Second))
		f.run(t)
		if n := len(rs.requests()); n != 2 {
			t.Fatalf("%d requests before the next scheduled attempt, want 2", n)
		}
		f.clock.Set(want)
		f.run(t)
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.Attempts != 3 || len(rs.requests()) != 3 {
			t.Fatalf("%s after %d attempts (%d requests), want acknowledged at the scheduled attempt 3", got.Status, got.Attempts, len(rs.requests()))
		}
		evs := f.attemptEvents(t, row)
		if len(evs) != 3 || evs[1].Attempt != 2 || evs[1].DeliveryStatus != "retrying" || evs[1].NextAttemptAt == nil || !evs[1].NextAttemptAt.Equal(want) {
			t.Fatalf("attempt events %+v", evs)
		}
	})
}

// sameSignature reports whether two requests carry the same values in every
// header that differs between signed attempts (those that are neither
// transport nor content headers).
func sameSignature(a, b http.Header) bool {
	n := 0
	for k := range a {
		switch k {
		case "Content-Type", "Content-Length", "User-Agent", "Accept-Encoding", "Idempotency-Key":
			continue
		}
		n++
		if strings.Join(a[k], ",") != strings.Join(b[k], ",") {
			return false
		}
	}
	return n > 0
}

// TestResendAfterDeadline: after the deadline each resend makes exactly one
// attempt; a failure leaves the notification failed with nothing scheduled,
// and an acknowledgement makes it acknowledged.
func TestResendAfterDeadline(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n < 4 {
				return 503, ""
			}
			return ok(n, nil)
		})
		obs := &finishedObserver{}
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.Observer = obs })
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		f.failByDeadline(t, row)
		deadline := f.reload(t, row).ExpiresAt

		for i := 2; i <= 3; i++ { // two resends, each failing
			f.clock.Advance(time.Hour)
			if asked := f.resend(t, row); asked.Status != notification.StatusFailed {
				t.Fatalf("resend changed the status to %s", asked.Status)
			}
			f.run(t)
			if n := len(rs.requests()); n != i {
				t.Fatalf("%d requests after resend %d, want exactly one more", n, i-1)
			}
			got := f.reload(t, row)
			if got.Status != notification.StatusFailed || got.NextAttemptAt != nil || got.Resend || got.LeaseUntil != nil || got.Attempts != i || !got.ExpiresAt.Equal(deadline) {
				t.Fatalf("after resend %d: %s next %v resend %v lease %v attempts %d expires %v", i-1, got.Status, got.NextAttemptAt, got.Resend, got.LeaseUntil, got.Attempts, got.ExpiresAt)
			}
			f.clock.Advance(24 * time.Hour)
			f.run(t)
			if n := len(rs.requests()); n != i {
				t.Fatalf("an automatic attempt followed a failed resend after the deadline (%d requests)", n)
			}
			if last, err := f.lastEvent(row); err != nil || last.Kind != deliveryevent.KindAttempt || last.Attempt != i || last.DeliveryStatus != "failed" || last.NextAttemptAt != nil {
				t.Fatalf("last event %+v %v", last, err)
			}
		}

		f.resend(t, row) // acknowledged this time
		f.run(t)
		got := f.reload(t, row)
		if got.Status != notification.StatusAcknowledged || got.NextAttemptAt != nil || got.Resend || got.Attempts != 4 || len(rs.requests()) != 4 {
			t.Fatalf("%s next %v resend %v after %d attempts (%d requests); want acknowledged after 4", got.Status, got.NextAttemptAt, got.Resend, got.Attempts, len(rs.requests()))
		}
		at := f.attempts(t, row)
		outcomes := make([]deliveryattempt.Outcome, len(at))
		for i, a := range at {
			outcomes[i] = a.Outcome
			if a.Number != i+1 || (a.Outcome != deliveryattempt.OutcomeAcknowledged && a.NextAttemptAt != nil && i > 0) {
				t.Fatalf("attempt %d: %+v", i+1, a)
			}
		}
		if len(at) != 4 || outcomes[3] != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("attempt log %v, want three failures then an acknowledgement", outcomes)
		}
		if last, err := f.lastEvent(row); err != nil || last.DeliveryStatus != "acknowledged" {
			t.Fatalf("last event %+v %v", last, err)
		}
		// Every time it left the queue: expired, two failed resends, acknowledged.
		if got := strings.Join(obs.get(), ","); got != "failed,failed,failed,acknowledged" {
			t.Fatalf("observer told of %s", got)
		}
	})
}

// TestResendAcknowledged: a resend of an acknowledged notification makes
// one attempt and leaves it acknowledged, failed or not, with no retry
// even inside the window.
func TestResendAcknowledged(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 2 {
				return 500, ""
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("completed", payload.TransportForm))
		f.run(t)
		for i, want := range []deliveryattempt.Outcome{deliveryattempt.OutcomeFailed, deliveryattempt.OutcomeAcknowledged} {
			f.clock.Advance(time.Hour)
			f.resend(t, row)
			f.run(t)
			f.clock.Advance(6 * time.Hour) // a retry would be due by now
			f.run(t)
			if n := len(rs.requests()); n != i+2 {
				t.Fatalf("%d requests after resend %d, want exactly one more", n, i+1)
			}
			got := f.reload(t, row)
			if got.Status != notification.StatusAcknowledged || got.NextAttemptAt != nil || got.Resend || got.Attempts != i+2 {
				t.Fatalf("after resend %d: %s next %v resend %v attempts %d", i+1, got.Status, got.NextAttemptAt, got.Resend, got.Attempts)
			}
			at := f.attempts(t, row)
			if at[i+1].Outcome != want {
				t.Fatalf("resend %d: outcome %s, want %s", i+1, at[i+1].Outcome, want)
			}
			evs := f.attemptEvents(t, row)
			if last := evs[len(evs)-1]; last.Attempt != i+2 || last.Outcome != string(want) || last.DeliveryStatus != "acknowledged" {
				t.Fatalf("resend %d: event %+v", i+1, last)
			}
		}
	})
}

// TestResendOwnerIsolation: another owner's uuid is not found, exactly as an
// unknown uuid, and nothing changes.
func TestResendOwnerIsolation(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(int, *http.Request) (int, string) { return 500, "" })
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		before := f.reload(t, row)
		ctx := context.Background()
		const other, unknown = 8, "5a0c4b4e-0000-4000-8000-000000000000"
		errOther := func(err error) string { return strings.ReplaceAll(err.Error(), row.UUID, "<uuid>") }
		errUnknown := func(err error) string { return strings.ReplaceAll(err.Error(), unknown, "<uuid>") }

		_, e1 := f.n.Queue.Resend(ctx, other, row.UUID)
		_, e2 := f.n.Queue.Resend(ctx, f.keyID, unknown)
		if !errors.Is(e1, ErrNotFound) || !errors.Is(e2, ErrNotFound) || errOther(e1) != errUnknown(e2) {
			t.Fatalf("resend: another owner's uuid %v, unknown uuid %v; want the same not-found error", e1, e2)
		}
		_, e1 = f.n.Queue.Get(ctx, other, row.UUID)
		_, e2 = f.n.Queue.Get(ctx, f.keyID, unknown)
		if !errors.Is(e1, ErrNotFound) || !errors.Is(e2, ErrNotFound) || errOther(e1) != errUnknown(e2) {
			t.Fatalf("get: another owner's uuid %v, unknown uuid %v; want the same not-found error", e1, e2)
		}
		if rows, next, err := f.n.Queue.List(ctx, other, ListFilter{}); err != nil || len(rows) != 0 || next != "" {
			t.Fatalf("another owner lists %d notifications (%v)", len(rows), err)
		}
		after := f.reload(t, row)
		if after.Resend || !after.NextAttemptAt.Equal(*before.NextAttemptAt) || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Fatalf("another owner's resend changed the notification: %+v", after)
		}
		f.run(t)
		if n := len(rs.requests()); n != 1 {
			t.Fatalf("%d requests, want only the first attempt", n)
		}
	})
}

// TestResendDuringAttempt: a resend asked while an attempt is in flight
// does not touch its lease; once that attempt is recorded, the resend's own
// attempt follows at once. Here the first attempt is acknowledged, so the
// resend's attempt is the one attempt of an acknowledged notification.
func TestResendDuringAttempt(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		release := make(chan struct{})
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				<-release
				return ok(n, nil)
			}
			return 500, ""
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		done := make(chan error, 1)
		go func() { done <- f.d.RunDue(context.Background()) }()
		<-rs.arrived // attempt 1 in flight
		leased := f.reload(t, row)
		asked := f.resend(t, row)
		if asked.NextAttemptAt == nil || !asked.NextAttemptAt.Equal(*leased.NextAttemptAt) || asked.LeaseUntil == nil || !asked.LeaseUntil.Equal(*leased.LeaseUntil) {
			t.Fatalf("a resend during an attempt moved its lease: next %v lease %v, want %v", asked.NextAttemptAt, asked.LeaseUntil, leased.LeaseUntil)
		}
		close(release)
		if err := <-done; err != nil { // RunDue claims what its attempts leave due
			t.Fatal(err)
		}
		if n := len(rs.requests()); n != 2 {
			t.Fatalf("%d requests, want the in-flight attempt and the resend's", n)
		}
		got := f.reload(t, row)
		if got.Status != notification.StatusAcknowledged || got.NextAttemptAt != nil || got.Resend || got.Attempts != 2 {
			t.Fatalf("%s next %v resend %v attempts %d; want acknowledged after 2 attempts", got.Status, got.NextAttemptAt, got.Resend, got.Attempts)
		}
		at := f.attempts(t, row)
		if len(at) != 2 || at[0].Outcome != deliveryattempt.OutcomeAcknowledged || at[0].NextAttemptAt == nil || at[1].Outcome != deliveryattempt.OutcomeFailed || at[1].NextAttemptAt != nil {
			t.Fatalf("attempt log %+v", at)
		}
	})
}

// TestConcurrentResends: resends asked at once, before an attempt starts,
// are all answered by that one attempt; none fails.
func TestConcurrentResends(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		f.failByDeadline(t, row)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.n.Queue.Resend(context.Background(), f.keyID, row.UUID)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		f.run(t)
		if n := len(rs.requests()); n != 2 {
			t.Fatalf("%d requests, want one attempt for the resends asked together", n)
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.Resend || got.NextAttemptAt != nil {
			t.Fatalf("%s resend %v next %v", got.Status, got.Resend, got.NextAttemptAt)
		}
	})
}

// second opens another notifier on f's database and clock, as a restarted
// or other instance would.
func (f *fixture) second(t *testing.T) *Notifier {
	t.Helper()
	n, err := New(f.db, Config{Signers: []signer.Signer{signer.NewRSASigner(testKey)}, Delivery: Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(f.hook)}, Now: f.clock.Now}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	return n
}

// TestResendSurvivesRestart: a resend asked before a restart is attempted
// by the next instance.
func TestResendSurvivesRestart(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		f.failByDeadline(t, row)
		f.resend(t, row)
		f.n.Stop() // before any attempt

		next := f.second(t)
		if err := next.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || len(rs.requests()) != 2 {
			t.Fatalf("%s after %d requests; want the resend attempted after the restart", got.Status, len(rs.requests()))
		}
	})
}

// TestResendAttemptInterrupted: a resend's attempt after the deadline whose
// instance dies is recorded as interrupted when its lease lapses and made
// again, as an interrupted attempt inside the window is; the deadline still
// stops automatic attempts.
func TestResendAttemptInterrupted(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, ""
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook")
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportJSON))
		f.run(t)
		f.failByDeadline(t, row)
		f.resend(t, row)
		res, err := f.d.claim(context.Background(), &capacity{free: 10, perHostMax: 16, perHost: map[string]int{}, sequences: map[string]bool{}, failingRoom: 10, newRoom: 10}, nil, nil, nil) // ... and the process dies
		claims := res.claims
		if err != nil || len(claims) != 1 || !claims[0].oneShot {
			t.Fatalf("claim: %v, %d claims", err, len(claims))
		}
		if got := f.reload(t, row); got.Resend {
			t.Fatal("the claim left the resend flag set")
		}
		next := f.second(t)
		f.clock.Advance(next.Dispatcher.cfg.Lease + time.Second)
		if err := next.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		at := f.attempts(t, row)
		if len(at) != 3 || at[1].Outcome != deliveryattempt.OutcomeInterrupted || at[2].Outcome != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("attempt log %+v", at)
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.NextAttemptAt != nil || got.LeaseUntil != nil {
			t.Fatalf("%s next %v lease %v", got.Status, got.NextAttemptAt, got.LeaseUntil)
		}
	})
}

// TestResendAttemptStopped: a resend's attempt after the deadline that a
// stopping instance cancels is recorded as interrupted and stays asked for,
// so the next instance makes it.
func TestResendAttemptStopped(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		release := make(chan struct{})
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			switch n {
			case 1:
				return 500, ""
			case 2:
				<-release // hangs until the instance has stopped
			}
			return ok(n, nil)
		})
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.StopTimeout = 50 * time.Millisecond })
		row := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.run(t)
		f.failByDeadline(t, row)
		<-rs.arrived // attempt 1
		f.start(t)
		f.resend(t, row)
		<-rs.arrived // the resend's attempt is in flight
		f.n.Stop()
		close(release)
		got := f.reload(t, row)
		if got.Status != notification.StatusFailed || !got.Resend || got.NextAttemptAt == nil || got.LeaseUntil != nil {
			t.Fatalf("after the stop: %s resend %v next %v lease %v; want failed with the resend still asked", got.Status, got.Resend, got.NextAttemptAt, got.LeaseUntil)
		}
		next := f.second(t)
		if err := next.Dispatcher.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		at := f.attempts(t, row)
		if len(at) != 3 || at[1].Outcome != deliveryattempt.OutcomeInterrupted || at[2].Outcome != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("attempt log %+v", at)
		}
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged || got.Resend || got.NextAttemptAt != nil {
			t.Fatalf("%s resend %v next %v", got.Status, got.Resend, got.NextAttemptAt)
		}
	})
}
