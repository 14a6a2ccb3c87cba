package notifier

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
)

// requestStatuses lists the payment_status of the requests rs received, in
// order.
func requestStatuses(t *testing.T, rs *receiverServer) []string {
	t.Helper()
	var out []string
	for _, r := range rs.requests() {
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, u.Query().Get("payment_status"))
	}
	return out
}

// waitStatus waits, on the owner's event wake-ups, until row has status.
func (f *fixture) waitStatus(t *testing.T, changed <-chan struct{}, row *entdb.Notification, want notification.Status) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for f.reload(t, row).Status != want {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("notification %s: status %s, want %s", row.UUID, f.reload(t, row).Status, want)
		}
	}
}

// TestStoredWhileRunningIsClaimedAsStored: with the dispatch loop running
// and a slot free, a notification is inserted already leased to this
// instance with its first attempt counted, and sent on commit; its created
// event still says it was due at once.
func TestStoredWhileRunningIsClaimedAsStored(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		release := make(chan struct{})
		rs := newReceiver(t, func(int, *http.Request) (int, string) { <-release; return ok(0, nil) })
		f := newFixture(t, d, rs.URL+"/hook")
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		defer unsubscribe()
		f.start(t)
		row := f.enqueue(t, f.envelope("pending", payload.TransportJSON))
		<-rs.arrived // sent while the test holds the answer

		got := f.reload(t, row)
		lease := t0.Add(f.d.cfg.Lease)
		if got.Attempts != 1 || got.LeaseOwner != f.d.cfg.InstanceID || got.LeaseUntil == nil || !got.LeaseUntil.Equal(lease) {
			t.Fatalf("stored row: attempts %d, lease %v by %q; want 1 attempt leased until %v by %q",
				got.Attempts, got.LeaseUntil, got.LeaseOwner, lease, f.d.cfg.InstanceID)
		}
		if got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(lease) {
			t.Fatalf("next attempt %v: a leased row is due again when its lease lapses (%v)", got.NextAttemptAt, lease)
		}
		created, err := f.db.Client.DeliveryEvent.Query().
			Where(deliveryevent.NotificationID(row.ID), deliveryevent.KindEQ(deliveryevent.KindCreated)).Only(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if created.NextAttemptAt == nil || !created.NextAttemptAt.Equal(t0) {
			t.Fatalf("created event: next attempt %v, want %v (due at once)", created.NextAttemptAt, t0)
		}

		close(release)
		f.waitStatus(t, changed, row, notification.StatusAcknowledged)
		at := f.attempts(t, row)
		if len(at) != 1 || at[0].Number != 1 || len(rs.requests()) != 1 {
			t.Fatalf("%d attempt rows, %d requests; want exactly one attempt numbered 1", len(at), len(rs.requests()))
		}
		if got := f.reload(t, row); got.LeaseUntil != nil || got.NextAttemptAt != nil || got.Attempts != 1 {
			t.Fatalf("acknowledged row still leased or due: %+v", got)
		}
	})
}

// TestNotClaimedAsStoredWithoutFreeSlot: without a running loop, or with
// every worker busy and holding off (TestHeld* for holding), a stored
// notification is left due for the loop.
func TestNotClaimedAsStoredWithoutFreeSlot(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		release := make(chan struct{})
		rs := newReceiver(t, func(int, *http.Request) (int, string) { <-release; return ok(0, nil) })
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.Workers = 1; c.Hold = -1 })
		idle := f.enqueue(t, f.envelope("pending", payload.TransportGET))
		if got := f.reload(t, idle); got.Attempts != 0 || got.LeaseUntil != nil {
			t.Fatalf("stored with the loop stopped: attempts %d, lease %v; want unclaimed", got.Attempts, got.LeaseUntil)
		}
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		defer unsubscribe()
		f.start(t)
		<-rs.arrived // the loop claimed the first; the only worker is busy
		second := f.enqueue(t, f.envelope("confirmed", payload.TransportGET))
		if got := f.reload(t, second); got.Attempts != 0 || got.LeaseUntil != nil {
			t.Fatalf("stored with no free worker: attempts %d, lease %v; want unclaimed", got.Attempts, got.LeaseUntil)
		}
		close(release)
		f.waitStatus(t, changed, second, notification.StatusAcknowledged)
		f.waitStatus(t, changed, idle, notification.StatusAcknowledged)
	})
}

