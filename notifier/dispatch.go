package notifier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/predicate"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
)

// claim is one notification reserved for an attempt by this instance: the
// row as claimed (attempts already counts this attempt) and its number.
// The attempt's row is written once, with its outcome; while it runs, the
// notification's lease and attempt count say it is in flight.
type claim struct {
	n       *entdb.Notification
	number  int
	started time.Time
	// resend: claimed for a manual resend (Queue.Resend); oneShot: that
	// resend's one attempt outside the automatic schedule (the row is
	// acknowledged or past its deadline).
	resend, oneShot bool
	// presigned: n's signature made once was made while it was held
	// (signHeld); its record stores it.
	presigned bool
}

// dispatch claims as many due notifications as free capacity allows and
// starts their attempts in the background. It returns how many it claimed
// (or pulled forward from a park, or took tokens for: throttle.go), and when to look again (again): at
// once (more may be due: the claim stopped at its limit, or parked rows
// were made due), soon (the claim stopped at its limit but left rows of a
// destination at its bound: rows of others may be behind them), or not
// before a wake-up (zero: everything due was seen).
func (d *Dispatcher) dispatch(ctx context.Context) (claimed int, again time.Duration, err error) {
	d.mu.Lock()
	capa := d.capacity()
	free := min(capa.free, d.cfg.Batch)
	var full []string
	for h := range capa.perHost {
		if d.blocked(h) {
			full = append(full, h)
		}
	}
	if failingFull, newFull := d.failingFull(), d.newFull(); failingFull || newFull {
		// Every destination not trusted that payhook knows of (failing, or
		// with rows left by a claim) whose share is full waits for it: the
		// claim skips them, and their due rows are parked like those of a
		// destination at its bound.
		now := d.cfg.Now()
		listed := make(map[string]bool, len(full))
		for _, h := range full {
			listed[h] = true
		}
		wait := func(h string) {
			if capa.perHost[h] == 0 && !listed[h] {
				listed[h] = true
				full = append(full, h)
			}
			if _, ok := d.fullSince[h]; !ok {
				d.fullSince[h] = now
			}
		}
		if failingFull {
			for h := range d.failing {
				wait(h)
			}
		}
		for h := range d.backlog {
			if d.untrusted(h) && d.shareFull(h) {
				wait(h)
			}
		}
	}
	busy := make([]string, 0, len(capa.sequences))
	for seq := range capa.sequences {
		busy = append(busy, seq)
	}
	if free <= 0 {
		d.mu.Unlock()
		return 0, 0, nil
	}
	// The scan is skipped when it could only pass over rows it cannot
	// claim: every destination with a backlog is still at its bound,
	// nothing asked for a scan since the last one (Wake: rows stored for
	// another destination or resent, an attempt interrupted, another
	// instance's commit), and that one was less than rescanAfter ago (rows
	// of other destinations that came due by time meanwhile wait that long
	// at most). Without it, the backlog of a destination at its bound would
	// be scanned past at every slot freed. (A pace of work, not a schedule:
	// it runs on the wall clock.)
	wall := clock.Now()
	if since := wall.Sub(d.scannedAt); !d.rescan && since < rescanAfter && d.backlogFull() {
		d.mu.Unlock()
		return 0, rescanAfter - since, nil
	}
	d.rescan = false
	d.scannedAt = wall
	d.mu.Unlock()
	capa.free = free
	d.parkSaturated(full)
	res, err := d.claim(ctx, capa, full, busy, d.dryEndpoints(d.cfg.Now()))
	if err != nil {
		return 0, 0, err
	}
	claims, events := res.claims, res.events
	d.events.publish(events)
	d.mu.Lock()
	now := d.cfg.Now()
	for _, c := range claims {
		d.takeSlot(c.n, now)
	}
	d.mu.Unlock()
	for _, c := range claims {
		go d.send(c)
	}
	pulled := 0
	if len(claims) < free {
		// Nothing more is due: a parked destination with free slots takes
		// its next parked rows now.
		if pulled, err = d.pullParked(ctx); err != nil {
			d.logger.Warn("pull parked rows forward", "error", err)
		}
	}
	switch {
	case pulled > 0 || (res.truncated && !res.bound):
		again = atOnce
	case res.truncated:
		again = rescanAfter
	}
	// Throttled endpoints whose rows waited for a token take more.
	// (Tokens taken count as work done: the rows they are for are claimed
	// next.)
	tokens, refilled, err := d.refill(ctx, res.wantTokens)
	if err != nil {
		d.logger.Warn("take tokens of throttled endpoints", "error", err)
	}
	if refilled > 0 && (again == 0 || refilled < again) {
		again = refilled
	}
	return len(claims) + pulled + tokens, again, nil
}

// backlogFull reports whether every destination with a backlog is at its
// bound (and there is one). d.mu must be held.
func (d *Dispatcher) backlogFull() bool {
	for h := range d.backlog {
		if !d.blocked(h) {
			return false
		}
	}
	return len(d.backlog) > 0
}

// hasSlot reports whether an attempt to host could start now: a worker and
// a slot of host are free. d.mu must be held.
func (d *Dispatcher) hasSlot(host string) bool {
	return d.active < d.cfg.Workers && !d.blocked(host)
}

