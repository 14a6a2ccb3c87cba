package notifier

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier/egress"
)

// Dispatcher delivers what the Queue holds: it claims due notifications
// (or takes them as they are stored, when it has a free slot), makes each
// attempt through the egress client, records every outcome with the next
// schedule, and parks the backlog of a destination stuck at its
// concurrency bound so claims never rescan it.
type Dispatcher struct {
	db     *store.DB
	cfg    Config
	logger *slog.Logger
	queue  *Queue
	events *Events
	client *egress.Client

	wake chan struct{}

	mu           sync.Mutex
	active       int                      // attempts in flight
	perHost      map[string]int           // attempts in flight per destination
	inflight     map[string]int           // attempts in flight per sequence
	parkedAt     map[string]time.Time     // destinations parked, when last
	pullable     map[string]time.Time     // destinations with parked first attempts, since when (pullParked)
	parkScanAt   time.Time                // last look for parked rows in the database
	hostDuration map[string]time.Duration // recent attempt duration per destination
	fullSince    map[string]time.Time     // destinations at their bound, since when
	// trusted are the destinations whose last attempt got an answer, and
	// failing those whose last attempt got none, since that attempt;
	// failingActive counts the attempts in flight to destinations that
	// are not trusted; forgotAt is when idle ones were last forgotten
	// (failing.go).
	trusted       map[string]time.Time
	failing       map[string]time.Time
	failingActive int
	newActive     int // attempts in flight to new destinations
	forgotAt      time.Time
	// backlog holds the destinations this instance has left due rows of
	// for the dispatch loop (for want of a slot): rows stored for them
	// meanwhile join the queue behind those instead of taking the next
	// free slot, so a busy destination gets its notifications in the order
	// they became due. A claim whose scan sees every due row clears it.
	backlog map[string]bool
	// Throttled endpoints (throttle.go): when each endpoint's rate was
	// read, the rates of those that have one (what each capacity copies),
	// the tokens taken ahead, and until when each bucket is known empty.
	throttle Throttle
	rates    map[int64]time.Time
	limited  map[int64]int
	reserve  map[int64]int
	dryUntil map[int64]time.Time
	// scannedAt is when the last claim scanned the due rows; rescan asks
	// the next dispatch to scan whatever it knows (Wake). See dispatch.
	scannedAt time.Time
	rescan    bool
	handOff   bool          // the loop runs: rows are claimed as stored
	held      heldQueue     // rows stored leased, waiting in memory (held.go)
	toSign    chan *heldRow // held rows for the signers, in the order they became ready
	heldSwept time.Time     // when the loop last looked at every destination's held rows
	parking   sync.Mutex    // held while a park runs
	sends     sync.WaitGroup

	sendCtx    context.Context
	sendCancel context.CancelFunc

	results      chan result
	recorderDone chan struct{}

	startstop.Base
}

// Rules are the destination rules every attempt applies (the egress
// client's, with the operator's exceptions, each bound to one owner), for
// refusing a destination before it is stored: check with the owner the
// notification will have.
func (d *Dispatcher) Rules() *egress.Rules { return d.client.Rules() }

func newDispatcher(db *store.DB, cfg Config, q *Queue, events *Events, logger *slog.Logger) (*Dispatcher, error) {
	client, err := egress.New(cfg.egress())
	if err != nil {
		return nil, err
	}
	sendCtx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{
		db:           db,
		cfg:          cfg,
		logger:       logger,
		queue:        q,
		events:       events,
		client:       client,
		wake:         make(chan struct{}, 1),
		perHost:      map[string]int{},
		inflight:     map[string]int{},
		parkedAt:     map[string]time.Time{},
		pullable:     map[string]time.Time{},
		hostDuration: map[string]time.Duration{},
		fullSince:    map[string]time.Time{},
		failing:      map[string]time.Time{},
		trusted:      map[string]time.Time{},
		backlog:      map[string]bool{},
		throttle:     cfg.Throttle,
		rates:        map[int64]time.Time{},
		limited:      map[int64]int{},
		reserve:      map[int64]int{},
		dryUntil:     map[int64]time.Time{},
		held:         newHeldQueue(),
		toSign:       make(chan *heldRow, max(cfg.Hold, 1)),
		sendCtx:      sendCtx,
		sendCancel:   cancel,
		results:      make(chan result, 1024),
		recorderDone: make(chan struct{}),
	}
	if d.throttle == nil {
		d.throttle = &localThrottle{now: cfg.Now, buckets: map[int64]*localBucket{}}
	}
	q.handOff = d
	go d.recordLoop()
	return d, nil
}

