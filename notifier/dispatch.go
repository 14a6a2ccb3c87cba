package notifier

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/predicate"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/egress"
)

// SignatureHeader carries the RSA signature of low-level callbacks.
const SignatureHeader = "x-ca-signature"

// ServiceSignatureHeader carries the HMAC signature of merchant webhooks.
const ServiceSignatureHeader = "x-service-signature"

func signatureHeader(scheme string) string {
	if scheme == SchemeHMACSHA256 {
		return ServiceSignatureHeader
	}
	return SignatureHeader
}

// claim is one notification reserved for an attempt by this instance: the
// row as claimed (attempts already counts this attempt) and its number.
// The attempt's row is written once, with its outcome; while it runs, the
// notification's lease and attempt count say it is in flight.
type claim struct {
	n       *entdb.Notification
	number  int
	started time.Time
}

// dispatch claims as many due notifications as free capacity allows and
// starts their attempts in the background. It returns how many it claimed.
func (n *Notifier) dispatch(ctx context.Context) (int, error) {
	n.mu.Lock()
	free := min(n.cfg.Workers-n.active, n.cfg.Batch)
	hosts := make(map[string]int, len(n.perHost))
	var full []string
	for h, c := range n.perHost {
		hosts[h] = c
		if c >= n.cfg.PerHost {
			full = append(full, h)
		}
	}
	busy := make([]int64, 0, len(n.inflightPayments))
	for id := range n.inflightPayments {
		busy = append(busy, id)
	}
	n.mu.Unlock()
	if free <= 0 {
		return 0, nil
	}
	n.parkSaturated(full)
	claims, events, err := n.claim(ctx, free, hosts, full, busy)
	if err != nil {
		return 0, err
	}
	n.events.publish(events)
	n.mu.Lock()
	now := n.cfg.Clock.Now()
	for _, c := range claims {
		n.takeSlot(c.n, now)
	}
	n.mu.Unlock()
	for _, c := range claims {
		go n.send(c)
	}
	pulled := 0
	if len(claims) < free {
		// Nothing more is due: a parked destination with free slots takes
		// its next parked rows now.
		if pulled, err = n.pullParked(ctx); err != nil {
			n.logger.Warn("pull parked rows forward", "error", err)
		}
	}
	return len(claims) + pulled, nil
}

// pullParked makes due now, for each parked destination with free slots
// after a claim found nothing more due for it, that many of its parked
// first attempts, earliest first. Parking paces a backlog at the
// destination's recent attempt duration; when it speeds up (a slow or dead
// endpoint recovers), this lets it take its backlog as fast as it now
// goes instead of waiting out the park. Retries are left on their
// schedule. A destination with nothing parked left is forgotten. It
// returns how many rows it made due.
func (n *Notifier) pullParked(ctx context.Context) (int, error) {
	now := n.cfg.Clock.Now()
	if err := n.findParked(ctx, now); err != nil {
		return 0, err
	}
	free := map[string]int{}
	n.mu.Lock()
	for h := range n.parkedAt {
		if f := n.cfg.PerHost - n.perHost[h]; f > 0 && n.active < n.cfg.Workers {
			free[h] = f
		}
	}
	n.mu.Unlock()
	pulled := 0
	for h, f := range free {
		parked := []predicate.Notification{
			notification.Host(h), notification.Attempts(0), notification.LeaseUntilIsNil(),
			notification.NextAttemptAtGT(now), notification.NextAttemptAtLTE(now.Add(n.parkHorizon() + n.parkFor())),
		}
		ids, err := n.db.Client.Notification.Query().Where(parked...).
			Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
			Limit(f).IDs(ctx)
		if err != nil {
			return pulled, err
		}
		if len(ids) == 0 {
			n.mu.Lock()
			delete(n.parkedAt, h)
			n.mu.Unlock()
			continue
		}
		moved, err := n.db.Client.Notification.Update().
			Where(append(parked, notification.IDIn(ids...))...).
			SetNextAttemptAt(now).
			Save(ctx)
		if err != nil {
			return pulled, err
		}
		pulled += moved
	}
	return pulled, nil
}

