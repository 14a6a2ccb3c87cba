package notifier

import (
	"context"
	"fmt"
	"strconv"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
)

// Resend asks for one more attempt of the notification uuid of owner, now:
// same uuid, same stored bytes, a signature made for that attempt. Another
// owner's uuid is ErrNotFound, as an unknown one is. The notification's
// status and delivery deadline do not change; what the attempt does depends
// on where the notification stands when the attempt starts:
//
//   - Not acknowledged, and its window still open: the attempt is a normal
//     one, made now instead of at its scheduled time; if it fails, automatic
//     retries continue on the schedule until the deadline, which is not
//     extended.
//   - Acknowledged, or past its deadline: exactly one attempt. An
//     acknowledgement makes the notification acknowledged; otherwise it
//     stays as it was (acknowledged, or failed) with no further automatic
//     attempt.
//
// The request is stored (the row's resend flag and next attempt time) and
// survives a restart. Each request is answered by an attempt that starts
// after it: requests made before that attempt starts share it (a double
// click sends once); a request made while an attempt is in flight is kept,
// and its attempt follows as soon as that one is recorded (or, if its
// instance died, when its lease lapses).
func (q *Queue) Resend(ctx context.Context, owner int64, uuid string) (*entdb.Notification, error) {
	var row *entdb.Notification
	err := store.WithTx(ctx, q.db.Client, func(tx *entdb.Tx) error {
		sel := tx.Notification.Query().Where(notification.UUID(uuid), notification.OwnerID(owner))
		if q.db.Dialect == store.Postgres {
			// Serialises with claims (which skip the row meanwhile) and
			// with the recording of an attempt, so neither misses the flag.
			sel.ForUpdate()
		}
		cur, err := sel.Only(ctx)
		if entdb.IsNotFound(err) {
			return fmt.Errorf("resend %q: %w", uuid, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("resend %q: %w", uuid, err)
		}
		now := q.now()
		up := tx.Notification.UpdateOne(cur).SetResend(true).SetUpdatedAt(now)
		if cur.LeaseUntil == nil || cur.LeaseUntil.Before(now) {
			up.SetNextAttemptAt(now)
		}
		// Else an attempt is in flight: its row keeps the lease's end as its
		// next attempt time (a leased row stays out of the due range), and
		// recording the attempt makes the row due at once because of the
		// flag; if its instance died, the row is due when the lease lapses.
		if row, err = up.Save(ctx); err != nil {
			return fmt.Errorf("resend %q: %w", uuid, err)
		}
		return q.events.wakePeers(ctx, tx, owner)
	})
	if err != nil {
		return nil, err
	}
	if q.handOff != nil {
		q.handOff.Wake()
	}
	return row, nil
}

// wakePeers queues a NOTIFY, delivered when tx commits, that wakes other
// instances' dispatchers (and makes their watchers of owner re-read, which
// finds nothing new): a resend is due at once on whichever instance has a
// free worker. The event kinds have no resend, so no event is stored.
func (e *Events) wakePeers(ctx context.Context, tx *entdb.Tx, owner int64) error {
	if e.db.Dialect != store.Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", PeerChannel, e.peerPayload(strconv.FormatInt(owner, 10))); err != nil {
		return fmt.Errorf("notify peers: %w", err)
	}
	return nil
}

// outsideSchedule reports whether a resend of row claimed at now makes
// exactly one attempt outside the automatic schedule: the row is
// acknowledged, or its window has closed. (A start exactly at the deadline
// is inside it, as for automatic attempts.)
func outsideSchedule(row *entdb.Notification, now time.Time) bool {
	return row.Status == notification.StatusAcknowledged || now.After(row.ExpiresAt)
}

// lapsedResend reports whether the attempt whose lease lapsed on row (its
// instance died) was a resend's attempt outside the automatic schedule: only
// a resend leases an acknowledged or failed row, and the schedule starts
// nothing after the deadline. Such an attempt is made again, as an
// interrupted attempt inside the window is; the claim cleared the flag.
func (d *Dispatcher) lapsedResend(row *entdb.Notification) bool {
	if row.Status == notification.StatusAcknowledged || row.Status == notification.StatusFailed {
		return true
	}
	return row.LeaseUntil.Add(-d.cfg.Lease).After(row.ExpiresAt)
}

// moved is a notification's state after an attempt was recorded.
type moved struct {
	status notification.Status
	next   *time.Time
}

// moveOnResent sets the next state of a notification after an attempt
// claimed for a resend, if this instance still holds it (the attempt is its
// latest and nothing settled it meanwhile); an acknowledgement always
// counts. status and at are the plan of a normal attempt. Resends are rare
// and manual, so each is read and updated on its own, under its row lock.
func (d *Dispatcher) moveOnResent(ctx context.Context, tx *entdb.Tx, r result, status notification.Status, at *time.Time) (moved, bool, error) {
	sel := tx.Notification.Query().Where(notification.ID(r.c.n.ID))
	if d.db.Dialect == store.Postgres {
		sel.ForUpdate()
	}
	cur, err := sel.Only(ctx)
	if err != nil {
		return moved{}, false, fmt.Errorf("read resent notification: %w", err)
	}
	holds := cur.Attempts == r.c.number && cur.LeaseUntil != nil
	rearm := false
	switch {
	case r.outcome == deliveryattempt.OutcomeAcknowledged:
		if !holds && cur.Status == notification.StatusAcknowledged {
			return moved{}, false, nil
		}
	case !holds:
		return moved{}, false, nil
	case r.c.oneShot:
		// Its one attempt: the notification stays as it was, or fails if its
		// window closed before an automatic attempt failed it. An attempt
		// interrupted by payhook is made again.
		status, at = cur.Status, nil
		if status == notification.StatusPending || status == notification.StatusRetrying {
			status = notification.StatusFailed
		}
		rearm = r.outcome == deliveryattempt.OutcomeInterrupted
	case cur.Status == notification.StatusAcknowledged:
		// An earlier attempt's acknowledgement was recorded meanwhile.
		status, at = notification.StatusAcknowledged, nil
	}
	resend := cur.Resend || rearm // asked again while this attempt was in flight
	if resend {
		at = &r.finished
	}
	up := tx.Notification.UpdateOneID(cur.ID).
		SetStatus(status).
		SetResend(resend).
		ClearLeaseUntil().
		SetLeaseOwner("").
		SetUpdatedAt(r.finished)
	if at == nil {
		up.ClearNextAttemptAt()
	} else {
		up.SetNextAttemptAt(*at)
	}
	if err := up.Exec(ctx); err != nil {
		return moved{}, false, fmt.Errorf("update resent notification: %w", err)
	}
	return moved{status: status, next: at}, true, nil
}
