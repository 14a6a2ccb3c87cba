package notifier

import (
	"context"
	"fmt"
	"slices"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
)

// Holding. A notification stored while the dispatch loop runs but cannot
// start at once (every worker or every slot of its destination is busy, an
// earlier notification of its sequence is in flight or held here, or its
// signature made once is still to be made: signHeld) is stored as one
// claimed as stored is: leased to this instance, its first
// attempt counted, out of the due range until the lease's end. It then
// waits in memory, in the order stored, and starts when a slot and its
// sequence's turn free up, without being claimed back from the database
// (a full-row read and a lease update each, which under load were most of
// what the queue cost the database).
//
// A held row must start while its lease leaves room for the attempt and
// its record (its deadline); one that cannot is given back, with the rows
// of its sequence held after it: due since it was stored, unleased, its
// attempt uncounted, for the dispatch loop to claim. So is every held row
// when the dispatcher stops, once its attempts in flight are recorded.
// Rows of a sequence being given back, or past the bounds behind held
// ones, are stored due behind them (claimStored), so first attempts keep
// their order. If the process dies, the
// leases lapse and the rows are taken over like attempts that were in
// flight (recorded as interrupted, attempted again).
//
// Holding is bounded: Config.Hold rows in all, and per destination as
// many as its slots can start within half the lease's room at its recent
// attempt duration; while other instances share the database (Events'
// presence), no more than this one's workers and the destination's slots,
// so a burst is shared. A row that would pass a bound is stored due, as
// the destination's backlog, and rows stored for the destination after it
// queue behind it in the database until the loop has claimed it.

// heldRow is a notification held in memory for its first attempt.
type heldRow struct {
	n *entdb.Notification
	// deadline is the last moment its attempt may start.
	deadline time.Time
	// ready: its transaction committed (n is then the sender's copy, with
	// its id). gone: started, given back or abandoned; the destination's
	// queue drops it lazily.
	ready, gone bool
	// unsigned: its signature made once (RSA) is still to be made, by the
	// dispatcher's signers (signHeld), before it starts; sig is the one
	// they made (empty if signing failed: its attempt signs and fails).
	unsigned bool
	sig      string
}

// heldQueue is the rows held, per destination in the order stored, and per
// sequence in the order stored. d.mu guards it.
type heldQueue struct {
	byHost map[string]*hostHeld
	bySeq  map[string][]*heldRow
	count  int // rows held (not gone)
	// back are rows past their deadline, to give back (giveBackExpired).
	back []*heldRow
	// returning counts, per sequence, its rows being given back (in back,
	// or their update running): a row of the sequence stored meanwhile is
	// stored due, behind them, never held or claimed as stored.
	returning map[string]int
}

// hostHeld is one destination's held rows, oldest first.
type hostHeld struct {
	rows []*heldRow
	live int // not gone
}

func newHeldQueue() heldQueue {
	return heldQueue{byHost: map[string]*hostHeld{}, bySeq: map[string][]*heldRow{}, returning: map[string]int{}}
}

func (q *heldQueue) add(h *heldRow) {
	hh := q.byHost[h.n.Host]
	if hh == nil {
		hh = &hostHeld{}
		q.byHost[h.n.Host] = hh
	}
	hh.rows = append(hh.rows, h)
	hh.live++
	q.count++
	if s := h.n.Sequence; s != nil {
		q.bySeq[*s] = append(q.bySeq[*s], h)
	}
}

// drop marks h gone and takes it out of the counts and its sequence.
func (q *heldQueue) drop(h *heldRow) {
	if h.gone {
		return
	}
	h.gone = true
	q.count--
	if hh := q.byHost[h.n.Host]; hh != nil {
		hh.live--
	}
	if s := h.n.Sequence; s != nil {
		rows := slices.DeleteFunc(q.bySeq[*s], func(x *heldRow) bool { return x == h })
		if len(rows) == 0 {
			delete(q.bySeq, *s)
		} else {
			q.bySeq[*s] = rows
		}
	}
}

// hasSeq reports whether rows of seq are held.
func (q *heldQueue) hasSeq(seq string) bool { return len(q.bySeq[seq]) > 0 }

// toReturn moves h to the rows to give back.
func (q *heldQueue) toReturn(h *heldRow) {
	q.drop(h)
	q.back = append(q.back, h)
	if s := h.n.Sequence; s != nil {
		q.returning[*s]++
	}
}

// returned forgets rows given back (or put back to be given back again).
func (q *heldQueue) returned(rows []*heldRow) {
	for _, h := range rows {
		if s := h.n.Sequence; s != nil {
			if q.returning[*s]--; q.returning[*s] <= 0 {
				delete(q.returning, *s)
			}
		}
	}
}