// pullParked makes due now, for each destination with parked first
// attempts and free slots after a claim found nothing more due for it,
// that many of its parked first attempts, earliest first. Parking paces a
// backlog at the destination's recent attempt duration; when it speeds up
// (a slow or dead endpoint recovers), this lets it take its backlog as
// fast as it now goes instead of waiting out the park. Retries are left on
// their schedule. A destination with nothing parked left is forgotten. It
// returns how many rows it made due. Each look is one probe of the parked
// index (notification_parked).
func (d *Dispatcher) pullParked(ctx context.Context) (int, error) {
	now := d.cfg.Now()
	if err := d.findParked(ctx, now); err != nil {
		return 0, err
	}
	free := map[string]int{}
	d.mu.Lock()
	// The new destinations (not failing, not yet trusted) share one
	// budget: the room left in their share of the workers, taken oldest
	// park first. Without it, each of a thousand waiting destinations
	// would get a row pulled (and a query) whenever the share had one free
	// slot, and the next claim would park them all again.
	room := d.newMax() - d.newActive
	var untrusted []string
	for h := range d.pullable {
		if _, failing := d.failing[h]; failing {
			// A failing destination's rows come back on their park; an
			// answer (which makes it trusted) lets this pull them again.
			continue
		}
		f := d.limitOf(h) - d.perHost[h]
		if f <= 0 || d.active >= d.cfg.Workers {
			continue
		}
		if d.untrusted(h) {
			if room > 0 {
				untrusted = append(untrusted, h)
			}
			continue
		}
		free[h] = f
	}
	slices.SortFunc(untrusted, func(a, b string) int { return d.pullable[a].Compare(d.pullable[b]) })
	d.mu.Unlock()
	pulled := 0
	for _, h := range untrusted {
		if room <= 0 {
			break
		}
		n, err := d.pull(ctx, h, 1, now)
		if err != nil {
			return pulled, err
		}
		pulled += n
		room -= n
	}
	for h, f := range free {
		n, err := d.pull(ctx, h, f, now)
		if err != nil {
			return pulled, err
		}
		pulled += n
	}
	return pulled, nil
}

// pull makes up to n of host's parked first attempts due now, earliest
// first, and forgets host as pullable when it has none left.
func (d *Dispatcher) pull(ctx context.Context, host string, n int, now time.Time) (int, error) {
	parked := []predicate.Notification{
		notification.Host(host), firstAttempt(),
		notification.NextAttemptAtGT(now), notification.NextAttemptAtLTE(now.Add(d.parkHorizon() + d.parkFor())),
	}
	ids, err := d.db.Client.Notification.Query().Where(parked...).
		Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
		Limit(n).IDs(ctx)
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		d.mu.Lock()
		delete(d.pullable, host)
		d.mu.Unlock()
		return 0, nil
	}
	return d.db.Client.Notification.Update().
		Where(append(parked, notification.IDIn(ids...))...).
		SetNextAttemptAt(now).
		Save(ctx)
}

// firstAttempt selects the rows never attempted nor leased: those of the
// parked index (notification_parked). Its terms are literals, as the
// index's predicate, so SQLite's planner can use the partial index too
// (it does not match a bound parameter against it).
func firstAttempt() predicate.Notification {
	return predicate.Notification(func(s *entsql.Selector) {
		s.Where(entsql.ExprP(fmt.Sprintf("%s = 0 AND %s IS NULL", s.C(notification.FieldAttempts), s.C(notification.FieldLeaseUntil))))
	})
}

// takeSlot counts an attempt of row as started: a worker, a slot of its
// destination and its sequence's turn. d.mu must be held. The slot is
// given back by send, the sequence's turn and sends by recordBatch.
func (d *Dispatcher) takeSlot(row *entdb.Notification, now time.Time) {
	d.spendToken(row)
	d.perHost[row.Host]++
	d.startCounted(row.Host)
	if d.perHost[row.Host] >= d.limitOf(row.Host) {
		if _, ok := d.fullSince[row.Host]; !ok {
			d.fullSince[row.Host] = now
		}
	}
	d.active++
	if row.Sequence != nil {
		d.inflight[*row.Sequence]++
	}
	d.sends.Add(1) // Done when the attempt is recorded
}

// freeSlot gives back what takeSlot took, for an attempt that never
// started. d.mu must be held.
func (d *Dispatcher) freeSlot(row *entdb.Notification) {
	d.releaseWorker(row.Host)
	d.releaseSequence(row.Sequence)
	d.sends.Done()
}

// releaseWorker gives back an attempt's worker and destination slot and
// reports whether either was the limit (only then can rows waiting for a
// slot become claimable). d.mu must be held.
func (d *Dispatcher) releaseWorker(host string) (wasFull bool) {
	wasFull = d.active >= d.cfg.Workers || d.blocked(host)
	d.endCounted(host)
	d.active--
	if d.perHost[host]--; d.perHost[host] <= 0 {
		delete(d.perHost, host)
		if _, parked := d.parkedAt[host]; !parked {
			delete(d.hostDuration, host) // idle: forget it
		}
	}
	delete(d.fullSince, host) // below its bound again
	return wasFull
}

// releaseSequence gives back a sequence's turn (nil: no sequence). d.mu
// must be held.
func (d *Dispatcher) releaseSequence(seq *string) {
	if seq == nil {
		return
	}
	if d.inflight[*seq]--; d.inflight[*seq] <= 0 {
		delete(d.inflight, *seq)
	}
}

// findParked, at most once per parkFor, looks up the destinations with
// parked first attempts in the database, so rows parked by an instance
// that has since stopped (or by this one before a restart) are pulled
// forward too, not only those this instance remembers parking.
func (d *Dispatcher) findParked(ctx context.Context, now time.Time) error {
	d.mu.Lock()
	due := now.Sub(d.parkScanAt) >= d.parkFor()
	if due {
		d.parkScanAt = now
	}
	d.mu.Unlock()
	if !due {
		return nil
	}
	hosts, err := d.db.Client.Notification.Query().
		Where(firstAttempt(),
			notification.NextAttemptAtGT(now), notification.NextAttemptAtLTE(now.Add(d.parkHorizon()+d.parkFor()))).
		Unique(true).
		Select(notification.FieldHost).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("find parked destinations: %w", err)
	}
	d.mu.Lock()
	for _, h := range hosts {
		if _, ok := d.pullable[h]; !ok {
			d.pullable[h] = now
		}
	}
	d.mu.Unlock()
	return nil
}

// parkAfter is how long a destination must stay at its concurrency bound
// before its due rows are parked.
const parkAfter = 250 * time.Millisecond