// TestFailedStoreGivesBackItsSlot: a transaction whose notifications fail to
// insert (a duplicate uuid) sends nothing and keeps no worker or slot.
func TestFailedStoreGivesBackItsSlot(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.Workers = 1 })
		f.start(t)
		e := f.envelope("pending", payload.TransportGET)
		e.UUID = "5b0f8f2c-6a59-4d7e-9a53-0d5b1f5c2a11"
		err := store.WithTx(context.Background(), f.db.Client, func(tx *entdb.Tx) error {
			for range 2 {
				if _, err := f.n.Enqueue(context.Background(), tx, f.message(t, e)); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			t.Fatal("two notifications with one uuid were stored")
		}
		f.d.mu.Lock()
		active, hosts := f.d.active, len(f.d.perHost)
		f.d.mu.Unlock()
		if active != 0 || hosts != 0 {
			t.Fatalf("after a failed store: %d workers and %d destinations still taken", active, hosts)
		}
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		defer unsubscribe()
		row := f.enqueue(t, f.envelope("pending", payload.TransportGET)) // the one worker is free
		f.waitStatus(t, changed, row, notification.StatusAcknowledged)
		if n := len(rs.requests()); n != 1 {
			t.Fatalf("%d requests, want 1 (nothing of the failed transaction is sent)", n)
		}
	})
}

// TestSequenceOrderKeptWhenEarlierIsDue: a notification of a sequence (a
// payment's callbacks) whose earlier notification is due (a retry the loop
// has not claimed yet) is not sent as it is stored: the earlier one goes
// first.
func TestSequenceOrderKeptWhenEarlierIsDue(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, func(n int, _ *http.Request) (int, string) {
			if n == 1 {
				return 500, "" // the first attempt of the earlier notification fails
			}
			return ok(0, nil)
		})
		// The loop polls hourly, so the due retry waits for a wake-up.
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.PollInterval = time.Hour })
		changed, unsubscribe := f.n.Events.Subscribe(f.keyID)
		defer unsubscribe()
		f.start(t)
		first := f.envelope("pending", payload.TransportGET)
		first.Sequence = "address-payment:1"
		earlier := f.enqueue(t, first)
		f.waitStatus(t, changed, earlier, notification.StatusRetrying)
		f.clock.Advance(2 * time.Minute) // the retry (after 1m) is due

		second := f.envelope("confirmed", payload.TransportGET)
		second.Sequence = "address-payment:1"
		later := f.enqueue(t, second)
		f.waitStatus(t, changed, later, notification.StatusAcknowledged)
		f.waitStatus(t, changed, earlier, notification.StatusAcknowledged)
		if order := requestStatuses(t, rs); strings.Join(order, ",") != "pending,pending,confirmed" {
			t.Fatalf("requests in order %v, want the due retry of pending before confirmed", order)
		}
	})
}

// TestFirstOfSequenceSkipsTheCheck: a row stored while an earlier one of
// its sequence is due is not claimed as stored, unless its producer marked
// it the first of its sequence: then nothing is looked up for it (a true
// first has no earlier row; here the mark is a lie, to show the check is
// skipped).
func TestFirstOfSequenceSkipsTheCheck(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		ctx := context.Background()
		f := newFixture(t, d, "http://127.0.0.1:9/hook", func(c *Config) { c.PollInterval = time.Hour })
		earlier := f.envelope("pending", payload.TransportGET)
		earlier.Sequence = "address-payment:1"
		f.enqueue(t, earlier) // due at once, never attempted: the loop is off
		f.d.mu.Lock()
		f.d.handOff = true
		// The earlier row, stored while the loop was off, made its
		// destination's backlog: forget it, to see the sequence check alone.
		clear(f.d.backlog)
		f.d.mu.Unlock()
		seq := "address-payment:1"
		for _, tc := range []struct {
			name  string
			first bool
			want  int
		}{
			{"checked: an earlier one is due", false, 0},
			{"marked first: not checked", true, 1},
		} {
			tx, err := f.n.Queue.db.Client.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			row := &entdb.Notification{Sequence: &seq, Host: "127.0.0.1:9"}
			var first map[*entdb.Notification]bool
			if tc.first {
				first = map[*entdb.Notification]bool{row: true}
			}
			st, err := f.d.claimStored(ctx, tx, []*entdb.Notification{row}, first)
			_ = tx.Rollback()
			if err != nil {
				t.Fatal(err)
			}
			f.d.abandon(st)
			if len(st.claims) != tc.want {
				t.Errorf("%s: %d claimed as stored, want %d", tc.name, len(st.claims), tc.want)
			}
		}
	})
}