// Wake tells the dispatcher that work may be due; it never blocks. The
// next dispatch scans for due rows whatever it knows of them.
func (d *Dispatcher) Wake() {
	d.mu.Lock()
	d.rescan = true
	d.mu.Unlock()
	d.signal()
}

// signal wakes the loop for a slot or a sequence's turn that freed up:
// the dispatch scans only if a destination with a backlog can take more
// (see dispatch).
func (d *Dispatcher) signal() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Start runs the dispatch loop in the background and returns at once;
// from then on notifications are also claimed as they are stored. A
// dispatcher starts once (startstop.ErrStarted).
func (d *Dispatcher) Start(ctx context.Context) error {
	ctx, err := d.StartInit(ctx)
	if err != nil {
		return err
	}
	// From now on, not once the loop has begun: a row stored right after
	// Start is claimed or held as it is stored, like every later one.
	d.mu.Lock()
	d.handOff = true
	d.mu.Unlock()
	d.Go(func() { d.loop(ctx) })
	for range runtime.GOMAXPROCS(0) {
		d.Go(func() { d.signHeld(ctx) })
	}
	return nil
}

// Stop stops claiming work, lets attempts in flight finish for up to
// StopTimeout, then cancels the rest (recorded as interrupted, retried at
// the next start), and stops the recorder. Queued work stays in the
// database. Stop is idempotent and waits; the dispatcher cannot be started
// again.
func (d *Dispatcher) Stop() {
	d.mu.Lock()
	d.handOff = false // before waiting for sends: no slot is taken after
	d.mu.Unlock()
	d.StopOnce(func() {
		d.Wait() // the loop
		defer func() {
			close(d.results)
			<-d.recorderDone
		}()
		done := make(chan struct{})
		go func() { d.sends.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(d.cfg.StopTimeout):
			d.sendCancel()
			<-done
		}
		d.sendCancel()
		// Once the attempts in flight are recorded: a row held behind one of
		// its sequence is not due before that attempt ends.
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.StopTimeout)
		if err := d.giveBackAll(ctx); err != nil {
			d.logger.Warn("give back held notifications; they are taken over when their leases lapse", "error", err)
		}
		cancel()
	})
}

