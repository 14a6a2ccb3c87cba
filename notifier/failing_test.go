package notifier

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
)

// TestFailingEndpointsTakeAShareOfTheWorkers: six endpoints that never
// answer, each with more notifications than its PerHost bound. Not yet
// trusted (never answered), then failing (timed out), they take one
// attempt each at a time and two (a quarter of the 8 workers) in all. A
// trusted endpoint's notification stored behind their backlog is
// acknowledged while their attempts still hang, instead of waiting for the
// workers they would otherwise fill (8 of 8: the dead rows are due first).
// An answer makes an endpoint trusted: its backlog goes out.
func TestFailingEndpointsTakeAShareOfTheWorkers(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		hang := make(chan struct{})
		var inFlight, most atomic.Int64
		var answer atomic.Bool // the dead endpoints answer from now on
		// The receivers see an attempt end a moment after payhook gave up
		// on it (when the connection closes): an attempt seen for longer
		// than payhook's timeout less a margin is over for payhook and is
		// not counted among those at once.
		const timeout = 3 * time.Second
		var mu sync.Mutex
		var started []time.Time
		hangs := func(_ int, r *http.Request) (int, string) {
			if answer.Load() {
				return 200, `{"status":"ok"}`
			}
			inFlight.Add(1)
			now := clock.Now()
			mu.Lock()
			live := started[:0]
			for _, s := range started {
				if now.Sub(s) < timeout-500*time.Millisecond {
					live = append(live, s)
				}
			}
			started = append(live, now)
			n := int64(len(started))
			mu.Unlock()
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			defer func() {
				inFlight.Add(-1)
				mu.Lock()
				for i, s := range started {
					if s.Equal(now) {
						started = append(started[:i], started[i+1:]...)
						break
					}
				}
				mu.Unlock()
			}()
			select {
			case <-hang:
			case <-r.Context().Done(): // payhook gave up: the attempt timed out
			}
			return 500, ""
		}
		dead, allowed := receivers(t, 6, hangs)
		healthy := newReceiver(t, ok)
		f := newFixture(t, d, healthy.URL+"/hook", func(c *Config) {
			c.AllowPrivateEndpoints = append(c.AllowPrivateEndpoints, allowed...)
			c.Workers, c.PerHost, c.AttemptTimeout = 8, 4, timeout
		})
		t.Cleanup(func() { close(hang) })
		ctx := context.Background()
		enqueueDead := func(per int) {
			for _, r := range dead {
				for range per {
					e := f.envelope("pending", payload.TransportGET)
					e.CallbackURL = r.URL + "/hook"
					f.enqueue(t, e)
				}
			}
		}
		timedOut := func() int {
			n, err := f.db.Client.DeliveryAttempt.Query().Where(deliveryattempt.OutcomeEQ(deliveryattempt.OutcomeFailed)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		waitUntil := func(what string, cond func() bool) {
			t.Helper()
			deadline := time.After(40 * time.Second)
			tick := time.NewTicker(10 * time.Millisecond) // polling a condition, not a schedule
			defer tick.Stop()
			for !cond() {
				select {
				case <-tick.C:
				case <-deadline:
					t.Fatalf("timed out waiting for %s", what)
				}
			}
		}

		// The healthy endpoint answers once: it is trusted.
		first := f.enqueue(t, f.envelope("pending", payload.TransportGET))
		f.start(t)
		<-healthy.arrived
		waitUntil("the first notification recorded", func() bool { return f.reload(t, first).Status == notification.StatusAcknowledged })

		// One attempt to each dead endpoint times out, two at a time (the
		// share of endpoints not trusted): now payhook knows them. (Their
		// retries are due a minute later on the test's clock, which does
		// not move.)
		enqueueDead(1)
		f.d.Wake()
		waitUntil("the first attempts to time out", func() bool { return timedOut() == len(dead) && inFlight.Load() == 0 })
		if m := most.Load(); m != 2 {
			t.Fatalf("%d attempts at once to endpoints never answered, want 2 (a quarter of the workers)", m)
		}
		most.Store(0)

		// Their backlog, then a healthy notification behind it.
		enqueueDead(4)
		good := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.d.Wake()
		select {
		case <-healthy.arrived:
		case <-time.After(15 * time.Second):
			t.Fatal("the healthy endpoint waited behind the failing ones")
		}
		if n := timedOut(); n != len(dead) {
			t.Fatalf("the healthy notification was sent after %d more attempts to failing endpoints timed out, want none", n-len(dead))
		}
		waitUntil("the failing share in use", func() bool { return inFlight.Load() == 2 })
		if m := most.Load(); m > 2 {
			t.Fatalf("%d attempts at once to failing endpoints, want at most 2 (a quarter of the workers)", m)
		}
		waitUntil("the healthy notification recorded", func() bool { return f.reload(t, good).Status == notification.StatusAcknowledged })

		// An answer ends the failing: as the test's clock moves on (retries
		// and parked rows come due), every dead endpoint's backlog is
		// acknowledged.
		answer.Store(true)
		waitUntil("the backlog acknowledged", func() bool {
			f.clock.Advance(5 * time.Second)
			f.d.Wake()
			n, err := f.db.Client.Notification.Query().Where(notification.StatusEQ(notification.StatusAcknowledged)).Count(ctx)
			return err == nil && n == 2+5*len(dead)
		})
		f.d.mu.Lock()
		failing, active, newActive := len(f.d.failing), f.d.failingActive, f.d.newActive
		f.d.mu.Unlock()
		if failing != 0 || active != 0 || newActive != 0 {
			t.Fatalf("%d destinations still failing, %d attempts counted to them, %d to new ones", failing, active, newActive)
		}
	})
}