// TestParkKeepsOldestDueAndStaggersTheRest: parking a saturated
// destination keeps its oldest 2 x PerHost due rows due, moves the others
// to when its slots could take them (at its recent attempt duration), never
// beyond the horizon, and leaves alone a row whose window closes sooner.
func TestParkKeepsOldestDueAndStaggersTheRest(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		const hook = "http://192.0.2.1:9/hook" // never dialled: parking only
		f := newFixture(t, d, hook, func(c *Config) { c.PerHost = 4 })
		ctx := context.Background()
		var rows []*entdb.Notification
		for range 60 {
			rows = append(rows, f.enqueue(t, f.envelope("pending", payload.TransportGET)))
		}
		short := rows[len(rows)-1] // its window closes within the horizon
		if err := f.db.Client.Notification.UpdateOneID(short.ID).SetExpiresAt(t0.Add(10 * time.Second)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		host := rows[0].Host
		f.d.mu.Lock()
		f.d.hostDuration[host] = 8 * time.Second // 4 slots: one row per 2 s
		f.d.trusted[host] = t0                   // it has answered: its PerHost slots
		f.d.mu.Unlock()
		park := 2 * time.Second
		if err := f.d.park(ctx, []string{host}, t0, park); err != nil {
			t.Fatal(err)
		}
		horizon := f.d.parkHorizon()
		var prev time.Time
		for i, r := range rows {
			next := *f.reload(t, r).NextAttemptAt
			if i < 8 || r.ID == short.ID {
				if !next.Equal(t0) {
					t.Fatalf("row %d: next attempt %v, want still due at %v", i, next, t0)
				}
				continue
			}
			// Row i can start about i/4 attempt durations (2 s each) from
			// now; no sooner than one park, no later than the horizon; the
			// time is rounded up to the park unit.
			want := min(max(time.Duration(i)*2*time.Second, park), horizon)
			if got := next.Sub(t0); got < want || got > want+park || next.Before(prev) {
				t.Fatalf("row %d parked for %v; want %v to %v, in due order", i, got, want, want+park)
			}
			prev = next
		}
		if got := prev.Sub(t0); got < horizon {
			t.Fatalf("the last row is parked for %v; the backlog reaches the horizon %v", got, horizon)
		}
	})
}

