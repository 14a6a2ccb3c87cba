package notifier

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

// heldCount is how many rows the dispatcher holds in memory.
func (f *fixture) heldCount() int {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return f.d.held.count
}

// wantHeld checks that row is stored as held: leased to this instance with
// its first attempt counted, out of the due range until the lease's end.
func (f *fixture) wantHeld(t *testing.T, row *entdb.Notification, storedAt time.Time) {
	t.Helper()
	got := f.reload(t, row)
	lease := storedAt.Add(f.d.cfg.Lease)
	if got.Attempts != 1 || got.LeaseOwner != f.d.cfg.InstanceID || got.LeaseUntil == nil || !got.LeaseUntil.Equal(lease) ||
		got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(lease) {
		t.Fatalf("held row: attempts %d, lease %v by %q, next %v; want 1 attempt leased by %q until %v, due then",
			got.Attempts, got.LeaseUntil, got.LeaseOwner, got.NextAttemptAt, f.d.cfg.InstanceID, lease)
	}
}

// busy is a started fixture whose receiver holds its first request until
// free (or until the attempt is cut short) and acknowledges every request,
// with that first attempt in flight. The loop polls hourly: tests wake it.
type busy struct {
	*fixture
	rs      *receiverServer
	changed <-chan struct{}
	first   *entdb.Notification
	free    func()
}

// newBusy makes a busy fixture; the first notification has sequence seq
// (none when empty).
func newBusy(t *testing.T, d store.Dialect, seq string, mutate ...func(*Config)) *busy {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	rs := newReceiver(t, func(n int, r *http.Request) (int, string) {
		if n == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		return ok(0, nil)
	})
	f := newFixture(t, d, rs.URL+"/hook", append([]func(*Config){func(c *Config) {
		c.AttemptTimeout = time.Minute // the first attempt waits for the test
		c.PollInterval = time.Hour
	}}, mutate...)...)
	changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
	t.Cleanup(unsubscribe)
	f.start(t)
	e := f.envelope("pending", payload.TransportGET)
	e.Sequence = seq
	first := f.enqueue(t, e)
	<-rs.arrived
	return &busy{fixture: f, rs: rs, changed: changed, first: first, free: free}
}

func oneWorker(c *Config) { c.Workers = 1 }

// TestHeldRowWaitsInMemoryAndStartsWhenASlotFrees: a notification stored
// while every worker is busy is stored leased, its first attempt counted,
// waits in memory (the queue's oldest-due age counts it), and is sent once
// the worker frees, without a claim: one attempt, numbered 1.
func TestHeldRowWaitsInMemoryAndStartsWhenASlotFrees(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		b := newBusy(t, d, "", oneWorker) // the only worker is busy
		f, rs, first := b.fixture, b.rs, b.first
		second := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.wantHeld(t, second, t0)
		if n := f.heldCount(); n != 1 {
			t.Fatalf("%d rows held, want 1", n)
		}
		f.clock.Advance(3 * time.Second)
		st, err := f.n.Queue.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.OldestDue != 3*time.Second {
			t.Fatalf("oldest due %v, want 3s: the held row has waited that long", st.OldestDue)
		}

		b.free()
		f.waitStatus(t, b.changed, first, notification.StatusAcknowledged)
		f.waitStatus(t, b.changed, second, notification.StatusAcknowledged)
		at := f.attempts(t, second)
		if len(at) != 1 || at[0].Number != 1 || at[0].Outcome != deliveryattempt.OutcomeAcknowledged || len(rs.requests()) != 2 {
			t.Fatalf("held row: %d attempt rows, %d requests; want one acknowledged attempt numbered 1, two requests", len(at), len(rs.requests()))
		}
		if got := f.reload(t, second); got.LeaseUntil != nil || got.NextAttemptAt != nil || got.Attempts != 1 {
			t.Fatalf("acknowledged held row still leased or due: %+v", got)
		}
		if n := f.heldCount(); n != 0 {
			t.Fatalf("%d rows still held after both were sent", n)
		}
	})
}

// TestSequenceSuccessorIsHeldBehindItsPredecessor: a notification stored
// while an earlier one of its sequence is in flight is held, and sent after
// the earlier one's attempt is recorded, never before.
func TestSequenceSuccessorIsHeldBehindItsPredecessor(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		b := newBusy(t, d, "address-payment:9") // the earlier one is in flight
		f, rs, earlier := b.fixture, b.rs, b.first
		e := f.envelope("confirmed", payload.TransportGET)
		e.Sequence = "address-payment:9"
		later := f.enqueue(t, e)
		f.wantHeld(t, later, t0)
		if n := len(rs.requests()); n != 1 {
			t.Fatalf("%d requests while the earlier one is in flight, want 1", n)
		}
		b.free()
		f.waitStatus(t, b.changed, later, notification.StatusAcknowledged)
		f.waitStatus(t, b.changed, earlier, notification.StatusAcknowledged)
		if order := requestStatuses(t, rs); strings.Join(order, ",") != "pending,confirmed" {
			t.Fatalf("requests in order %v, want the earlier notification first", order)
		}
	})
}