// TestNewDestinationIsNotQueuedBehindFailingOnes: after a restart (nothing
// trusted yet), six dead endpoints' retries fill the failing share (two of
// the 8 workers) with attempts that hang. A notification for an endpoint
// this instance has never attempted goes out at once, in the share of new
// destinations, instead of waiting for a dead endpoint's attempt to time
// out (with one share for both, it waited for the timeout: the dead rows
// are due first).
func TestNewDestinationIsNotQueuedBehindFailingOnes(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		hang := make(chan struct{})
		var inFlight, most atomic.Int64
		hangs := func(_ int, r *http.Request) (int, string) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return 500, ""
		}
		dead, allowed := receivers(t, 6, hangs)
		fresh := newReceiver(t, ok)
		const timeout = 5 * time.Second
		f := newFixture(t, d, fresh.URL+"/hook", func(c *Config) {
			c.AllowPrivateEndpoints = append(c.AllowPrivateEndpoints, allowed...)
			c.Workers, c.PerHost, c.AttemptTimeout = 8, 4, timeout
		})
		t.Cleanup(func() { close(hang) })
		ctx := context.Background()
		// The dead endpoints' backlog: retries (a first attempt failed
		// before the restart), due now.
		for _, r := range dead {
			for range 3 {
				e := f.envelope("pending", payload.TransportGET)
				e.CallbackURL = r.URL + "/hook"
				row := f.enqueue(t, e)
				if err := f.db.Client.Notification.UpdateOneID(row.ID).SetAttempts(1).SetStatus(notification.StatusRetrying).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		f.start(t)
		deadline := time.After(timeout - time.Second)
		tick := time.NewTicker(10 * time.Millisecond) // polling a condition, not a schedule
		defer tick.Stop()
		for inFlight.Load() < 2 {
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatalf("%d attempts to the dead endpoints in flight, want their share (2)", inFlight.Load())
			}
		}
		// A notification for an endpoint never attempted.
		good := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		f.d.Wake()
		select {
		case <-fresh.arrived:
		case <-deadline:
			t.Fatal("the new endpoint's notification waited behind the failing endpoints")
		}
		n, err := f.db.Client.DeliveryAttempt.Query().Where(deliveryattempt.OutcomeEQ(deliveryattempt.OutcomeFailed)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("the new endpoint's notification was sent after %d attempts to failing endpoints timed out, want none", n)
		}
		if m := most.Load(); m != 2 {
			t.Fatalf("%d attempts at once to the failing endpoints, want 2 (their share)", m)
		}
		for f.reload(t, good).Status != notification.StatusAcknowledged {
			select {
			case <-tick.C:
			case <-deadline:
				t.Fatal("the new endpoint's notification was not recorded")
			}
		}
		f.d.mu.Lock()
		_, trusted := f.d.trusted[good.Host]
		f.d.mu.Unlock()
		if !trusted {
			t.Fatal("the new endpoint is not trusted after its answer")
		}
	})
}