// compact drops the gone rows at the head of host's queue, all of them
// when they are most of it, and forgets a destination with none held.
func (q *heldQueue) compact(host string) {
	hh := q.byHost[host]
	if hh == nil {
		return
	}
	if hh.live == 0 {
		delete(q.byHost, host)
		return
	}
	i := 0
	for i < len(hh.rows) && hh.rows[i].gone {
		i++
	}
	hh.rows = hh.rows[i:]
	if len(hh.rows) > 64 && hh.live < len(hh.rows)/2 {
		hh.rows = slices.DeleteFunc(hh.rows, func(x *heldRow) bool { return x.gone })
	}
}

// holdRoom is how long after it is stored a held row may still start: its
// lease less the attempt's timeout and a margin for its record (5 s, or
// half of what the lease leaves when that is less).
func (d *Dispatcher) holdRoom() time.Duration {
	left := d.cfg.Lease - d.cfg.AttemptTimeout
	return left - min(5*time.Second, left/2)
}

// unknownDuration is the attempt duration assumed for a destination with
// no recent attempt, for the bound on its held rows.
const unknownDuration = 250 * time.Millisecond

// canHold reports whether row, which cannot start now, may be held (see
// Holding). d.mu must be held.
func (d *Dispatcher) canHold(row *entdb.Notification) bool {
	if _, _, ok := d.throttled(row); d.cfg.Hold <= 0 || ok {
		// A throttled endpoint's row starts only with a token: never held.
		return false
	}
	limit := d.cfg.Hold
	dur, ok := d.hostDuration[row.Host]
	if !ok {
		dur = unknownDuration
	}
	dur = max(dur, time.Millisecond)
	bound := int64(d.cfg.PerHost) * int64(d.holdRoom()/2) / int64(dur)
	if !d.events.alone() {
		// Other instances share the queue: hold no more than this one can
		// start at once, and leave the rest of a burst to every instance.
		limit, bound = min(limit, d.cfg.Workers), min(bound, int64(d.cfg.PerHost))
	}
	if d.held.count >= limit {
		return false
	}
	if row.Sequence != nil && d.held.hasSeq(*row.Sequence) {
		return true // it follows them, whatever the destination's backlog
	}
	if d.backlog[row.Host] {
		return false
	}
	live := 0
	if hh := d.held.byHost[row.Host]; hh != nil {
		live = hh.live
	}
	return int64(live) < bound
}

// hold stores row as held: leased to this instance with its first attempt
// counted; it waits for its transaction's commit (ready). d.mu must be
// held.
func (d *Dispatcher) hold(row *entdb.Notification, now time.Time) *heldRow {
	until := now.Add(d.cfg.Lease)
	row.Attempts = 1
	row.LeaseUntil, row.LeaseOwner, row.NextAttemptAt = &until, d.cfg.InstanceID, &until
	_, unsigned := d.queue.storedSigner(row)
	h := &heldRow{n: row, deadline: now.Add(d.holdRoom()), unsigned: unsigned}
	d.held.add(h)
	return h
}

// maxHeldSkips bounds how many held rows of a destination one look passes
// over (their sequence's turn has not come, or their transaction has not
// committed) before it gives up until the next.
const maxHeldSkips = 256

// takeHeld starts, as far as free workers and host's slots allow, the
// held rows of host whose turn has come, oldest first, and moves those
// past their deadline to be given back. It returns the claims to send.
// d.mu must be held.
func (d *Dispatcher) takeHeld(host string, now time.Time, out []claim) []claim {
	hh := d.held.byHost[host]
	if hh == nil {
		return out
	}
	d.expirePassed(host, now)
	skips := 0
scan:
	for i := 0; i < len(hh.rows) && skips < maxHeldSkips && d.hasSlot(host); i++ {
		h := hh.rows[i]
		switch {
		case h.gone:
			continue
		case !h.ready:
			skips++
			continue
		case h.unsigned:
			// The signers go in the order rows became ready: the rows
			// after it are not signed either (or will start when it is).
			break scan
		case now.After(h.deadline):
			skips++ // behind an attempt of its sequence (expirePassed)
			continue
		}
		if s := h.n.Sequence; s != nil && (d.inflight[*s] > 0 || d.held.bySeq[*s][0] != h) {
			skips++
			continue
		}
		d.held.drop(h)
		d.takeSlot(h.n, now)
		c := claim{n: h.n, number: h.n.Attempts, started: now}
		if h.sig != "" {
			h.n.Signature, c.presigned = h.sig, true
		}
		out = append(out, c)
	}
	d.held.compact(host)
	return out
}