// TestHeldRowPastItsDeadlineIsGivenBack: a held row that could not start
// while its lease left room for the attempt and its record is given back
// (due since it was stored, unleased, its attempt uncounted) and delivered through the claim,
// with no attempt recorded for the time it was held.
func TestHeldRowPastItsDeadlineIsGivenBack(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		ctx := context.Background()
		b := newBusy(t, d, "", oneWorker)
		f, rs := b.fixture, b.rs
		held := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.wantHeld(t, held, t0)

		f.clock.Advance(f.d.holdRoom() + time.Second)
		host := strings.TrimPrefix(rs.URL, "http://")
		f.d.startHeld(host) // its turn would come, but it is too late
		if err := f.d.giveBackExpired(ctx); err != nil {
			t.Fatal(err)
		}
		got := f.reload(t, held)
		if got.Attempts != 0 || got.LeaseUntil != nil || got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(t0) {
			t.Fatalf("given back: attempts %d, lease %v, next %v; want uncounted, unleased, due since it was stored (%v)", got.Attempts, got.LeaseUntil, got.NextAttemptAt, t0)
		}
		if n := f.heldCount(); n != 0 {
			t.Fatalf("%d rows still held", n)
		}
		b.free()
		f.waitStatus(t, b.changed, held, notification.StatusAcknowledged)
		at := f.attempts(t, held)
		if len(at) != 1 || at[0].Number != 1 || at[0].Outcome != deliveryattempt.OutcomeAcknowledged {
			t.Fatalf("given-back row: %d attempt rows; want one acknowledged attempt numbered 1", len(at))
		}
	})
}

// TestHeldRowsPastTheBoundAreLeftDue: with Hold rows held, the next row
// that cannot start is stored due, for the dispatch loop to claim.
func TestHeldRowsPastTheBoundAreLeftDue(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		b := newBusy(t, d, "", oneWorker, func(c *Config) { c.Hold = 1 })
		f := b.fixture
		held := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.wantHeld(t, held, t0)
		left := f.enqueue(t, f.envelope("completed", payload.TransportGET))
		if got := f.reload(t, left); got.Attempts != 0 || got.LeaseUntil != nil {
			t.Fatalf("row past the bound: attempts %d, lease %v; want left due", got.Attempts, got.LeaseUntil)
		}
		b.free()
		f.waitStatus(t, b.changed, held, notification.StatusAcknowledged)
		f.d.Wake() // the loop polls hourly here
		f.waitStatus(t, b.changed, left, notification.StatusAcknowledged)
	})
}

// TestStopGivesBackHeldRows: a dispatcher that stops gives back what it
// holds, so another instance (or the next start) claims it at once instead
// of waiting for the lease to lapse.
func TestStopGivesBackHeldRows(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		b := newBusy(t, d, "", oneWorker, func(c *Config) {
			c.StopTimeout = 50 * time.Millisecond // the attempt in flight is cut short
		})
		f := b.fixture
		held := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.wantHeld(t, held, t0)
		f.n.Stop()
		got := f.reload(t, held)
		if got.Attempts != 0 || got.LeaseUntil != nil || got.NextAttemptAt == nil || got.NextAttemptAt.After(f.clock.Now()) {
			t.Fatalf("after Stop: attempts %d, lease %v, next %v; want given back, due", got.Attempts, got.LeaseUntil, got.NextAttemptAt)
		}
		if n := len(f.attempts(t, held)); n != 0 {
			t.Fatalf("%d attempts recorded for a row that was only held", n)
		}
	})
}

// blockingSigner is a stored signer whose signatures wait for the test.
type blockingSigner struct {
	entered chan struct{}
	release chan struct{}
	inside  atomic.Int32
}

func (b *blockingSigner) Scheme() string { return signer.SchemeRSASHA256 }
func (b *blockingSigner) Header() string { return signer.SignatureHeader }
func (b *blockingSigner) Sign(string, payload.Request) (string, error) {
	b.inside.Add(1)
	b.entered <- struct{}{}
	<-b.release
	b.inside.Add(-1)
	return "c2ln", nil
}