// TestClaimAppliesEachDestinationsStanding: the claim's own view of the
// destinations it claims (addTrust). Four due rows each: a trusted
// destination takes its PerHost bound (4) in one claim; a new one (first
// attempts, never attempted here) takes one; one met through retries
// takes one and is failing from then on, counted in the failing share.
func TestClaimAppliesEachDestinationsStanding(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		hooks := []string{"http://192.0.2.1:9/hook", "http://192.0.2.1:10/hook", "http://192.0.2.1:11/hook"} // never dialled
		f := newFixture(t, d, hooks[0], func(c *Config) {
			c.Workers, c.PerHost = 16, 4
			c.AllowPrivateEndpoints = allow(hooks...)
		})
		ctx := context.Background()
		var hosts []string
		for i, h := range hooks {
			for range 4 {
				e := f.envelope("pending", payload.TransportGET)
				e.CallbackURL = h
				r := f.enqueue(t, e)
				if i == 2 { // a retry: its first attempt failed before
					if err := f.db.Client.Notification.UpdateOneID(r.ID).SetAttempts(1).SetStatus(notification.StatusRetrying).Exec(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if len(hosts) == i {
					hosts = append(hosts, r.Host)
				}
			}
		}
		trusted, fresh, retried := hosts[0], hosts[1], hosts[2]
		f.d.mu.Lock()
		f.d.trusted[trusted] = t0 // it has answered here
		capa := f.d.capacity()
		f.d.mu.Unlock()
		res, err := f.d.claim(ctx, capa, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for _, c := range res.claims {
			per[c.n.Host]++
		}
		if per[trusted] != 4 || per[fresh] != 1 || per[retried] != 1 {
			t.Fatalf("claimed %v; want 4 of the trusted destination, 1 of the new one, 1 of the one met through retries", per)
		}
		f.d.mu.Lock()
		defer f.d.mu.Unlock()
		if f.d.standing(retried) != trustFailing || f.d.standing(fresh) != trustNew || f.d.standing(trusted) != trustTrusted {
			t.Fatalf("standings after the claim: retried %d, new %d, trusted %d", f.d.standing(retried), f.d.standing(fresh), f.d.standing(trusted))
		}
		for _, c := range res.claims {
			f.d.takeSlot(c.n, t0)
		}
		if f.d.failingActive != 1 || f.d.newActive != 1 {
			t.Fatalf("attempts counted: %d failing, %d new; want 1 and 1", f.d.failingActive, f.d.newActive)
		}
		for _, c := range res.claims {
			f.d.freeSlot(c.n)
		}
		if f.d.failingActive != 0 || f.d.newActive != 0 || f.d.active != 0 {
			t.Fatalf("after release: %d failing, %d new, %d active", f.d.failingActive, f.d.newActive, f.d.active)
		}
	})
}

// receivers starts n receivers answering with reply, and returns them with
// the allow-list entries of their hooks.
func receivers(t *testing.T, n int, reply func(int, *http.Request) (int, string)) ([]*receiverServer, []string) {
	t.Helper()
	rs := make([]*receiverServer, n)
	var allowed []string
	for i := range rs {
		rs[i] = newReceiver(t, reply)
		allowed = append(allowed, allow(rs[i].URL+"/hook")...)
	}
	return rs, allowed
}