// TestParkedBacklogIsPulledForwardWhenSlotsFree: once a destination with
// parked rows (found in the database, whoever parked them) has free slots
// and nothing due, its earliest parked first attempts (as many as it has
// free slots) are due at once, retries keep their schedule, and a
// destination with nothing parked left is forgotten.
func TestParkedBacklogIsPulledForwardWhenSlotsFree(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		const hook = "http://192.0.2.1:9/hook" // never dialled
		f := newFixture(t, d, hook, func(c *Config) { c.PerHost = 2 })
		ctx := context.Background()
		var rows []*entdb.Notification
		for range 12 {
			rows = append(rows, f.enqueue(t, f.envelope("pending", payload.TransportGET)))
		}
		host := rows[0].Host
		retry := rows[len(rows)-1] // a failed first attempt, retried later
		if err := f.db.Client.Notification.UpdateOneID(retry.ID).SetAttempts(1).SetStatus(notification.StatusRetrying).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		f.d.mu.Lock()
		f.d.hostDuration[host] = 10 * time.Second // slow: parked far apart
		f.d.perHost[host] = 2                     // both slots busy
		f.d.trusted[host] = t0                    // it has answered: its PerHost slots
		f.d.mu.Unlock()
		if err := f.d.park(ctx, []string{host}, t0, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		f.d.mu.Lock()
		if _, ok := f.d.pullable[host]; !ok {
			t.Error("parking first attempts did not make the destination pullable")
		}
		clear(f.d.pullable) // forgotten, as after a restart: found in the database
		f.d.mu.Unlock()
		f.clock.Advance(time.Second)
		due := func() (ids []int64) {
			for _, r := range rows {
				if got := f.reload(t, r); !got.NextAttemptAt.After(f.clock.Now()) {
					ids = append(ids, r.ID)
				}
			}
			return ids
		}
		kept := due() // the oldest 2 x PerHost
		if len(kept) != 4 {
			t.Fatalf("%d rows due after parking, want 4", len(kept))
		}

		// Slots busy: nothing is pulled.
		if n, err := f.d.pullParked(ctx); err != nil || n != 0 {
			t.Fatalf("pulled %d (%v) with no free slot", n, err)
		}
		// One slot free: the earliest parked row is due now.
		f.d.mu.Lock()
		f.d.perHost[host] = 1
		f.d.mu.Unlock()
		if n, err := f.d.pullParked(ctx); err != nil || n != 1 {
			t.Fatalf("pulled %d (%v), want 1", n, err)
		}
		if got := due(); len(got) != 5 || got[4] != rows[4].ID {
			t.Fatalf("due after the pull: %v, want the kept 4 and row 4 (%d)", got, rows[4].ID)
		}
		// All slots free, repeatedly: every parked first attempt comes due,
		// the retry stays on its schedule, then the destination is forgotten.
		f.d.mu.Lock()
		delete(f.d.perHost, host)
		f.d.mu.Unlock()
		for range 10 {
			if _, err := f.d.pullParked(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if got := due(); len(got) != len(rows)-1 || slices.Contains(got, retry.ID) {
			t.Fatalf("%d rows due, want all %d but the retry", len(got), len(rows)-1)
		}
		f.d.mu.Lock()
		_, still := f.d.pullable[host]
		f.d.mu.Unlock()
		if still {
			t.Fatal("a destination with nothing parked is still remembered as parked")
		}
	})
}

// TestLaterNotificationFollowsAParkedEarlierOne: a notification stored
// while an earlier one of its sequence is parked (set aside for a
// destination at its bound) is not claimed as stored nor due before it: it
// is stored due when the earlier one is, and the two go in order. (Before,
// it was sent as stored, ahead of the parked one.)
func TestLaterNotificationFollowsAParkedEarlierOne(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		ctx := context.Background()
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.PollInterval = time.Hour })
		first := f.envelope("pending", payload.TransportGET)
		first.Sequence = "address-payment:1"
		earlier := f.enqueue(t, first) // the loop is off: stored due
		parkedUntil := t0.Add(10 * time.Second)
		if err := f.db.Client.Notification.UpdateOneID(earlier.ID).SetNextAttemptAt(parkedUntil).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		f.d.mu.Lock()
		f.d.handOff = true // rows are claimed as stored from now on
		clear(f.d.backlog)
		f.d.mu.Unlock()

		second := f.envelope("confirmed", payload.TransportGET)
		second.Sequence = "address-payment:1"
		later := f.reload(t, f.enqueue(t, second))
		if later.Attempts != 0 || later.LeaseUntil != nil || later.NextAttemptAt == nil || !later.NextAttemptAt.Equal(parkedUntil) {
			t.Fatalf("later row: %d attempts, lease %v, due %v; want unclaimed, due with the parked one at %v", later.Attempts, later.LeaseUntil, later.NextAttemptAt, parkedUntil)
		}
		created, err := f.db.Client.DeliveryEvent.Query().
			Where(deliveryevent.NotificationID(later.ID), deliveryevent.KindEQ(deliveryevent.KindCreated)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if created.NextAttemptAt == nil || !created.NextAttemptAt.Equal(parkedUntil) {
			t.Fatalf("created event says due %v, want %v", created.NextAttemptAt, parkedUntil)
		}

		// The destination has free slots: its parked rows are pulled
		// forward, earliest first, and attempted in that order.
		f.run(t)
		if order := requestStatuses(t, rs); strings.Join(order, ",") != "pending,confirmed" {
			t.Fatalf("requests in order %v, want pending before confirmed", order)
		}
	})
}