// takeSlot counts an attempt of row as started: a worker, a slot of its
// destination and its payment's turn. n.mu must be held. The slot is given
// back by send, the payment's turn and sends by recordBatch.
func (n *Notifier) takeSlot(row *entdb.Notification, now time.Time) {
	n.perHost[row.Host]++
	if n.perHost[row.Host] >= n.cfg.PerHost {
		if _, ok := n.fullSince[row.Host]; !ok {
			n.fullSince[row.Host] = now
		}
	}
	n.active++
	if row.PaymentID != nil {
		n.inflightPayments[*row.PaymentID]++
	}
	n.sends.Add(1) // Done when the attempt is recorded
}

// freeSlot gives back what takeSlot took, for an attempt that never
// started. n.mu must be held.
func (n *Notifier) freeSlot(row *entdb.Notification) {
	n.releaseWorker(row.Host)
	n.releasePayment(row.PaymentID)
	n.sends.Done()
}

// releaseWorker gives back an attempt's worker and destination slot and
// reports whether either was the limit (only then can rows waiting for a
// slot become claimable). n.mu must be held.
func (n *Notifier) releaseWorker(host string) (wasFull bool) {
	wasFull = n.active >= n.cfg.Workers || n.perHost[host] >= n.cfg.PerHost
	n.active--
	if n.perHost[host]--; n.perHost[host] <= 0 {
		delete(n.perHost, host)
		if _, parked := n.parkedAt[host]; !parked {
			delete(n.hostDuration, host) // idle: forget it
		}
	}
	delete(n.fullSince, host) // below its bound again
	return wasFull
}

// releasePayment gives back a payment's turn (nil: no payment). n.mu must
// be held.
func (n *Notifier) releasePayment(id *int64) {
	if id == nil {
		return
	}
	if n.inflightPayments[*id]--; n.inflightPayments[*id] <= 0 {
		delete(n.inflightPayments, *id)
	}
}

// findParked, at most once per parkFor, looks up the destinations with
// parked first attempts in the database, so rows parked by an instance
// that has since stopped (or by this one before a restart) are pulled
// forward too, not only those this instance remembers parking.
func (n *Notifier) findParked(ctx context.Context, now time.Time) error {
	n.mu.Lock()
	due := now.Sub(n.parkScanAt) >= n.parkFor()
	if due {
		n.parkScanAt = now
	}
	n.mu.Unlock()
	if !due {
		return nil
	}
	hosts, err := n.db.Client.Notification.Query().
		Where(notification.Attempts(0), notification.LeaseUntilIsNil(),
			notification.NextAttemptAtGT(now), notification.NextAttemptAtLTE(now.Add(n.parkHorizon()+n.parkFor()))).
		Unique(true).
		Select(notification.FieldHost).
		Strings(ctx)
	if err != nil {
		return fmt.Errorf("find parked destinations: %w", err)
	}
	n.mu.Lock()
	for _, h := range hosts {
		if _, ok := n.parkedAt[h]; !ok {
			n.parkedAt[h] = now
		}
	}
	n.mu.Unlock()
	return nil
}

// parkAfter is how long a destination must stay at its concurrency bound
// before its due rows are parked.
const parkAfter = 250 * time.Millisecond

// parkFor is how long the due rows of a destination at its concurrency
// bound are set aside: a third of the attempt timeout (a slot of a hanging
// endpoint frees up no sooner), at least 2 seconds.
func (n *Notifier) parkFor() time.Duration {
	return max(n.cfg.Egress.Timeout/3, 2*time.Second)
}