// parkFor is how long the due rows of a destination at its concurrency
// bound are set aside: a third of the attempt timeout (a slot of a hanging
// endpoint frees up no sooner), at least 2 seconds.
func (d *Dispatcher) parkFor() time.Duration {
	return max(d.cfg.AttemptTimeout/3, 2*time.Second)
}

// parkSaturated moves the due rows of destinations at their concurrency
// bound parkFor into the future, at most once per parkFor per destination.
// Without it, every claim would scan past all of them: ten thousand
// notifications queued for a dead endpoint would slow every claim. The
// oldest 2 x PerHost due rows of each destination stay due, so its slots
// are refilled as soon as they free up (a slow destination is not starved)
// and claims scan only those. A parked row keeps its schedule otherwise.
func (d *Dispatcher) parkSaturated(full []string) {
	if len(full) == 0 {
		return
	}
	now := d.cfg.Now()
	park := d.parkFor()
	var due []string
	d.mu.Lock()
	for h, at := range d.parkedAt {
		if now.Sub(at) > time.Minute+park {
			delete(d.parkedAt, h)
		}
	}
	if !d.parking.TryLock() {
		d.mu.Unlock()
		return
	}
	for _, h := range full {
		// Only a destination that has stayed at its bound for a while (its
		// attempts hang) is parked; a fast one that fills its slots for a
		// moment is not.
		since, ok := d.fullSince[h]
		if ok && now.Sub(since) >= parkAfter && now.Sub(d.parkedAt[h]) >= park {
			d.parkedAt[h] = now
			due = append(due, h)
		}
	}
	d.mu.Unlock()
	if len(due) == 0 {
		d.parking.Unlock()
		return
	}
	// In the background: the dispatcher goes on claiming meanwhile (claims
	// skip the rows a chunk locks).
	d.sends.Add(1)
	go func() {
		defer d.sends.Done()
		defer d.parking.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.park(ctx, due, now, park); err != nil {
			d.logger.Warn("park rows of saturated destinations", "hosts", due, "error", err)
		}
	}()
}

// parkHorizon is the furthest a row is parked: a destination that
// recovers gets its whole backlog due again within this time even if no
// instance is left to notice.
func (d *Dispatcher) parkHorizon() time.Duration {
	return 10 * d.parkFor()
}