// TestStoredRowsQueueBehindADestinationsBacklog: while a destination has
// due rows left for the dispatch loop (none of its slots was free when
// they were stored), a row stored for it is not claimed as stored even if
// a slot has freed meanwhile: it queues behind them, and the loop is woken
// to claim them, oldest first. A row left for want of a slot does not
// wake the loop (the attempt that frees one does). (Holding is off: a row
// past its bounds makes the backlog; TestHeldRowsPastTheBound.)
func TestStoredRowsQueueBehindADestinationsBacklog(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.PollInterval = time.Hour; c.PerHost = 1; c.Hold = -1 })
		host := strings.TrimPrefix(rs.URL, "http://")
		busy := &entdb.Notification{Host: host}
		drain := func() bool {
			select {
			case <-f.d.wake:
				return true
			default:
				return false
			}
		}
		f.d.mu.Lock()
		f.d.handOff = true
		f.d.takeSlot(busy, t0) // an attempt in flight fills the destination
		f.d.mu.Unlock()
		drain()

		a := f.reload(t, f.enqueue(t, f.envelope("pending", payload.TransportGET)))
		if a.Attempts != 0 || a.LeaseUntil != nil {
			t.Fatalf("row stored while its destination is full was claimed: %d attempts", a.Attempts)
		}
		if drain() {
			t.Fatal("a row left for want of a slot woke the loop")
		}
		f.d.mu.Lock()
		f.d.freeSlot(busy) // the attempt ends
		f.d.mu.Unlock()

		b := f.reload(t, f.enqueue(t, f.envelope("confirmed", payload.TransportGET)))
		if b.Attempts != 0 || b.LeaseUntil != nil {
			t.Fatal("a row stored behind its destination's backlog was claimed as stored, ahead of it")
		}
		if !drain() {
			t.Fatal("the loop was not woken for a backlog its destination has a slot for")
		}
		f.run(t)
		if order := requestStatuses(t, rs); strings.Join(order, ",") != "pending,confirmed" {
			t.Fatalf("requests in order %v, want the backlog's row first", order)
		}
		f.d.mu.Lock()
		left := len(f.d.backlog)
		f.d.mu.Unlock()
		if left != 0 {
			t.Fatalf("backlog %v after the loop claimed every due row, want none", f.d.backlog)
		}
	})
}

// TestBacklogAtItsBoundIsNotScannedPastAtEveryWake: while every
// destination with a backlog is at its bound, a dispatch woken for a freed
// slot or turn does not scan the due rows again (it could only pass over
// them) until rescanAfter has passed; a Wake (rows stored for another
// destination, a resend, another instance's commit) makes it scan at once.
func TestBacklogAtItsBoundIsNotScannedPastAtEveryWake(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		ctx := context.Background()
		rs := newReceiver(t, ok)
		f := newFixture(t, d, rs.URL+"/hook", func(c *Config) { c.PollInterval = time.Hour; c.PerHost = 1 })
		row := f.enqueue(t, f.envelope("pending", payload.TransportGET)) // due, for another destination
		busy := &entdb.Notification{Host: "busy.example:443"}
		f.d.mu.Lock()
		clear(f.d.backlog)
		f.d.backlog[busy.Host] = true
		f.d.takeSlot(busy, t0) // its one slot is taken
		f.d.scannedAt = clock.Now()
		f.d.rescan = false
		f.d.mu.Unlock()

		n, again, err := f.d.dispatch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 || again <= 0 || again > rescanAfter {
			t.Fatalf("dispatch claimed %d, looks again in %v; want nothing claimed, again within %v", n, again, rescanAfter)
		}
		if got := f.reload(t, row); got.Attempts != 0 {
			t.Fatal("the skipped dispatch claimed the row")
		}
		f.d.Wake()
		if n, _, err = f.d.dispatch(ctx); err != nil || n != 1 {
			t.Fatalf("dispatch after Wake claimed %d (%v), want the due row", n, err)
		}
		f.d.mu.Lock()
		f.d.freeSlot(busy)
		f.d.mu.Unlock()
		f.d.sends.Wait()
		if got := f.reload(t, row); got.Status != notification.StatusAcknowledged {
			t.Fatalf("row %s after the dispatch, want acknowledged", got.Status)
		}
	})
}

