package notifier

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
)

type countingObserver struct{ n, acked atomic.Int64 }

func (o *countingObserver) AttemptFinished(string, string, time.Duration) { o.n.Add(1) }

func (o *countingObserver) NotificationFinished(status string) {
	if status == "acknowledged" {
		o.acked.Add(1)
	}
}

// TestInstancesSplitDeliveries: two instances on one PostgreSQL database
// share the queue; every notification is attempted exactly once, and an
// instance's watchers are woken by the other instance's events.
func TestInstancesSplitDeliveries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres)
	open := func() *store.DB {
		db, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	dbA := open()
	if _, err := store.Migrate(ctx, dbA); err != nil {
		t.Fatal(err)
	}
	dbB := open()

	var mu sync.Mutex
	seen := map[string]int{}
	rs := newReceiver(t, func(_ int, r *http.Request) (int, string) {
		mu.Lock()
		seen[r.URL.Query().Get("uuid")]++
		mu.Unlock()
		return 200, "ok"
	})
	hook := rs.URL + "/hook"
	// The receiver's channel is unbuffered beyond 100: drain it until the
	// notifiers (whose cleanups run first) have stopped sending.
	stopDrain, drained := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-rs.arrived:
			case <-stopDrain:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stopDrain); <-drained })
	mk := func(db *store.DB, obs Observer) *Notifier {
		n, err := New(db, Config{Signers: []signer.Signer{signer.NewRSASigner(testKey)},
			Delivery: Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(hook), PerHost: 8},
			Observer: obs,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
		return n
	}
	var obsA, obsB countingObserver
	a, b := mk(dbA, &obsA), mk(dbB, &obsB)
	f := &fixture{db: dbA, clock: clock.NewManual(clock.Now()), keyID: testOwner, hook: hook}

	// B's watchers learn of A's events through PostgreSQL NOTIFY: once B
	// listens, its watchers are told of A's next event.
	// A watcher of B from before B listened is told to re-read once it
	// does: events committed meanwhile were announced to nobody.
	early, unsubscribeEarly := b.Events.Subscribe(f.keyID)
	defer unsubscribeEarly()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Events.listening:
	case <-time.After(10 * time.Second):
		t.Fatal("instance B does not listen for other instances' events")
	}
	select {
	case <-early:
	default:
		t.Fatal("a watcher from before B listened was not told to re-read")
	}
	signal, unsubscribe := b.Events.Subscribe(f.keyID)
	defer unsubscribe()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	first := f.envelope("pending", payload.TransportGET)
	first.CallbackURL = hook
	if _, err := a.Queue.EnqueueNow(ctx, f.message(t, first)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-signal:
	case <-time.After(5 * time.Second):
		t.Fatal("instance B was not told of instance A's event")
	}

	// A delivers alone, holding what it stores in memory, until it hears
	// from B (B's presence, at its start): then it leaves most of a burst
	// in the database for both.
	select {
	case <-a.Events.heard:
	case <-time.After(5 * time.Second):
		t.Fatal("instance A never heard of instance B")
	}
	if a.Events.alone() {
		t.Fatal("instance A heard of instance B but counts itself alone")
	}

	const total = 600
	for i := 0; i < total-1; i += 50 {
		tx, err := dbA.Client.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 50 && i+j < total-1; j++ {
			e := f.envelope("confirmed", payload.TransportGET)
			e.CallbackURL = hook
			if _, err := a.Enqueue(ctx, tx, f.message(t, e)); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(60 * time.Second)
	for {
		n, err := dbA.Client.Notification.Query().Where(notification.StatusEQ(notification.StatusAcknowledged)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == total {
			break
		}
		select {
		case <-signal: // B saw more events
		case <-time.After(time.Second):
		case <-deadline:
			t.Fatalf("%d of %d acknowledged", n, total)
		}
	}
	attempts, err := dbA.Client.DeliveryAttempt.Query().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if attempts != total {
		t.Fatalf("%d attempts for %d notifications: some were attempted twice", attempts, total)
	}
	mu.Lock()
	for id, c := range seen {
		if c != 1 {
			t.Fatalf("uuid %s delivered %d times", id, c)
		}
	}
	mu.Unlock()
	if obsA.n.Load() == 0 || obsB.n.Load() == 0 || obsA.n.Load()+obsB.n.Load() != total {
		t.Fatalf("instance A made %d attempts, B %d: the work was not split", obsA.n.Load(), obsB.n.Load())
	}
	t.Logf("instance A delivered %d, B %d", obsA.n.Load(), obsB.n.Load())
	leased, err := dbA.Client.Notification.Query().Where(notification.LeaseUntilNotNil()).Count(ctx)
	if err != nil || leased != 0 {
		t.Fatalf("%d notifications still leased after every attempt was recorded (%v)", leased, err)
	}
	acked, err := dbA.Client.DeliveryAttempt.Query().Where(deliveryattempt.OutcomeEQ(deliveryattempt.OutcomeAcknowledged)).Count(ctx)
	if err != nil || acked != total {
		t.Fatalf("%d acknowledged attempts logged, want %d (%v)", acked, total, err)
	}
	// Each instance counts the notifications it finished, once their
	// outcome is committed (Stop waits for that): together, each
	// notification once.
	a.Stop()
	b.Stop()
	if got := obsA.acked.Load() + obsB.acked.Load(); got != total {
		t.Fatalf("instances counted %d notifications acknowledged, want %d", got, total)
	}
}

// TestOwnNotifyDoesNotWakeItself: an instance's NOTIFY after its own
// commit wakes the other instances, never itself (it told its dispatcher
// and watchers when it committed; waking its dispatcher again made it scan
// the due rows at every commit).
func TestOwnNotifyDoesNotWakeItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres)
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The receiver holds every attempt until the test ends, so the only
	// commits (and NOTIFYs) are the test's own stores: an attempt's record
	// would be one more, from whichever instance made it.
	release := make(chan struct{})
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(rs.Close)
	t.Cleanup(func() { close(release) })
	hook := rs.URL + "/hook"
	mk := func() (*Notifier, chan struct{}) {
		n, err := New(db, Config{Signers: []signer.Signer{signer.NewRSASigner(testKey)},
			Delivery:    Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: allow(hook)},
			StopTimeout: 100 * time.Millisecond,
		}, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Stop)
		woken := make(chan struct{}, 16)
		n.Events.onPeer = func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		}
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-n.Events.listening:
		case <-time.After(10 * time.Second):
			t.Fatal("the instance does not listen")
		}
		<-woken // the wake-up on listening
		return n, woken
	}
	a, wokenA := mk()
	b, wokenB := mk()
	f := &fixture{db: db, clock: clock.NewManual(clock.Now()), keyID: testOwner, hook: hook}
	enqueue := func(n *Notifier) {
		e := f.envelope("pending", payload.TransportGET)
		e.CallbackURL = hook
		e.Signing = Signing{}
		if _, err := n.Queue.EnqueueNow(ctx, f.message(t, e)); err != nil {
			t.Fatal(err)
		}
	}
	wait := func(c chan struct{}, who string) {
		t.Helper()
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s was not woken by the other instance's commit", who)
		}
	}
	enqueue(a)
	wait(wokenB, "B")
	// A's listener gets B's NOTIFY after its own (commit order): once it
	// has B's, its own was skipped or is in the channel.
	enqueue(b)
	wait(wokenA, "A")
	select {
	case <-wokenA:
		t.Fatal("A was woken by its own commit")
	default:
	}
	// Likewise B, with A's next commit after its own.
	enqueue(a)
	wait(wokenB, "B")
	select {
	case <-wokenB:
		t.Fatal("B was woken by its own commit")
	default:
	}
}