// park reads the due rows of hosts once, in due order, and parks all but
// the oldest 2 x PerHost of each host: row k of a host is due again when the
// host's slots could take it at its recent attempt duration (k / PerHost
// attempt durations from now, at least unit, at most parkHorizon), so a slow
// destination gets its rows as fast as it takes them and a dead one's
// backlog is touched about once per horizon instead of once per park. The
// updates run in small transactions paced to take about half of one
// database connection's time, so the rest of the traffic barely notices.
func (d *Dispatcher) park(ctx context.Context, hosts []string, now time.Time, unit time.Duration) error {
	var rows []struct {
		ID       int64  `json:"id"`
		Host     string `json:"host"`
		Attempts int    `json:"attempts"`
	}
	if err := d.db.Client.Notification.Query().
		Where(
			notification.HostIn(hosts...),
			notification.NextAttemptAtLTE(now),
			notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now)),
			// A row whose window would close meanwhile keeps its last
			// chance of an attempt.
			notification.ExpiresAtGT(now.Add(d.parkHorizon())),
		).
		Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
		Select(notification.FieldID, notification.FieldHost, notification.FieldAttempts).
		Scan(ctx, &rows); err != nil {
		return err
	}
	d.mu.Lock()
	per := map[string]time.Duration{}
	keep := map[string]int{}
	for _, h := range hosts {
		keep[h] = 2 * d.limitOf(h)
		// The attempts in flight have lasted since the host filled up at
		// least: a lower bound before any of them ends.
		est := max(d.hostDuration[h], 100*time.Millisecond)
		if since, ok := d.fullSince[h]; ok {
			est = max(est, now.Sub(since))
		}
		per[h] = est / time.Duration(d.limitOf(h))
	}
	d.mu.Unlock()
	// Rows are grouped by the time they are parked until, rounded up to
	// the park unit, so each group is one UPDATE.
	groups := map[time.Time][]int64{}
	var order []time.Time
	seen := map[string]int{}
	first := map[string]bool{} // hosts with first attempts parked: pullParked may pull them
	for _, r := range rows {
		k := seen[r.Host]
		seen[r.Host]++
		if k < keep[r.Host] {
			continue // stays due
		}
		if r.Attempts == 0 {
			first[r.Host] = true
		}
		wait := min(max(time.Duration(k)*per[r.Host], unit), d.parkHorizon())
		until := now.Add(wait).Truncate(unit).Add(unit)
		if _, ok := groups[until]; !ok {
			order = append(order, until)
		}
		groups[until] = append(groups[until], r.ID)
	}
	defer func() { // once parked (a pull before would find nothing)
		d.mu.Lock()
		for h := range first {
			if _, ok := d.pullable[h]; !ok {
				d.pullable[h] = now
			}
		}
		d.mu.Unlock()
	}()
	const chunk = 100
	for _, until := range order {
		ids := groups[until]
		for start := 0; start < len(ids); start += chunk {
			began := clock.Now()
			if _, err := d.db.Client.Notification.Update().
				Where(notification.IDIn(ids[start:min(start+chunk, len(ids))]...), notification.NextAttemptAtLTE(now),
					notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now))).
				SetNextAttemptAt(until).
				Save(ctx); err != nil {
				return err
			}
			select { // pace: pause as long as the chunk took
			case <-time.After(time.Since(began)):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// claim reserves the due notifications that capa admits (in due order;
// see capacity for the rules): each gets a lease, committed before any
// request is sent, with one UPDATE for the whole batch. Rows whose
// previous lease lapsed with an attempt in flight get that attempt recorded
// as interrupted; rows past their window are failed instead of attempted,
// unless a resend is asked (Queue.Resend): those are attempted whatever
// their status and window.
// The destinations whose due rows the scan saw to the end are cleared
// from the backlog.
func (d *Dispatcher) claim(ctx context.Context, capa *capacity, fullHosts, busySequences []string, dry []int64) (claimed, error) {
	now := d.cfg.Now()
	until := now.Add(d.cfg.Lease)
	var claims []claim
	var events []*entdb.DeliveryEvent
	var left map[string]bool // destinations with rows left for want of a slot
	var want map[int64]int   // throttled endpoints' rows left for want of a token
	var whole bool           // the scan read every due row it could claim
	err := store.WithTx(ctx, d.db.Client, func(tx *entdb.Tx) error {
		claims, events, left, want = nil, nil, map[string]bool{}, map[int64]int{}
		if err := d.asyncCommit(ctx, tx); err != nil {
			return err
		}
		q := tx.Notification.Query().
			// next_attempt_at is set exactly while a row is pending or
			// retrying, or has a resend asked (whatever its status and
			// window), so the due index alone finds the work, in order,
			// and the scan stops at the limit. (A status condition here
			// lets the planner combine the status index and sort every due
			// row instead.)
			Where(
				notification.NextAttemptAtLTE(now),
				notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now)),
			).
			Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
			Limit(capa.free)
		// The capacity's rules decide below; these conditions only spare
		// the scan rows they would refuse anyway.
		if len(fullHosts) > 0 {
			q.Where(notification.HostNotIn(fullHosts...))
		}
		if len(busySequences) > 0 {
			q.Where(notification.Or(notification.SequenceIsNil(), notification.SequenceNotIn(busySequences...)))
		}
		if len(dry) > 0 {
			q.Where(notification.Or(notification.EndpointIDIsNil(), notification.EndpointIDNotIn(dry...)))
		}
		if d.db.Dialect == store.Postgres {
			q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
		}
		rows, err := q.All(ctx)
		if err != nil {
			return fmt.Errorf("select due: %w", err)
		}
		whole = len(rows) < capa.free
		if err := d.loadRates(ctx, tx, rows); err != nil {
			return err
		}
		lock := d.events.lock(ctx, tx)
		ids := make([]int64, 0, len(rows))
		capa := capa.clone() // this transaction may be retried
		d.mu.Lock()
		d.addThrottles(capa)
		d.addTrust(capa, rows)
		d.mu.Unlock()
		for _, row := range rows {
			if capa.dry(row) {
				want[*row.EndpointID]++
				capa.hold(row)
				continue
			}
			if !capa.allows(row) {
				if !capa.sequenceWaits(row) {
					left[row.Host] = true
				}
				// Its row lock ends with this transaction; a later row of
				// its sequence waits for it.
				capa.hold(row)
				continue
			}
			if row.LeaseUntil != nil && row.Attempts > 0 {
				// The lease lapsed: the instance holding it died mid-attempt.
				ev, err := d.interruptPrevious(ctx, tx, lock, row, now)
				if err != nil {
					return err
				}
				if ev != nil {
					events = append(events, ev)
				}
				row.Resend = row.Resend || d.lapsedResend(row)
			}
			// A resend is attempted whatever the row's status and window.
			if !row.Resend && now.After(row.ExpiresAt) {
				ev, err := d.expire(ctx, tx, lock, row, now)
				if err != nil {
					return err
				}
				events = append(events, ev)
				capa.hold(row)
				continue
			}
			capa.take(row)
			ids = append(ids, row.ID)
			row.Attempts++
			row.LeaseUntil, row.LeaseOwner, row.NextAttemptAt = &until, d.cfg.InstanceID, &until
			claims = append(claims, claim{n: row, number: row.Attempts, started: now, resend: row.Resend, oneShot: row.Resend && outsideSchedule(row, now)})
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Notification.Update().
			Where(notification.IDIn(ids...)).
			AddAttempts(1).
			SetLeaseUntil(until).
			// A leased row leaves the due range until its lease lapses, so
			// claims never scan past the attempts in flight, and a lapsed
			// lease is due again (taken over) without a poll.
			SetNextAttemptAt(until).
			SetLeaseOwner(d.cfg.InstanceID).
			// The claim answers the resends asked so far; one asked from now
			// on sets the flag again for the next attempt.
			SetResend(false).
			SetUpdatedAt(now).
			Exec(ctx); err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		return nil
	})
	if err != nil {
		return claimed{}, err
	}
	for _, ev := range events {
		if ev.Kind == deliveryevent.KindExpired {
			d.observeFinished(notification.StatusFailed)
		}
	}
	d.mu.Lock()
	for h := range left {
		d.backlog[h] = true
	}
	if whole {
		for h := range d.backlog {
			if !left[h] && !slices.Contains(fullHosts, h) {
				delete(d.backlog, h)
			}
		}
	}
	d.mu.Unlock()
	return claimed{claims: claims, events: events, bound: len(left) > 0, truncated: !whole, wantTokens: want}, nil
}

// claimed is what a claim took and what it saw.
type claimed struct {
	claims []claim
	events []*entdb.DeliveryEvent
	// bound: rows were left for want of a worker or a slot of their
	// destination. truncated: the scan stopped at its limit (more rows
	// may be due).
	bound, truncated bool
	// wantTokens counts, per throttled endpoint, the rows left for want of
	// a token.
	wantTokens map[int64]int
}