// parkSaturated moves the due rows of destinations at their concurrency
// bound parkFor into the future, at most once per parkFor per destination.
// Without it, every claim would scan past all of them: ten thousand
// notifications queued for a dead endpoint would slow every claim. The
// oldest 2 x PerHost due rows of each destination stay due, so its slots
// are refilled as soon as they free up (a slow destination is not starved)
// and claims scan only those. A parked row keeps its schedule otherwise.
func (n *Notifier) parkSaturated(full []string) {
	if len(full) == 0 {
		return
	}
	now := n.cfg.Clock.Now()
	park := n.parkFor()
	var due []string
	n.mu.Lock()
	for h, at := range n.parkedAt {
		if now.Sub(at) > time.Minute+park {
			delete(n.parkedAt, h)
		}
	}
	if !n.parking.TryLock() {
		n.mu.Unlock()
		return
	}
	for _, h := range full {
		// Only a destination that has stayed at its bound for a while (its
		// attempts hang) is parked; a fast one that fills its slots for a
		// moment is not.
		since, ok := n.fullSince[h]
		if ok && now.Sub(since) >= parkAfter && now.Sub(n.parkedAt[h]) >= park {
			n.parkedAt[h] = now
			due = append(due, h)
		}
	}
	n.mu.Unlock()
	if len(due) == 0 {
		n.parking.Unlock()
		return
	}
	// In the background: the dispatcher goes on claiming meanwhile (claims
	// skip the rows a chunk locks).
	n.sends.Add(1)
	go func() {
		defer n.sends.Done()
		defer n.parking.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := n.park(ctx, due, now, park); err != nil {
			n.logger.Warn("park rows of saturated destinations", "hosts", due, "error", err)
		}
	}()
}

// parkHorizon is the furthest a row is parked: a destination that
// recovers gets its whole backlog due again within this time even if no
// instance is left to notice.
func (n *Notifier) parkHorizon() time.Duration {
	return 10 * n.parkFor()
}