// expireHeld moves h, and the rows of its sequence held with it (h is the
// first of them that is ready: expirePassed goes in the order stored), to
// be given back. d.mu must be held.
func (d *Dispatcher) expireHeld(h *heldRow) {
	rows := []*heldRow{h}
	if s := h.n.Sequence; s != nil {
		rows = slices.Clone(d.held.bySeq[*s]) // h among them: it is held
	}
	for _, r := range rows {
		if r.ready { // an uncommitted row is abandoned or made ready later
			d.held.toReturn(r)
		}
	}
}

// expirePassed moves the rows of host past their deadline to be given
// back, except behind an attempt of their sequence in flight here (given
// back, a peer could start them before it ends; it ends before their
// lease, so they are given back after it). d.mu must be held.
func (d *Dispatcher) expirePassed(host string, now time.Time) {
	hh := d.held.byHost[host]
	if hh == nil {
		return
	}
	// Deadlines follow the order stored: those passed are at the head.
	for _, h := range hh.rows {
		if h.gone {
			continue
		}
		if !h.ready || !now.After(h.deadline) {
			break
		}
		if s := h.n.Sequence; s != nil && d.inflight[*s] > 0 {
			continue
		}
		d.expireHeld(h)
	}
}

// maxHeldHosts bounds how many other destinations one startHeld looks at
// for a worker freed by host; the dispatch loop looks at every one.
const maxHeldHosts = 16

// startHeld starts what held rows can start now: host's first, then, while
// workers are free, those of other destinations (at most maxHeldHosts of
// them, or every one when host is ""). It wakes the loop when rows are to
// be given back, and reports whether a worker and a slot of host are still
// free after it (for the loop to claim from the database).
func (d *Dispatcher) startHeld(host string) (free bool) {
	d.mu.Lock()
	if !d.handOff || d.held.count == 0 {
		free = d.hasSlot(host)
		d.mu.Unlock()
		return free
	}
	now := d.cfg.Now()
	var claims []claim
	if host == "" {
		// Every destination's deadlines, whether a worker is free or not.
		for h := range d.held.byHost {
			d.expirePassed(h, now)
		}
	} else {
		claims = d.takeHeld(host, now, claims)
	}
	looked := 0
	for h := range d.held.byHost {
		if d.active >= d.cfg.Workers || (host != "" && looked >= maxHeldHosts) {
			break
		}
		if h != host {
			looked++
			claims = d.takeHeld(h, now, claims)
		}
	}
	back := len(d.held.back) > 0
	free = d.hasSlot(host)
	d.mu.Unlock()
	for _, c := range claims {
		go d.send(c)
	}
	if back {
		d.signal()
	}
	return free
}

// giveBackExpired gives back the held rows that passed their deadline.
func (d *Dispatcher) giveBackExpired(ctx context.Context) error {
	d.mu.Lock()
	rows := d.held.takeBack()
	d.mu.Unlock()
	err := d.giveBack(ctx, rows)
	d.mu.Lock()
	if err != nil {
		d.held.back = append(d.held.back, rows...) // again at the next sweep, or at Stop
	} else {
		d.held.returned(rows)
	}
	d.mu.Unlock()
	return err
}

// takeBack returns the rows to give back and forgets them.
func (q *heldQueue) takeBack() []*heldRow {
	rows := q.back
	q.back = nil
	return rows
}