// interruptPrevious records the attempt that was in flight when the lease
// holding this row lapsed (its process died or lost the database): the
// holder never wrote the attempt's row, so it is written now.
func (d *Dispatcher) interruptPrevious(ctx context.Context, tx *entdb.Tx, lock func() error, row *entdb.Notification, now time.Time) (*entdb.DeliveryEvent, error) {
	const why = "interrupted: the instance making the attempt stopped before recording its outcome"
	started := row.LeaseUntil.Add(-d.cfg.Lease)
	if err := tx.DeliveryAttempt.Create().
		SetNotificationID(row.ID).
		SetNumber(row.Attempts).
		SetStartedAt(started).
		SetFinishedAt(now).
		SetRequestMethod(row.Method).
		SetRequestURL(row.URL).
		SetOutcome(deliveryattempt.OutcomeInterrupted).
		SetError(why).
		OnConflictColumns(deliveryattempt.FieldNotificationID, deliveryattempt.FieldNumber).
		DoNothing().
		Exec(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("record interrupted attempt of %s: %w", row.UUID, err)
	}
	ev := d.events.newEvent(row, deliveryevent.KindAttempt, row.Attempts, string(deliveryattempt.OutcomeInterrupted), nil, why, row.Status.String(), row.NextAttemptAt)
	if err := d.events.insert(ctx, tx, lock, []*entdb.DeliveryEvent{ev}); err != nil {
		return nil, err
	}
	return ev, nil
}

// expire fails a notification whose window closed before another attempt
// could start.
func (d *Dispatcher) expire(ctx context.Context, tx *entdb.Tx, lock func() error, row *entdb.Notification, now time.Time) (*entdb.DeliveryEvent, error) {
	if err := tx.Notification.UpdateOne(row).
		SetStatus(notification.StatusFailed).
		ClearNextAttemptAt().
		ClearLeaseUntil().
		SetLeaseOwner("").
		SetUpdatedAt(now).
		Exec(ctx); err != nil {
		return nil, fmt.Errorf("expire %s: %w", row.UUID, err)
	}
	ev := d.events.newEvent(row, deliveryevent.KindExpired, row.Attempts, "", nil, "delivery window closed", string(notification.StatusFailed), nil)
	if err := d.events.insert(ctx, tx, lock, []*entdb.DeliveryEvent{ev}); err != nil {
		return nil, err
	}
	return ev, nil
}

// result is the outcome of one attempt, waiting to be recorded.
type result struct {
	c        claim
	outcome  deliveryattempt.Outcome
	status   *int
	body     string
	err      string
	finished time.Time
	duration time.Duration
	// signed are the headers signed for this attempt alone, as stored.
	signed string
	// signature is the signature made once that this attempt made (the
	// row had none yet), for its record to store; "" otherwise.
	signature string
}

// send makes one attempt and hands its outcome to the recorder.
func (d *Dispatcher) send(c claim) {
	start := c.started
	var resp egress.Response
	unsigned := c.n.Signature == "" || c.presigned
	header, err := d.queue.storedHeaders(c.n)
	var signed http.Header
	if err == nil {
		signed, err = d.queue.attemptSigned(d.sendCtx, c.n, start)
	}
	// An attempt that could not be made (no headers, no signature) says
	// nothing of its destination.
	signErr := err
	for k, vs := range signed {
		header[k] = vs
	}
	if err == nil {
		resp, err = d.client.Do(d.sendCtx, egress.Request{
			// The operator's exceptions apply to the row's owner only,
			// as they are configured now (not as when it was stored).
			Owner:  c.n.OwnerID,
			Method: c.n.Method,
			URL:    c.n.URL,
			Body:   c.n.Body,
			Header: header,
		})
	}
	r := result{c: c, finished: d.cfg.Now(), signed: FormatHeaders(signed)}
	if unsigned {
		r.signature = c.n.Signature
	}
	r.duration = r.finished.Sub(start)
	if resp.Duration > 0 {
		r.duration = resp.Duration
	}
	var blocked *egress.BlockedError
	switch {
	case errors.As(err, &blocked):
		r.outcome, r.err = deliveryattempt.OutcomeBlocked, blocked.Error()
	case err != nil && d.sendCtx.Err() != nil:
		r.outcome, r.err = deliveryattempt.OutcomeInterrupted, "interrupted: payhook stopped during the attempt"
	case err != nil:
		r.outcome, r.err = deliveryattempt.OutcomeFailed, err.Error()
	default:
		st := resp.Status
		r.status = &st
		r.body = storable(resp.Body, d.cfg.StoredBody)
		ack := egress.Acknowledged
		if c.n.EndpointID != nil {
			// An endpoint's delivery (Standard Webhooks): any 2xx.
			ack = func(status int, _ []byte) (bool, string) { return egress.Acknowledged2xx(status) }
		}
		if ok, why := ack(resp.Status, resp.Body); ok {
			r.outcome = deliveryattempt.OutcomeAcknowledged
		} else {
			r.outcome, r.err = deliveryattempt.OutcomeFailed, why
		}
	}
	r.err = storable([]byte(r.err), 2048)
	if o := d.cfg.Observer; o != nil {
		o.AttemptFinished(TransportOf(c.n.Method, c.n.ContentType), string(r.outcome), r.duration)
	}
	// The worker and the destination slot are free as soon as the request
	// is done; the row itself stays leased until its outcome is recorded.
	d.mu.Lock()
	// The destination's recent attempt duration paces how its parked rows
	// come due again.
	if prev, ok := d.hostDuration[c.n.Host]; ok {
		d.hostDuration[c.n.Host] = (prev*3 + r.duration) / 4
	} else {
		d.hostDuration[c.n.Host] = r.duration
	}
	if r.outcome != deliveryattempt.OutcomeBlocked && r.outcome != deliveryattempt.OutcomeInterrupted && signErr == nil {
		d.answered(c.n.Host, r.status != nil, r.finished)
	}
	wasFull := d.releaseWorker(c.n.Host)
	d.mu.Unlock()
	// Rows held for the destination have the first claim on its slot; the
	// loop is woken only for a slot still free after them.
	if d.startHeld(c.n.Host) && wasFull {
		d.signal()
	}
	d.results <- r
}

// recordLoop records attempt outcomes in batches: whatever is waiting when
// it is free goes into one transaction, so the commit cost is shared under
// load and nothing waits when idle. It exits when results is closed and
// drained.
func (d *Dispatcher) recordLoop() {
	defer close(d.recorderDone)
	batchResults(d.results, d.recordBatch, func() (<-chan time.Time, func() bool) {
		t := time.NewTimer(recordLinger)
		return t.C, t.Stop
	})
}