// TestSignaturesAtOnceAreBoundedByTheProcessors: no more signatures made
// once are computed at the same time than Go has processors (a signature
// is CPU only; more at once only delay the goroutines waiting for a CPU).
func TestSignaturesAtOnceAreBoundedByTheProcessors(t *testing.T) {
	t.Parallel()
	procs := runtime.GOMAXPROCS(0)
	b := &blockingSigner{entered: make(chan struct{}, procs+1), release: make(chan struct{})}
	f := newFixture(t, store.SQLite, "http://127.0.0.1:9/hook", func(c *Config) { c.Signers = []signer.Signer{b} })
	done := make(chan error, procs+1)
	for range procs + 1 {
		go func() {
			_, err := f.n.Queue.storedHeaders(&entdb.Notification{UUID: "u", Method: http.MethodGet, URL: "http://127.0.0.1:9/hook", SignatureScheme: signer.SchemeRSASHA256})
			done <- err
		}()
	}
	for range procs {
		<-b.entered
	}
	select {
	case <-b.entered:
		t.Fatalf("%d signatures computed at once with %d processors", b.inside.Load(), procs)
	case <-time.After(50 * time.Millisecond): // the last one waits for a processor
	}
	close(b.release)
	<-b.entered // the last one, once one finished
	for range procs + 1 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestHeldRowIsSignedBeforeItTakesASlot: a notification whose signature is
// made once (RSA) is held while the dispatcher's signers make it, taking
// no worker and no slot of its destination meanwhile; once signed it
// starts, sends that signature, and its record stores it.
func TestHeldRowIsSignedBeforeItTakesASlot(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		b := &blockingSigner{entered: make(chan struct{}, 1), release: make(chan struct{})}
		var once sync.Once
		release := func() { once.Do(func() { close(b.release) }) }
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = []signer.Signer{b}
			c.PollInterval = time.Hour
		})
		t.Cleanup(release) // before Stop: a failure leaves no signature waiting
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		t.Cleanup(unsubscribe)
		f.start(t)
		storedAt := f.clock.Now()
		row := f.enqueue(t, f.envelope("pending", payload.TransportGET))
		<-b.entered
		f.wantHeld(t, row, storedAt)
		f.d.mu.Lock()
		active, perHost := f.d.active, f.d.perHost[row.Host]
		f.d.mu.Unlock()
		if active != 0 || perHost != 0 || len(rs.requests()) != 0 {
			t.Fatalf("while its signature is made: %d attempts in flight, %d to its destination, %d requests; want none", active, perHost, len(rs.requests()))
		}
		release()
		if g := <-rs.arrived; g.signature != "c2ln" {
			t.Fatalf("attempt sent signature %q, want the one the signers made (c2ln)", g.signature)
		}
		f.waitStatus(t, changed, row, notification.StatusAcknowledged)
		if got := f.reload(t, row).Signature; got != "c2ln" {
			t.Fatalf("recorded signature %q, want c2ln", got)
		}
	})
}

// failingSigner is a stored signer whose every signature fails.
type failingSigner struct{ calls atomic.Int32 }

func (s *failingSigner) Scheme() string { return signer.SchemeRSASHA256 }
func (s *failingSigner) Header() string { return signer.SignatureHeader }
func (s *failingSigner) Sign(string, payload.Request) (string, error) {
	s.calls.Add(1)
	return "", errors.New("key unavailable")
}

// TestHeldRowWhoseSigningFailsIsAttempted: a held row the signers cannot
// sign is not left waiting; it starts, its attempt signs it again, fails
// without sending, and the failure is recorded with its reason, retried
// on the schedule like any failed attempt.
func TestHeldRowWhoseSigningFailsIsAttempted(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		s := &failingSigner{}
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) {
			c.Signers = []signer.Signer{s}
			c.PollInterval = time.Hour
		})
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		t.Cleanup(unsubscribe)
		f.start(t)
		row := f.enqueue(t, f.envelope("pending", payload.TransportGET))
		f.waitStatus(t, changed, row, notification.StatusRetrying)
		if at := f.attempts(t, row); len(at) != 1 || at[0].Outcome != deliveryattempt.OutcomeFailed || !strings.Contains(at[0].Error, "key unavailable") {
			t.Fatalf("attempts %+v, want one failed with the signer's reason", at)
		}
		if n := s.calls.Load(); n != 2 {
			t.Fatalf("signer called %d times, want 2 (the signers', then the attempt's)", n)
		}
		if len(rs.requests()) != 0 {
			t.Fatalf("%d requests sent unsigned", len(rs.requests()))
		}
		if got := f.reload(t, row).Signature; got != "" {
			t.Fatalf("row stored with signature %q, want none", got)
		}
	})
}