// park reads the due rows of hosts once, in due order, and parks all but
// the oldest 2 x PerHost of each host: row k of a host is due again when the
// host's slots could take it at its recent attempt duration (k / PerHost
// attempt durations from now, at least d, at most parkHorizon), so a slow
// destination gets its rows as fast as it takes them and a dead one's
// backlog is touched about once per horizon instead of once per park. The
// updates run in small transactions paced to take about half of one
// database connection's time, so the rest of the traffic barely notices.
func (n *Notifier) park(ctx context.Context, hosts []string, now time.Time, d time.Duration) error {
	var rows []struct {
		ID   int64  `json:"id"`
		Host string `json:"host"`
	}
	if err := n.db.Client.Notification.Query().
		Where(
			notification.HostIn(hosts...),
			notification.NextAttemptAtLTE(now),
			notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now)),
			// A row whose window would close meanwhile keeps its last
			// chance of an attempt.
			notification.ExpiresAtGT(now.Add(n.parkHorizon())),
		).
		Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
		Select(notification.FieldID, notification.FieldHost).
		Scan(ctx, &rows); err != nil {
		return err
	}
	n.mu.Lock()
	per := map[string]time.Duration{}
	for _, h := range hosts {
		// The attempts in flight have lasted since the host filled up at
		// least: a lower bound before any of them ends.
		est := max(n.hostDuration[h], 100*time.Millisecond)
		if since, ok := n.fullSince[h]; ok {
			est = max(est, now.Sub(since))
		}
		per[h] = est / time.Duration(n.cfg.PerHost)
	}
	n.mu.Unlock()
	// Rows are grouped by the time they are parked until, rounded up to
	// the park unit, so each group is one UPDATE.
	groups := map[time.Time][]int64{}
	var order []time.Time
	seen := map[string]int{}
	for _, r := range rows {
		k := seen[r.Host]
		seen[r.Host]++
		if k < 2*n.cfg.PerHost {
			continue // stays due
		}
		wait := min(max(time.Duration(k)*per[r.Host], d), n.parkHorizon())
		until := now.Add(wait).Truncate(d).Add(d)
		if _, ok := groups[until]; !ok {
			order = append(order, until)
		}
		groups[until] = append(groups[until], r.ID)
	}
	const chunk = 100
	for _, until := range order {
		ids := groups[until]
		for start := 0; start < len(ids); start += chunk {
			began := time.Now()
			if _, err := n.db.Client.Notification.Update().
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

// claim reserves up to limit due notifications (skipping hosts at their
// concurrency bound and payments with an attempt in flight): each gets a
// lease and an in-flight attempt row, committed before any request is sent,
// with one UPDATE and one bulk INSERT for the whole batch. Rows whose
// previous lease lapsed with an attempt in flight get that attempt recorded
// as interrupted; rows past their window are failed instead of attempted.
func (n *Notifier) claim(ctx context.Context, limit int, hostsBusy map[string]int, fullHosts []string, busyPayments []int64) ([]claim, []*entdb.DeliveryEvent, error) {
	now := n.cfg.Clock.Now()
	until := now.Add(n.cfg.Lease)
	var claims []claim
	var events []*entdb.DeliveryEvent
	err := store.WithTx(ctx, n.db.Client, func(tx *entdb.Tx) error {
		claims, events = nil, nil
		if err := n.asyncCommit(ctx, tx); err != nil {
			return err
		}
		q := tx.Notification.Query().
			// next_attempt_at is set exactly while a row is pending or
			// retrying, so the due index alone finds the work, in order,
			// and the scan stops at the limit. (A status condition here
			// lets the planner combine the status index and sort every due
			// row instead.)
			Where(
				notification.NextAttemptAtLTE(now),
				notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now)),
			).
			Order(entdb.Asc(notification.FieldNextAttemptAt), entdb.Asc(notification.FieldID)).
			Limit(limit)
		if len(fullHosts) > 0 {
			q.Where(notification.HostNotIn(fullHosts...))
		}
		if len(busyPayments) > 0 {
			// A later notification of a payment waits for the attempt in
			// flight of an earlier one, so first attempts keep their order.
			q.Where(notification.Or(notification.PaymentIDIsNil(), notification.PaymentIDNotIn(busyPayments...)))
		}
		if n.db.Dialect == store.Postgres {
			q.ForUpdate(entsql.WithLockAction(entsql.SkipLocked))
		}
		rows, err := q.All(ctx)
		if err != nil {
			return fmt.Errorf("select due: %w", err)
		}
		lock := n.eventLock(ctx, tx)
		ids := make([]int64, 0, len(rows))
		perHost := make(map[string]int, len(hostsBusy))
		for h, c := range hostsBusy {
			perHost[h] = c
		}
		payments := map[int64]bool{}
		for _, row := range rows {
			if row.PaymentID != nil {
				// One notification of a payment at a time: the next one is
				// claimed when this attempt ends, so first attempts keep the
				// order in which they were stored.
				if payments[*row.PaymentID] {
					continue
				}
				payments[*row.PaymentID] = true
			}
			if perHost[row.Host] >= n.cfg.PerHost {
				// The host is at its bound: leave the row unclaimed (its row
				// lock ends with this transaction).
				continue
			}
			if row.LeaseUntil != nil && row.Attempts > 0 {
				// The lease lapsed: the instance holding it died mid-attempt.
				ev, err := n.interruptPrevious(ctx, tx, lock, row, now)
				if err != nil {
					return err
				}
				if ev != nil {
					events = append(events, ev)
				}
			}
			if now.After(row.ExpiresAt) {
				ev, err := n.expire(ctx, tx, lock, row, now)
				if err != nil {
					return err
				}
				events = append(events, ev)
				continue
			}
			perHost[row.Host]++
			ids = append(ids, row.ID)
			row.Attempts++
			row.LeaseUntil, row.LeaseOwner, row.NextAttemptAt = &until, n.cfg.InstanceID, &until
			claims = append(claims, claim{n: row, number: row.Attempts, started: now})
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
			SetLeaseOwner(n.cfg.InstanceID).
			SetUpdatedAt(now).
			Exec(ctx); err != nil {
			return fmt.Errorf("lease: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, ev := range events {
		if ev.Kind == deliveryevent.KindExpired {
			n.observeFinished(notification.StatusFailed)
		}
	}
	return claims, events, nil
}

// interruptPrevious records the attempt that was in flight when the lease
// holding this row lapsed (its process died or lost the database): the
// holder never wrote the attempt's row, so it is written now.
func (n *Notifier) interruptPrevious(ctx context.Context, tx *entdb.Tx, lock func() error, row *entdb.Notification, now time.Time) (*entdb.DeliveryEvent, error) {
	const why = "interrupted: the instance making the attempt stopped before recording its outcome"
	started := row.LeaseUntil.Add(-n.cfg.Lease)
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
	ev := n.newEvent(row, deliveryevent.KindAttempt, row.Attempts, string(deliveryattempt.OutcomeInterrupted), nil, why, row.Status.String(), row.NextAttemptAt)
	if err := n.insertEvents(ctx, tx, lock, []*entdb.DeliveryEvent{ev}); err != nil {
		return nil, err
	}
	return ev, nil
}

// expire fails a notification whose window closed before another attempt
// could start.
func (n *Notifier) expire(ctx context.Context, tx *entdb.Tx, lock func() error, row *entdb.Notification, now time.Time) (*entdb.DeliveryEvent, error) {
	if err := tx.Notification.UpdateOne(row).
		SetStatus(notification.StatusFailed).
		ClearNextAttemptAt().
		ClearLeaseUntil().
		SetLeaseOwner("").
		SetUpdatedAt(now).
		Exec(ctx); err != nil {
		return nil, fmt.Errorf("expire %s: %w", row.UUID, err)
	}
	ev := n.newEvent(row, deliveryevent.KindExpired, row.Attempts, "", nil, "delivery window closed", string(notification.StatusFailed), nil)
	if err := n.insertEvents(ctx, tx, lock, []*entdb.DeliveryEvent{ev}); err != nil {
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
}

// send makes one attempt and hands its outcome to the recorder.
func (n *Notifier) send(c claim) {
	start := c.started
	header := http.Header{}
	if c.n.Signature != "" {
		header.Set(signatureHeader(c.n.SignatureScheme), c.n.Signature)
	}
	resp, err := n.client.Do(n.sendCtx, egress.Request{
		Method:      c.n.Method,
		URL:         c.n.URL,
		ContentType: c.n.ContentType,
		Body:        c.n.Body,
		Header:      header,
		// Receivers deduplicate by the notification's uuid; the header
		// says so, and lets a POST be resent on a fresh connection when a
		// kept-alive one was closed under it.
		IdempotencyKey: c.n.UUID,
	})
	r := result{c: c, finished: n.cfg.Clock.Now()}
	r.duration = r.finished.Sub(start)
	if resp.Duration > 0 {
		r.duration = resp.Duration
	}
	var blocked *egress.BlockedError
	switch {
	case errors.As(err, &blocked):
		r.outcome, r.err = deliveryattempt.OutcomeBlocked, blocked.Error()
	case err != nil && n.sendCtx.Err() != nil:
		r.outcome, r.err = deliveryattempt.OutcomeInterrupted, "interrupted: payhook stopped during the attempt"
	case err != nil:
		r.outcome, r.err = deliveryattempt.OutcomeFailed, err.Error()
	default:
		st := resp.Status
		r.status = &st
		r.body = storable(resp.Body, n.cfg.StoredBody)
		if ok, why := egress.Acknowledged(resp.Status, resp.Body); ok {
			r.outcome = deliveryattempt.OutcomeAcknowledged
		} else {
			r.outcome, r.err = deliveryattempt.OutcomeFailed, why
		}
	}
	r.err = storable([]byte(r.err), 2048)
	if o := n.cfg.Observer; o != nil {
		o.AttemptFinished(TransportOf(c.n.Method, c.n.ContentType), string(r.outcome), r.duration)
	}
	// The worker and the destination slot are free as soon as the request
	// is done; the row itself stays leased until its outcome is recorded.
	n.mu.Lock()
	// The destination's recent attempt duration paces how its parked rows
	// come due again.
	if prev, ok := n.hostDuration[c.n.Host]; ok {
		n.hostDuration[c.n.Host] = (prev*3 + r.duration) / 4
	} else {
		n.hostDuration[c.n.Host] = r.duration
	}
	wasFull := n.releaseWorker(c.n.Host)
	n.mu.Unlock()
	if wasFull {
		n.Wake()
	}
	n.results <- r
}

// recordLoop records attempt outcomes in batches: whatever is waiting when
// it is free goes into one transaction, so the commit cost is shared under
// load and nothing waits when idle. It exits when results is closed and
// drained.
func (n *Notifier) recordLoop() {
	defer close(n.recorderDone)
	const maxBatch = 256
	for r := range n.results {
		batch := []result{r}
	drain:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-n.results:
				if !ok {
					break drain
				}
				batch = append(batch, r)
			default:
				break drain
			}
		}
		n.recordBatch(batch)
	}
}

// recordBatch records a batch, retrying while the database is unreachable:
// an attempt's outcome is dropped only if it cannot be recorded before the
// lease lapses, in which case the row is retried as interrupted.
func (n *Notifier) recordBatch(batch []result) {
	var events []*entdb.DeliveryEvent
	var err error
	for try := 0; ; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		events, err = n.record(ctx, batch)
		cancel()
		if err == nil || try >= 5 {
			break
		}
		n.logger.Error("record attempts; retrying", "count", len(batch), "error", err)
		time.Sleep(time.Duration(try+1) * 500 * time.Millisecond) // database outage back-off
	}
	if err != nil && len(batch) > 1 {
		// One bad row must not cost the others their outcome: record them
		// one by one.
		n.logger.Error("record attempts as a batch failed; recording one by one", "count", len(batch), "error", err)
		events, err = nil, nil
		for _, r := range batch {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			ev, e := n.record(ctx, []result{r})
			cancel()
			if e != nil {
				n.logger.Error("record attempt failed; the row is retried when its lease lapses", "uuid", r.c.n.UUID, "error", e)
				err = e
				continue
			}
			events = append(events, ev...)
		}
	} else if err != nil {
		n.logger.Error("record attempt failed; the row is retried when its lease lapses", "uuid", batch[0].c.n.UUID, "error", err)
	}
	n.mu.Lock()
	for _, r := range batch {
		n.releasePayment(r.c.n.PaymentID)
	}
	n.mu.Unlock()
	for _, e := range events {
		n.logger.Info("delivery attempt", "uuid", e.UUID, "attempt", e.Attempt, "outcome", e.Outcome,
			"http_status", derefInt(e.HTTPStatus), "status", e.DeliveryStatus, "error", e.Error)
	}
	n.events.publish(events)
	// A recorded attempt makes work claimable when it frees its payment's
	// turn (a later notification of the payment waits for it) or leaves its
	// row due at once (interrupted, or not recorded: due when the lease
	// lapses, which the loop's timer finds). Other outcomes are scheduled
	// in the future, which the loop's timer finds too.
	wake := err != nil
	for _, r := range batch {
		wake = wake || r.c.n.PaymentID != nil || r.outcome == deliveryattempt.OutcomeInterrupted
	}
	for range batch {
		n.sends.Done()
	}
	if wake {
		n.Wake()
	}
}

// record stores attempt outcomes and the notifications' next states in one
// transaction: the attempt rows in one INSERT, the notifications in one
// UPDATE on PostgreSQL (row by row on SQLite, in process), the events in one
// INSERT. A notification is only moved on if this instance still holds it
// (its attempt is the latest); an acknowledgement always counts.
func (n *Notifier) record(ctx context.Context, batch []result) ([]*entdb.DeliveryEvent, error) {
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
			if t, ok := n.cfg.Policy.Next(r.c.n.CreatedAt, r.finished, r.c.number); ok {
				plans[i] = next{status: notification.StatusRetrying, at: &t}
			} else {
				plans[i] = next{status: notification.StatusFailed}
			}
		}
	}
	var events []*entdb.DeliveryEvent
	var finished []notification.Status
	err := store.WithTx(ctx, n.db.Client, func(tx *entdb.Tx) error {
		finished = finished[:0]
		if err := n.asyncCommit(ctx, tx); err != nil {
			return err
		}
		attempts := make([]*entdb.DeliveryAttempt, len(batch))
		for i, r := range batch {
			attempts[i] = &entdb.DeliveryAttempt{
				NotificationID: r.c.n.ID,
				Number:         r.c.number,
				StartedAt:      r.c.started,
				FinishedAt:     &batch[i].finished,
				RequestMethod:  r.c.n.Method,
				RequestURL:     r.c.n.URL,
				Outcome:        r.outcome,
				ResponseStatus: r.status,
				ResponseBody:   r.body,
				Error:          r.err,
				DurationMs:     r.duration.Milliseconds(),
				NextAttemptAt:  plans[i].at,
			}
		}
		if err := n.insertAttempts(ctx, tx, attempts); err != nil {
			return err
		}
		moved, err := n.moveOn(ctx, tx, batch, func(i int) (notification.Status, *time.Time) { return plans[i].status, plans[i].at })
		if err != nil {
			return err
		}
		events = make([]*entdb.DeliveryEvent, len(batch))
		for i, r := range batch {
			status, at := plans[i].status, plans[i].at
			if !moved[r.c.n.ID] {
				// Another instance took the row over (our lease lapsed); it
				// owns the state now. The attempt itself is still logged.
				cur, err := tx.Notification.Get(ctx, r.c.n.ID)
				if err != nil {
					return err
				}
				status, at = cur.Status, cur.NextAttemptAt
			} else if status == notification.StatusAcknowledged || status == notification.StatusFailed {
				finished = append(finished, status)
			}
			events[i] = n.newEvent(r.c.n, deliveryevent.KindAttempt, r.c.number, string(r.outcome), r.status, r.err, string(status), at)
		}
		if err := n.insertEvents(ctx, tx, n.eventLock(ctx, tx), events); err != nil {
			return err
		}
		return n.notifyPeers(ctx, tx, events)
	})
	if err == nil {
		n.observeFinished(finished...)
	}
	return events, err
}