// batchResults hands the results read from in to write in batches of at
// most maxRecordBatch, until in is closed. Under load (the last batch held
// lingerAfter results or more) it waits for more until the channel linger
// returns fires: fewer, larger transactions while attempts finish faster
// than one commits. Otherwise it writes what is there at once.
func batchResults(in <-chan result, write func([]result), linger func() (<-chan time.Time, func() bool)) {
	last := 0
	for r := range in {
		batch := []result{r}
		var wait <-chan time.Time
		var stop func() bool
		if last >= lingerAfter {
			wait, stop = linger()
		}
	drain:
		for len(batch) < maxRecordBatch {
			var r result
			var ok bool
			if wait == nil {
				select {
				case r, ok = <-in:
				default:
					break drain
				}
			} else {
				select {
				case r, ok = <-in:
				case <-wait:
					break drain
				}
			}
			if !ok {
				break drain
			}
			batch = append(batch, r)
		}
		if stop != nil {
			stop()
		}
		last = len(batch)
		write(batch)
	}
}

// maxRecordBatch is the most results one record transaction writes.
const maxRecordBatch = 256

// The recorder's batching under load (recordLoop): measured end to end
// (docs/benchmarks.md), it takes a tenth off the database's CPU per
// callback; below lingerAfter results a batch is written at once, so an
// attempt's outcome under light load is recorded as soon as it is known.
const (
	lingerAfter  = 16
	recordLinger = 2 * time.Millisecond
)

// recordBatch records a batch, retrying while the database is unreachable:
// an attempt's outcome is dropped only if it cannot be recorded before the
// lease lapses, in which case the row is retried as interrupted.
func (d *Dispatcher) recordBatch(batch []result) {
	var events []*entdb.DeliveryEvent
	var err error
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		events, err = d.record(ctx, batch)
		cancel()
		if err == nil || try >= 5 {
			break
		}
		d.logger.Error("record attempts; retrying", "count", len(batch), "error", err)
		time.Sleep(time.Duration(try+1) * 500 * time.Millisecond) // database outage back-off
	}
	if err != nil && len(batch) > 1 {
		// One bad row must not cost the others their outcome: record them
		// one by one.
		d.logger.Error("record attempts as a batch failed; recording one by one", "count", len(batch), "error", err)
		events, err = nil, nil
		for _, r := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			ev, e := d.record(ctx, []result{r})
			cancel()
			if e != nil {
				d.logger.Error("record attempt failed; the row is retried when its lease lapses", "uuid", r.c.n.UUID, "error", e)
				err = e
				continue
			}
			events = append(events, ev...)
		}
	} else if err != nil {
		d.logger.Error("record attempt failed; the row is retried when its lease lapses", "uuid", batch[0].c.n.UUID, "error", err)
	}
	// A freed sequence's turn wakes the loop when the next notification of
	// the sequence may be claimable: its destination (taken to be this
	// one's, as a sequence's notifications go to one receiver) has a free
	// slot. If it has none, the attempt that frees one wakes the loop.
	turn := false
	var heldTurn map[string]bool // destinations of sequences with rows held behind
	d.mu.Lock()
	for _, r := range batch {
		d.releaseSequence(r.c.n.Sequence)
		turn = turn || (r.c.n.Sequence != nil && d.hasSlot(r.c.n.Host))
		if s := r.c.n.Sequence; s != nil && d.held.hasSeq(*s) {
			if heldTurn == nil {
				heldTurn = map[string]bool{}
			}
			heldTurn[d.held.bySeq[*s][0].n.Host] = true // the next of the sequence
		}
	}
	d.mu.Unlock()
	for h := range heldTurn {
		turn = d.startHeld(h) && turn
	}
	for _, e := range events {
		// An acknowledged attempt is logged at debug: the attempt log, the
		// delivery events and the metrics have it, and a busy gateway
		// acknowledges thousands a second. Every other outcome is news.
		level := slog.LevelInfo
		if e.Outcome == string(deliveryattempt.OutcomeAcknowledged) {
			level = slog.LevelDebug
		}
		if d.logger.Enabled(context.Background(), level) {
			d.logger.Log(context.Background(), level, "delivery attempt", "uuid", e.UUID, "attempt", e.Attempt, "outcome", e.Outcome,
				"http_status", derefInt(e.HTTPStatus), "status", e.DeliveryStatus, "error", e.Error)
		}
	}
	d.events.publish(events)
	// A recorded attempt also makes work claimable when it leaves its row
	// due at once (interrupted, or not recorded: due when the lease lapses,
	// which the loop's timer finds). Other outcomes are scheduled in the
	// future, which the loop's timer finds too.
	wake := err != nil
	for _, r := range batch {
		wake = wake || r.outcome == deliveryattempt.OutcomeInterrupted
	}
	now := d.cfg.Now()
	for _, e := range events {
		// A resend asked during the attempt leaves its row due at once.
		wake = wake || (e.NextAttemptAt != nil && !e.NextAttemptAt.After(now))
	}
	for range batch {
		d.sends.Done()
	}
	if wake {
		d.Wake()
	} else if turn {
		d.signal()
	}
}