// TestPullParkedSharesTheNewDestinationsRoom: new destinations (never
// attempted here) with parked first attempts have their rows pulled
// forward only as far as their share has room, oldest park first: with a
// share of 2 (8 workers), one attempt in it already, one destination's row
// of five is pulled; destinations whose parked rows are retries only are
// never looked at (parking them does not make them pullable).
func TestPullParkedSharesTheNewDestinationsRoom(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		hooks := []string{"http://192.0.2.1:9/hook", "http://192.0.2.1:10/hook", "http://192.0.2.1:11/hook", "http://192.0.2.1:12/hook", "http://192.0.2.1:13/hook", "http://192.0.2.1:14/hook"} // never dialled
		f := newFixture(t, d, hooks[0], func(c *Config) {
			c.Workers = 8
			c.AllowPrivateEndpoints = allow(hooks...)
		})
		ctx := context.Background()
		rows := map[string]*entdb.Notification{}
		var hosts []string
		for i, h := range hooks {
			e := f.envelope("pending", payload.TransportGET)
			e.CallbackURL = h
			r := f.enqueue(t, e)
			rows[r.Host] = r
			hosts = append(hosts, r.Host)
			if i == len(hooks)-1 { // a retry: its destination failed before
				if err := f.db.Client.Notification.UpdateOneID(r.ID).SetAttempts(1).SetStatus(notification.StatusRetrying).Exec(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Each row parked (as a full share's destinations are), in host
		// order.
		until := t0.Add(5 * time.Second) // within the park horizon
		for i, h := range hosts {
			if err := f.db.Client.Notification.UpdateOneID(rows[h].ID).SetNextAttemptAt(until.Add(time.Duration(i) * time.Second)).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		f.d.mu.Lock()
		for i, h := range hosts[:len(hosts)-1] {
			f.d.pullable[h] = t0.Add(time.Duration(i) * time.Millisecond) // parked in this order
		}
		f.d.parkScanAt = t0              // the database was looked at just now
		f.d.newActive, f.d.active = 1, 1 // one attempt in the share already
		f.d.mu.Unlock()

		pulled, err := f.d.pullParked(ctx)
		if err != nil || pulled != 1 {
			t.Fatalf("pulled %d (%v), want 1: the room left in the new destinations' share", pulled, err)
		}
		if got := f.reload(t, rows[hosts[0]]).NextAttemptAt; !got.Equal(t0) {
			t.Fatalf("the oldest parked destination's row is due at %v, want now", got)
		}
		for _, h := range hosts[1:] {
			if got := f.reload(t, rows[h]).NextAttemptAt; !got.After(t0) {
				t.Fatalf("%s's row was pulled too", h)
			}
		}
		// Every share slot free: the rest of the new destinations, two (the
		// share) at a time; the retry's destination never.
		f.d.mu.Lock()
		f.d.newActive, f.d.active = 0, 0
		f.d.mu.Unlock()
		if pulled, err := f.d.pullParked(ctx); err != nil || pulled != 2 {
			t.Fatalf("pulled %d (%v), want 2: the share", pulled, err)
		}
		if got := f.reload(t, rows[hosts[len(hosts)-1]]).NextAttemptAt; !got.After(t0) {
			t.Fatal("a retry was pulled forward")
		}
	})
}