// observeFinished tells the observer of notifications that left the queue
// in a committed transaction of this instance.
func (n *Notifier) observeFinished(statuses ...notification.Status) {
	if o := n.cfg.Observer; o != nil {
		for _, st := range statuses {
			o.NotificationFinished(st.String())
		}
	}
}

// moveOn sets each notification's next state, only where this instance
// still holds it, and reports which rows moved.
func (n *Notifier) moveOn(ctx context.Context, tx *entdb.Tx, batch []result, plan func(int) (notification.Status, *time.Time)) (map[int64]bool, error) {
	moved := make(map[int64]bool, len(batch))
	if n.db.Dialect == store.Postgres {
		// One array per column (see bulk.go): the statement does not grow
		// with the batch.
		ids, numbers, statuses, nexts, finished := make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch)), make([]any, len(batch))
		for i, r := range batch {
			status, at := plan(i)
			ids[i], numbers[i], statuses[i], nexts[i], finished[i] = r.c.n.ID, r.c.number, string(status), nullable(at), r.finished
		}
		const q = `UPDATE notifications AS n SET status = v.status, next_attempt_at = v.next, lease_until = NULL, lease_owner = '', updated_at = v.finished
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS v(id, number, status, next, finished)
			WHERE n.id = v.id AND (
				(v.status = 'acknowledged' AND n.status <> 'acknowledged') OR
				(v.status <> 'acknowledged' AND n.status IN ('pending', 'retrying') AND n.attempts = v.number))
			RETURNING n.id`
		args := []any{store.Array(ids), store.Array(numbers), store.Array(statuses), store.Array(nexts), store.Array(finished)}
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("update notifications: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return nil, err
			}
			moved[id] = true
		}
		return moved, rows.Err()
	}
	for i, r := range batch {
		status, at := plan(i)
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
		moved[r.c.n.ID] = changed > 0
	}
	return moved, nil
}