// record stores attempt outcomes and the notifications' next states in one
// transaction: the attempt rows in one INSERT, the notifications in one
// UPDATE on PostgreSQL (row by row on SQLite, in process), the events in one
// INSERT. A notification is only moved on if this instance still holds it
// (its attempt is the latest); an acknowledgement always counts.
func (d *Dispatcher) record(ctx context.Context, batch []result) ([]*entdb.DeliveryEvent, error) {
	type next struct {
		status notification.Status
		at     *time.Time
	}
	plans := make([]next, len(batch))
	for i, r := range batch {
		switch r.outcome {
		case deliveryattempt.OutcomeAcknowledged:
			plans[i] = next{status: notification.StatusAcknowledged}
		case deliveryattempt.OutcomeInterrupted:
			plans[i] = next{status: notification.StatusRetrying, at: &batch[i].finished}
		default:
			if t, ok := d.cfg.Policy.Next(r.c.n.CreatedAt, r.finished, r.c.number); ok {
				plans[i] = next{status: notification.StatusRetrying, at: &t}
			} else {
				plans[i] = next{status: notification.StatusFailed}
			}
		}
	}
	var events []*entdb.DeliveryEvent
	var finished []notification.Status
	err := store.WithTx(ctx, d.db.Client, func(tx *entdb.Tx) error {
		finished = finished[:0]
		if err := d.asyncCommit(ctx, tx); err != nil {
			return err
		}
		if err := d.storeSignatures(ctx, tx, batch); err != nil {
			return err
		}
		moved, err := d.moveOn(ctx, tx, batch, func(i int) (notification.Status, *time.Time) { return plans[i].status, plans[i].at })
		if err != nil {
			return err
		}
		written := slices.Clone(plans)
		for i, r := range batch {
			if m, ok := moved[r.c.n.ID]; ok {
				written[i] = next{status: m.status, at: m.next} // a resend may have changed the plan
			}
		}
		attempts := make([]*entdb.DeliveryAttempt, len(batch))
		for i, r := range batch {
			attempts[i] = &entdb.DeliveryAttempt{
				NotificationID:   r.c.n.ID,
				Number:           r.c.number,
				StartedAt:        r.c.started,
				FinishedAt:       &batch[i].finished,
				RequestMethod:    r.c.n.Method,
				RequestURL:       r.c.n.URL,
				Outcome:          r.outcome,
				ResponseStatus:   r.status,
				ResponseBody:     r.body,
				Error:            r.err,
				DurationMs:       r.duration.Milliseconds(),
				NextAttemptAt:    written[i].at,
				SignatureHeaders: r.signed,
			}
		}
		if err := insertAttempts(ctx, tx, d.db.Dialect, attempts); err != nil {
			return err
		}
		if err := endpointHealth(ctx, tx, batch); err != nil {
			return err
		}
		events = make([]*entdb.DeliveryEvent, len(batch))
		for i, r := range batch {
			status, at := written[i].status, written[i].at
			if _, ok := moved[r.c.n.ID]; !ok {
				// Another instance took the row over (our lease lapsed); it
				// owns the state now. The attempt itself is still logged.
				cur, err := tx.Notification.Get(ctx, r.c.n.ID)
				if err != nil {
					return err
				}
				status, at = cur.Status, cur.NextAttemptAt
			} else if at == nil && (status == notification.StatusAcknowledged || status == notification.StatusFailed) {
				finished = append(finished, status)
			}
			events[i] = d.events.newEvent(r.c.n, deliveryevent.KindAttempt, r.c.number, string(r.outcome), r.status, r.err, string(status), at)
		}
		return d.events.insert(ctx, tx, d.events.lock(ctx, tx), events)
	})
	if err == nil {
		d.observeFinished(finished...)
	}
	return events, err
}

// endpointHealth records, in the transaction that records a batch's
// attempts, how each endpoint the batch delivered to is doing: an
// acknowledged delivery clears its failing_since and sets last_success_at;
// a failed or blocked one sets failing_since, once, to when it failed. An
// endpoint failing since long enough is paused by its monitor
// (server/merchant/endpoint). A batch without endpoint deliveries costs
// nothing.
func endpointHealth(ctx context.Context, tx *entdb.Tx, batch []result) error {
	var ok []int64
	var last time.Time // the batch's latest success
	failed := map[int64]time.Time{}
	for _, r := range batch {
		id := r.c.n.EndpointID
		if id == nil {
			continue
		}
		switch r.outcome {
		case deliveryattempt.OutcomeAcknowledged:
			ok = append(ok, *id)
			if r.finished.After(last) {
				last = r.finished
			}
		case deliveryattempt.OutcomeFailed, deliveryattempt.OutcomeBlocked:
			if at, seen := failed[*id]; !seen || r.finished.Before(at) {
				failed[*id] = r.finished
			}
		}
	}
	if len(ok) > 0 {
		if err := tx.Endpoint.Update().Where(entendpoint.IDIn(ok...)).
			ClearFailingSince().SetLastSuccessAt(last).Exec(ctx); err != nil {
			return fmt.Errorf("record endpoints' successes: %w", err)
		}
	}
	for id, at := range failed {
		if slices.Contains(ok, id) {
			continue // a success in the same batch: not failing
		}
		if err := tx.Endpoint.Update().Where(entendpoint.ID(id), entendpoint.FailingSinceIsNil()).
			SetFailingSince(at).Exec(ctx); err != nil {
			return fmt.Errorf("record endpoint %d's failure: %w", id, err)
		}
	}
	return nil
}

// observeFinished tells the observer of notifications that left the queue
// in a committed transaction of this instance.
func (d *Dispatcher) observeFinished(statuses ...notification.Status) {
	if o := d.cfg.Observer; o != nil {
		for _, st := range statuses {
			o.NotificationFinished(st.String())
		}
	}
}

// storeSignatures stores the signatures made once that the attempts of
// batch made, on the rows that have none yet: every later attempt, and the
// dashboard, reads them. On PostgreSQL moveOn stores them with each row's
// new state; a resend's attempt (moved on alone) leaves its signature to be
// made again, the same bytes.
func (d *Dispatcher) storeSignatures(ctx context.Context, tx *entdb.Tx, batch []result) error {
	if d.db.Dialect == store.Postgres {
		return nil
	}
	for _, r := range batch {
		if r.signature == "" {
			continue
		}
		if err := tx.Notification.Update().Where(notification.ID(r.c.n.ID), notification.Signature("")).
			SetSignature(r.signature).Exec(ctx); err != nil {
			return fmt.Errorf("store signature: %w", err)
		}
	}
	return nil
}