// giveBack makes held rows due again as they were when stored (their
// first attempt due at their creation, so a row of their sequence stored
// since comes after them), unleased and their attempt uncounted, where
// this instance still holds them (a row whose lease lapsed may have been
// taken over), and leaves them to the dispatch loop: their destinations
// have a backlog.
func (d *Dispatcher) giveBack(ctx context.Context, rows []*heldRow) error {
	if len(rows) == 0 {
		return nil
	}
	now := d.cfg.Now()
	// The rows of one transaction share their creation time.
	byCreation := map[time.Time][]int64{}
	for _, h := range rows {
		byCreation[h.n.CreatedAt] = append(byCreation[h.n.CreatedAt], h.n.ID)
	}
	err := store.WithTx(ctx, d.db.Client, func(tx *entdb.Tx) error {
		for created, ids := range byCreation {
			for chunk := range slices.Chunk(ids, store.BulkChunk) {
				if _, err := tx.Notification.Update().
					Where(notification.IDIn(chunk...), notification.LeaseOwner(d.cfg.InstanceID), notification.Attempts(1),
						notification.StatusEQ(notification.StatusPending), notification.LeaseUntilGT(now)).
					SetAttempts(0).
					ClearLeaseUntil().
					SetLeaseOwner("").
					SetNextAttemptAt(created).
					SetUpdatedAt(now).
					Save(ctx); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		// Their leases lapse and the rows are taken over.
		return fmt.Errorf("give back %d held notifications: %w", len(rows), err)
	}
	d.mu.Lock()
	for _, h := range rows {
		d.backlog[h.n.Host] = true
	}
	d.rescan = true
	d.mu.Unlock()
	d.signal()
	return nil
}

// giveBackAll gives back every held row (the dispatcher stops).
func (d *Dispatcher) giveBackAll(ctx context.Context) error {
	d.mu.Lock()
	rows := d.held.takeBack()
	for _, hh := range d.held.byHost {
		for _, h := range hh.rows {
			if !h.gone && h.ready {
				rows = append(rows, h)
				d.held.toReturn(h)
			}
		}
	}
	d.held.back = nil
	for h := range d.held.byHost {
		d.held.compact(h)
	}
	d.mu.Unlock()
	err := d.giveBack(ctx, rows)
	d.mu.Lock()
	d.held.returned(rows)
	d.mu.Unlock()
	return err
}

// oldestHeld is how long the oldest held row has waited (0 when none).
func (d *Dispatcher) oldestHeld(now time.Time) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	var oldest time.Duration
	for _, hh := range d.held.byHost {
		for _, h := range hh.rows {
			if !h.gone {
				oldest = max(oldest, now.Sub(h.n.CreatedAt))
				break
			}
		}
	}
	return oldest
}

// heldSweepEvery paces the dispatch loop's look at every destination's
// held rows: a freed slot starts its own destination's rows at once, the
// sweep the rest (workers freed by other destinations, deadlines passed).
// (A pace of work, not a schedule: it runs on the wall clock.)
const heldSweepEvery = 100 * time.Millisecond

// sweepHeld, from the dispatch loop, starts what held rows can start and
// gives back those past their deadline.
func (d *Dispatcher) sweepHeld(ctx context.Context) {
	d.mu.Lock()
	wall := clock.Now()
	sweep := d.held.count > 0 && wall.Sub(d.heldSwept) >= heldSweepEvery
	if sweep {
		d.heldSwept = wall
	}
	d.mu.Unlock()
	if sweep {
		d.startHeld("")
	}
	if err := d.giveBackExpired(ctx); err != nil && ctx.Err() == nil {
		d.logger.Warn("give back held notifications past their deadline; they are taken over when their leases lapse", "error", err)
	}
}

// readyHeld makes the held rows of a committed transaction ready to start
// (each the sender's copy, with its id) and starts those that can. Rows
// committed after the dispatcher began to stop are given back at once.
func (d *Dispatcher) readyHeld(rows []*heldRow) {
	hosts := map[string]bool{}
	var back []*heldRow
	d.mu.Lock()
	for _, h := range rows {
		cp := *h.n // the producer keeps its row
		h.n, h.ready = &cp, true
		hosts[h.n.Host] = true
		if !d.handOff && !h.gone {
			d.held.drop(h)
			back = append(back, h)
			continue
		}
		if h.unsigned && !h.gone {
			select {
			case d.toSign <- h:
			default:
				h.unsigned = false // its attempt signs it
			}
		}
	}
	d.mu.Unlock()
	if len(back) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.StopTimeout)
		defer cancel()
		if err := d.giveBack(ctx, back); err != nil {
			d.logger.Warn("give back held notifications; they are taken over when their leases lapse", "error", err)
		}
		return
	}
	for h := range hosts {
		d.startHeld(h)
	}
}

// signHeld is one of the dispatcher's signers (GOMAXPROCS of them, from
// Start): it makes the signatures made once of held rows, in the order the
// rows became ready, and starts what can start once each is made. A row
// takes a worker and a slot of its destination only once signed, so the
// attempts in flight to a fast destination are the few its network round
// trip needs, not as many as its slots while they wait for the processors
// to sign (docs/decisions.md, "Held rows are signed before they start").
// The signature is stored by the attempt's record, as one made by the
// attempt itself would be.
func (d *Dispatcher) signHeld(ctx context.Context) {
	for {
		var h *heldRow
		select {
		case <-ctx.Done():
			return
		case h = <-d.toSign:
		}
		d.mu.Lock()
		skip := h.gone || !h.unsigned
		d.mu.Unlock()
		if skip {
			continue
		}
		var sig string
		if st, ok := d.queue.storedSigner(h.n); ok {
			var err error
			if sig, err = d.queue.signOnce(st, h.n); err != nil {
				sig = "" // the attempt signs again and records the error
			}
		}
		d.mu.Lock()
		h.unsigned, h.sig = false, sig
		host := h.n.Host
		d.mu.Unlock()
		d.startHeld(host)
	}
}