// asyncCommit lets a dispatcher transaction (a claim, or attempt records)
// commit without waiting for its WAL flush on PostgreSQL. If the database
// crashes right after, the transaction may be lost; for a claim the row is
// simply claimed again, for a record the attempt is repeated (a duplicate
// delivery of an attempt that was in flight, which receivers handle by
// uuid). No notification is lost: notifications themselves are stored by
// the caller's transaction, which stays synchronous.
func (n *Notifier) asyncCommit(ctx context.Context, tx *entdb.Tx) error {
	if n.db.Dialect != store.Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		return fmt.Errorf("set commit mode: %w", err)
	}
	return nil
}

// PeerChannel is the PostgreSQL NOTIFY channel on which instances sharing a
// database tell each other that events were committed; the payload lists
// the owners (API key ids) concerned. It is only a wake-up: the event table
// is the truth.
const PeerChannel = "payhook_events"

// notifyPeers queues a NOTIFY, delivered when tx commits, so other
// instances wake their dispatchers and watch streams.
func (n *Notifier) notifyPeers(ctx context.Context, tx *entdb.Tx, evs []*entdb.DeliveryEvent) error {
	if n.db.Dialect != store.Postgres || len(evs) == 0 {
		return nil
	}
	seen := map[int64]bool{}
	var owners []string
	for _, e := range evs {
		if !seen[e.APIKeyID] {
			seen[e.APIKeyID] = true
			owners = append(owners, strconv.FormatInt(e.APIKeyID, 10))
		}
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", PeerChannel, strings.Join(owners, ",")); err != nil {
		return fmt.Errorf("notify peers: %w", err)
	}
	return nil
}