// moveOn sets each notification's next state, only where this instance
// still holds it, and reports the rows it moved with the state written. A
// resend asked while the attempt was in flight makes the row due at once
// (its flag stays set for the claim). Rows claimed for a resend are moved
// one by one (moveOnResent).
func (d *Dispatcher) moveOn(ctx context.Context, tx *entdb.Tx, all []result, plan func(int) (notification.Status, *time.Time)) (map[int64]moved, error) {
	out := make(map[int64]moved, len(all))
	batch := make([]result, 0, len(all))
	index := make([]int, 0, len(all)) // batch[k] is all[index[k]]
	for i, r := range all {
		if !r.c.resend {
			batch, index = append(batch, r), append(index, i)
			continue
		}
		status, at := plan(i)
		m, ok, err := d.moveOnResent(ctx, tx, r, status, at)
		if err != nil {
			return nil, err
		}
		if ok {
			out[r.c.n.ID] = m
		}
	}
	if len(batch) == 0 {
		return out, nil
	}
	if d.db.Dialect == store.Postgres {
		// One array per column (see bulk.go): the statement does not grow
		// with the batch.
		// The signature made once that an attempt made is stored with its
		// row's new state (one row version, not two).
		ids, numbers, statuses, nexts, finished, sigs := make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch))
		for k, r := range batch {
			status, at := plan(index[k])
			ids[k], numbers[k], statuses[k], nexts[k], finished[k], sigs[k] = r.c.n.ID, r.c.number, string(status), store.Nullable(at), r.finished, r.signature
		}
		const q = `UPDATE notifications AS n SET status = v.status, next_attempt_at = CASE WHEN n.resend THEN v.finished ELSE v.next END, lease_until = NULL, lease_owner = '', updated_at = v.finished,
				signature = CASE WHEN n.signature = '' THEN v.sig ELSE n.signature END
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[], $6::text[]) AS v(id, number, status, next, finished, sig)
			WHERE n.id = v.id AND n.id = ANY($1::bigint[]) AND (
				(v.status = 'acknowledged' AND n.status <> 'acknowledged') OR
				(v.status <> 'acknowledged' AND n.status IN ('pending', 'retrying') AND n.attempts = v.number))
			RETURNING n.id, n.status, n.next_attempt_at`
		args := []any{store.Array(ids), store.Array(numbers), store.Array(statuses), store.Array(nexts), store.Array(finished), store.Array(sigs)}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("update notifications: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id     int64
				status string
				next   sql.NullTime
			)
			if err := rows.Scan(&id, &status, &next); err != nil {
				return nil, err
			}
			m := moved{status: notification.Status(status)}
			if next.Valid {
				t := next.Time
				m.next = &t
			}
			out[id] = m
		}
		return out, rows.Err()
	}
	// SQLite: the transaction holds the write lock, so the flags read here
	// cannot change before the updates.
	ids := make([]int64, len(batch))
	for k, r := range batch {
		ids[k] = r.c.n.ID
	}
	asked, err := tx.Notification.Query().Where(notification.IDIn(ids...), notification.Resend(true)).IDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read resend flags: %w", err)
	}
	for k, r := range batch {
		status, at := plan(index[k])
		if slices.Contains(asked, r.c.n.ID) {
			at = &batch[k].finished
		}
		nu := tx.Notification.Update().Where(notification.ID(r.c.n.ID)).
			SetStatus(status).
			ClearLeaseUntil().
			SetLeaseOwner("").
			SetUpdatedAt(r.finished)
		if at == nil {
			nu.ClearNextAttemptAt()
		} else {
			nu.SetNextAttemptAt(*at)
		}
		if status == notification.StatusAcknowledged {
			nu.Where(notification.StatusNEQ(notification.StatusAcknowledged))
		} else {
			nu.Where(notification.StatusIn(notification.StatusPending, notification.StatusRetrying), notification.Attempts(r.c.number))
		}
		changed, err := nu.Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("update notification: %w", err)
		}
		if changed > 0 {
			out[r.c.n.ID] = moved{status: status, next: at}
		}
	}
	return out, nil
}

// asyncCommit lets a dispatcher transaction (a claim, or attempt records)
// commit without waiting for its WAL flush on PostgreSQL. If the database
// crashes right after, the transaction may be lost; for a claim the row is
// simply claimed again, for a record the attempt is repeated (a duplicate
// delivery of an attempt that was in flight, which receivers handle by
// uuid). No notification is lost: notifications themselves are stored by
// the caller's transaction, which stays synchronous.
//
// Its statements read rows by index (store.PlanByIndex): a claim follows
// the due index, a record updates the rows it claimed by id.
func (d *Dispatcher) asyncCommit(ctx context.Context, tx *entdb.Tx) error {
	return store.PlanByIndex(ctx, tx, d.db.Dialect, true)
}

// nextDue returns the earliest time at which more work becomes due.
func (d *Dispatcher) nextDue(ctx context.Context) (time.Time, bool, error) {
	// Only future work counts: rows already due but not claimable (their
	// destination is at its bound, an earlier notification of their sequence
	// is in flight) become claimable when an attempt finishes, which wakes
	// the loop; waiting on them here would spin.
	row, err := d.db.Client.Notification.Query().
		Where(notification.NextAttemptAtGT(d.cfg.Now())).
		Order(entdb.Asc(notification.FieldNextAttemptAt)).
		Select(notification.FieldNextAttemptAt).
		First(ctx)
	if entdb.IsNotFound(err) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return *row.NextAttemptAt, true, nil
}

// storable makes text fit for the attempt log: at most limit bytes, valid
// UTF-8 and no NUL (PostgreSQL text accepts neither invalid UTF-8 nor NUL),
// so whatever a receiver answers can always be recorded.
func storable(b []byte, limit int) string {
	if len(b) > limit {
		b = b[:limit]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