func (d *Dispatcher) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		d.sweepHeld(ctx)
		_, again, err := d.dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			d.logger.Error("claim notifications", "error", err)
		}
		wait := d.cfg.PollInterval
		if err == nil && again > 0 && d.hasCapacity() {
			// More may be due (see dispatch). A destination at its bound
			// with a large backlog costs a scan past it a few times a
			// second, not once per slot freed; its own rows are claimed as
			// its slots free (which wakes the loop).
			wait = min(wait, again)
		}
		if wait > atOnce {
			if due, ok, err := d.nextDue(ctx); err == nil && ok {
				if w := due.Sub(d.cfg.Now()); w < wait {
					wait = max(w, 0)
				}
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

// atOnce is dispatch's answer "look again at once" (0 is "not before a
// wake-up").
const atOnce = time.Nanosecond

// rescanAfter is how soon the loop looks again for other destinations' due
// rows after a claim stopped at its limit among rows of a destination at
// its bound.
const rescanAfter = 250 * time.Millisecond

func (d *Dispatcher) hasCapacity() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active < d.cfg.Workers
}

// RunDue delivers every notification due at the clock's current time and
// returns when their attempts have been recorded. Retries that become due
// later are left for a later call. Tests drive delivery with it; the
// background loop uses the same claim and send path.
func (d *Dispatcher) RunDue(ctx context.Context) error {
	for {
		d.mu.Lock()
		d.rescan = true // every due row, whatever the pace of scans
		d.mu.Unlock()
		claimed, _, err := d.dispatch(ctx)
		if err != nil {
			return err
		}
		d.sends.Wait()
		if claimed == 0 {
			return nil
		}
	}
}

// capacity is a view of what this instance can still start: free workers,
// attempts per destination, and sequences that must wait (an attempt in
// flight, or an earlier notification not yet started). It holds the claim
// rules, which both ways of claiming apply: claim, for due rows in due
// order, and claimStored, for rows as they are stored.
type capacity struct {
	free       int
	perHostMax int
	perHost    map[string]int
	// trusted and failing are the standings of the destinations among the
	// rows being claimed (addTrust): those not trusted take one attempt at
	// a time each, and failingRoom (failing ones) or newRoom (the others)
	// more in all (failing.go).
	trusted, failing     map[string]bool
	failingRoom, newRoom int
	sequences            map[string]bool
	// tokens are the starts left to each throttled endpoint (throttle.go).
	tokens map[int64]int
}

// capacity returns the current view; d.mu must be held.
func (d *Dispatcher) capacity() *capacity {
	c := &capacity{free: d.cfg.Workers - d.active, perHostMax: d.cfg.PerHost, perHost: maps.Clone(d.perHost), sequences: make(map[string]bool, len(d.inflight)), tokens: map[int64]int{},
		failingRoom: d.failingMax() - d.failingActive, newRoom: d.newMax() - d.newActive}
	for seq := range d.inflight {
		c.sequences[seq] = true
	}
	d.addThrottles(c)
	return c
}

func (c *capacity) clone() *capacity {
	return &capacity{free: c.free, perHostMax: c.perHostMax, perHost: maps.Clone(c.perHost), trusted: maps.Clone(c.trusted), failing: maps.Clone(c.failing), failingRoom: c.failingRoom, newRoom: c.newRoom, sequences: maps.Clone(c.sequences), tokens: maps.Clone(c.tokens)}
}

// allows reports whether row may start an attempt now: a worker and a slot
// of its destination are free (so a dead endpoint cannot hold every
// worker; a destination not trusted has one slot, and those together a
// share of the workers), no notification of its sequence is in flight or waiting
// before it (so first attempts keep the order in which they were stored),
// and its endpoint, if throttled, has a token left.
func (c *capacity) allows(row *entdb.Notification) bool {
	limit := c.perHostMax
	if !c.trusted[row.Host] {
		if *c.room(row.Host) <= 0 {
			return false
		}
		limit = 1
	}
	return c.free > 0 && c.perHost[row.Host] < limit && !c.sequenceWaits(row) && !c.dry(row)
}

// room returns the room left in the share of host, not trusted.
func (c *capacity) room(host string) *int {
	if c.failing[host] {
		return &c.failingRoom
	}
	return &c.newRoom
}

// dry reports whether row's endpoint is throttled and has no token left.
func (c *capacity) dry(row *entdb.Notification) bool {
	if row.EndpointID == nil {
		return false
	}
	t, ok := c.tokens[*row.EndpointID]
	return ok && t <= 0
}

// sequenceWaits reports whether row waits for an earlier notification of
// its sequence.
func (c *capacity) sequenceWaits(row *entdb.Notification) bool {
	return row.Sequence != nil && c.sequences[*row.Sequence]
}

// take counts row's attempt as started.
func (c *capacity) take(row *entdb.Notification) {
	c.free--
	c.perHost[row.Host]++
	if !c.trusted[row.Host] {
		*c.room(row.Host)--
	}
	if row.EndpointID != nil {
		if t, ok := c.tokens[*row.EndpointID]; ok {
			c.tokens[*row.EndpointID] = t - 1
		}
	}
	c.hold(row)
}

// hold makes later notifications of row's sequence wait for it.
func (c *capacity) hold(row *entdb.Notification) {
	if row.Sequence != nil {
		c.sequences[*row.Sequence] = true
	}
}

// waiter is the latest undelivered notification of a sequence that a new
// one must follow: when it is due and where it goes.
type waiter struct {
	at   time.Time
	host string
}

// waitingSequences returns, for those of seqs that have an undelivered
// notification never attempted (due, or parked for later) or due at now,
// the latest such: a new notification of the sequence is due no earlier,
// so the first attempts keep their order even when the earlier one was
// parked. This instance's attempts in flight and held rows are in its
// memory (capacity, held). (A first attempt another instance has leased
// is not seen: a payment's notifications are stored by the instance
// holding its ticker's watcher lease.) On PostgreSQL each sequence is
// looked up on its own (a lateral join with a limit: one probe of the
// sequence index each); the list as
// one IN condition reads, without statistics, every queued notification
// instead (the status index looks more selective than a few hundred
// sequences).
func (d *Dispatcher) waitingSequences(ctx context.Context, tx *entdb.Tx, seqs []string, now time.Time) (map[string]waiter, error) {
	out := map[string]waiter{}
	if d.db.Dialect != store.Postgres {
		rows, err := tx.Notification.Query().
			Where(notification.SequenceIn(seqs...),
				notification.StatusIn(notification.StatusPending, notification.StatusRetrying),
				notification.NextAttemptAtNotNil(),
				notification.Or(notification.Attempts(0), notification.NextAttemptAtLTE(now))).
			Select(notification.FieldSequence, notification.FieldNextAttemptAt, notification.FieldHost).
			All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if w, ok := out[*r.Sequence]; !ok || r.NextAttemptAt.After(w.at) {
				out[*r.Sequence] = waiter{at: *r.NextAttemptAt, host: r.Host}
			}
		}
		return out, nil
	}
	args := make([]any, len(seqs))
	for i, s := range seqs {
		args[i] = s
	}
	rows, err := tx.QueryContext(ctx, `SELECT s.seq, w.next_attempt_at, w.host FROM unnest($1::text[]) AS s(seq)
		CROSS JOIN LATERAL (SELECT n.next_attempt_at, n.host FROM notifications n
			WHERE n.sequence = s.seq AND n.next_attempt_at IS NOT NULL AND n.status IN ('pending', 'retrying')
				AND (n.attempts = 0 OR n.next_attempt_at <= $2)
			ORDER BY n.next_attempt_at DESC LIMIT 1) AS w`,
		store.Array(args), now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		var w waiter
		if err := rows.Scan(&s, &w.at, &w.host); err != nil {
			return nil, err
		}
		out[s] = w
	}
	return out, rows.Err()
}