// listenPeers wakes this instance's dispatcher and watch streams when
// another instance commits events, until ctx ends.
func (n *Notifier) listenPeers(ctx context.Context) {
	msgs, err := store.Listen(ctx, n.db, PeerChannel, func(err error) {
		n.logger.Warn("event listener connection", "error", err)
	})
	if err != nil {
		n.logger.Error("listen for other instances' events; relying on polling", "error", err)
		return
	}
	if msgs == nil {
		return
	}
	// Events other instances committed before this listener was up were
	// announced to nobody here: watchers re-read, the loop claims.
	n.Wake()
	n.events.publishAll()
	close(n.listening)
	for m := range msgs {
		n.Wake()
		if m.Payload == "" {
			n.events.publishAll()
			continue
		}
		var owners []int64
		for f := range strings.SplitSeq(m.Payload, ",") {
			if id, err := strconv.ParseInt(f, 10, 64); err == nil {
				owners = append(owners, id)
			}
		}
		n.events.publishOwners(owners)
	}
}

// nextDue returns the earliest time at which more work becomes due.
func (n *Notifier) nextDue(ctx context.Context) (time.Time, bool, error) {
	// Only future work counts: rows already due but not claimable (their
	// destination is at its bound, an earlier notification of their payment
	// is in flight) become claimable when an attempt finishes, which wakes
	// the loop; waiting on them here would spin.
	row, err := n.db.Client.Notification.Query().
		Where(notification.NextAttemptAtGT(n.cfg.Clock.Now())).
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

// eventLock returns a function that, on its first call, serialises event
// inserts on PostgreSQL until the transaction ends, so event ids (the watch
// cursor) become visible in increasing order: a reader that saw id N never
// later finds an id below N appear. Call it right before inserting events.
// SQLite has one writer at a time already.
func (n *Notifier) eventLock(ctx context.Context, tx *entdb.Tx) func() error {
	done := n.db.Dialect != store.Postgres
	return func() error {
		if done {
			return nil
		}
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", eventLockKey); err != nil {
			return fmt.Errorf("lock event log: %w", err)
		}
		done = true
		return nil
	}
}

// eventLockKey is the advisory lock that orders event inserts.
const eventLockKey = 0x70617968 // "payh"

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