// stored is what claimStored decided for a transaction's rows.
type stored struct {
	claims []claim
	// held are the rows stored leased to wait in memory (held.go).
	held []*heldRow
	// wakeFor holds the destinations of the rows left due for the
	// dispatch loop (or, for a row waiting for an earlier one of its
	// sequence, the earlier one's): once the rows are committed, the loop
	// is woken if one of them has a free slot. Otherwise the attempt that
	// frees one wakes it.
	wakeFor map[string]bool
}

// claimStored claims, as they are stored, the notifications this instance
// has a free slot for (the capacity's rules, with the sequences that have
// an earlier notification due held back: it goes first, through the
// dispatch loop): they are inserted already leased, with their first
// attempt counted, and sent as soon as the transaction commits, which saves
// the claim's query and update and their round trips. Nothing is claimed
// while the dispatch loop is not running, nor for a destination with due
// rows left for the loop (the backlog: they go first). A notification
// whose sequence has an earlier one parked for later is stored due when
// that one is.
func (d *Dispatcher) claimStored(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification, first map[*entdb.Notification]bool) (stored, error) {
	now := d.cfg.Now()
	var seqs []string
	for _, r := range rows {
		if r.Sequence != nil && !first[r] {
			seqs = append(seqs, *r.Sequence)
		}
	}
	waiting := map[string]waiter{}
	if len(seqs) > 0 {
		var err error
		if waiting, err = d.waitingSequences(ctx, tx, seqs, now); err != nil {
			return stored{}, fmt.Errorf("check earlier notifications: %w", err)
		}
	}
	if err := d.loadRates(ctx, tx, rows); err != nil {
		return stored{}, err
	}
	until := now.Add(d.cfg.Lease)
	out := stored{wakeFor: map[string]bool{}}
	d.mu.Lock()
	defer d.mu.Unlock()
	on := d.handOff && d.active < d.cfg.Workers
	// Rows of a sequence with rows held here are held behind them.
	heldSeq := func(r *entdb.Notification) bool { return r.Sequence != nil && d.held.hasSeq(*r.Sequence) }
	capa := d.capacity()
	d.addTrust(capa, rows)
	later := map[string]time.Time{} // sequences of this batch stored due later
	dueSeq := map[string]bool{}     // sequences with a row of this batch stored due
	for _, r := range rows {
		if r.Sequence != nil {
			seq := *r.Sequence
			at := later[seq]
			if w, ok := waiting[seq]; ok && w.at.After(at) {
				at = w.at
			}
			if at.After(now) {
				// An earlier notification of its sequence is parked: this
				// one is due with it (after it: its id is greater).
				r.NextAttemptAt = &at
				later[seq] = at
				capa.hold(r)
				continue
			}
			if w, ok := waiting[seq]; ok {
				capa.hold(r) // the earlier one is due: it goes first
				out.wakeFor[w.host] = true
				continue
			}
			if d.held.returning[seq] > 0 || dueSeq[seq] {
				// Rows of its sequence are being given back, or were stored
				// due in this batch: it is stored due, behind them (their
				// due time is their creation), never held or sent first.
				capa.hold(r)
				dueSeq[seq] = true
				out.wakeFor[r.Host] = true
				continue
			}
		}
		if capa.dry(r) {
			// Its endpoint has no token left: stored due, for the dispatch
			// loop, which takes more (throttle.go).
			if r.Sequence != nil {
				dueSeq[*r.Sequence] = true
			}
			capa.hold(r)
			out.wakeFor[r.Host] = true
			continue
		}
		if !on || d.backlog[r.Host] || heldSeq(r) || !capa.allows(r) {
			if d.handOff && d.canHold(r) {
				capa.hold(r)
				out.held = append(out.held, d.hold(r, now))
				continue
			}
			if heldSeq(r) {
				// Behind rows held here, past the bounds: due when the last
				// one's lease ends (it has started and been recorded by then,
				// or been given back ahead of this one).
				held := d.held.bySeq[*r.Sequence]
				at := *held[len(held)-1].n.LeaseUntil
				r.NextAttemptAt = &at
				later[*r.Sequence] = at
				capa.hold(r)
				continue
			}
			if r.Sequence != nil {
				dueSeq[*r.Sequence] = true
			}
			if !capa.sequenceWaits(r) {
				d.backlog[r.Host] = true
			}
			capa.hold(r)
			out.wakeFor[r.Host] = true
			continue
		}
		if _, unsigned := d.queue.storedSigner(r); unsigned && d.canHold(r) {
			// A row to sign once (RSA) is held, to start once signed
			// (signHeld); otherwise its attempt signs it.
			capa.hold(r)
			out.held = append(out.held, d.hold(r, now))
			continue
		}
		capa.take(r)
		d.takeSlot(r, now)
		r.Attempts = 1
		r.LeaseUntil, r.LeaseOwner, r.NextAttemptAt = &until, d.cfg.InstanceID, &until
		out.claims = append(out.claims, claim{n: r, number: 1, started: now})
	}
	return out, nil
}

// sendStored starts the attempts of rows claimed as stored, once stored,
// and wakes the dispatch loop if a row it left due can be claimed now.
func (d *Dispatcher) sendStored(st stored) {
	for _, c := range st.claims {
		cp := *c.n // the sender's copy (its id is set now); the producer keeps its row
		c.n = &cp
		go d.send(c)
	}
	if len(st.held) > 0 {
		d.readyHeld(st.held)
	}
	if len(st.wakeFor) == 0 {
		return
	}
	// Checked after the commit: a slot freed before it was seen free here,
	// one freed after it wakes the loop itself, which then sees the rows.
	// Rows of destinations with a backlog are found by the dispatch when one
	// of them has a free slot; others need a scan.
	d.mu.Lock()
	wake, known := !d.handOff, true
	for h := range st.wakeFor {
		wake = wake || d.hasSlot(h)
		known = known && d.backlog[h]
	}
	if wake && !known {
		d.rescan = true
	}
	d.mu.Unlock()
	if wake {
		d.signal()
	}
}

// abandon gives back the slots of rows claimed as stored whose transaction
// did not commit.
func (d *Dispatcher) abandon(st stored) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range st.claims {
		d.freeSlot(c.n)
	}
	for _, h := range st.held {
		d.held.drop(h)
		d.held.compact(h.n.Host)
	}
}
