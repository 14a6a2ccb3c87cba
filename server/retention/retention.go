// Package retention deletes old delivery records: notifications with their
// attempts, the delivery event log, and the merchant event log, older than a
// configured age, and the audit log older than an age of its own (400 days
// by default: a yearly audit finds its whole year), in small batches that
// hold no long locks. It never deletes:
//
//   - a notification still to deliver (pending, retrying: inside its
//     window) or paused, or one being attempted;
//   - an endpoint's notification newer than that endpoint's last
//     acknowledged delivery (while an endpoint fails, what it missed stays
//     readable and replayable);
//   - a merchant event a waiting delivery still carries;
//   - anything of the ledger (the books are never pruned).
//
// Rows are read in primary-key order, which is the order they were
// stored, from the oldest: each batch is an index range scan. A run stops
// at the first row younger than the cutoff, except in the delivery event
// log and the audit log, which go on past young rows for up to a batch
// (oldPrefix): a row dated ahead by its writer's clock does not hold back
// the older rows stored after it.
package retention

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	entemail "github.com/payhook/payhook/ent/db/email"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	entevent "github.com/payhook/payhook/ent/db/event"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/db/predicate"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/startstop"
)

// Defaults of Config.
const (
	// DefaultAge is how old a record must be to be deleted.
	DefaultAge = 90 * 24 * time.Hour
	// DefaultAuditAge is how old an audit entry must be to be deleted:
	// over a year, so that a yearly audit, made some weeks after the year
	// it covers, still finds all of it.
	DefaultAuditAge = 400 * 24 * time.Hour
	// DefaultBatch is how many rows one transaction reads and deletes.
	DefaultBatch = 1000
	// DefaultInterval is how often a Collector runs.
	DefaultInterval = 10 * time.Minute
)

// Config configures the retention job.
type Config struct {
	// DB is the database.
	DB *entdb.Client
	// Age is how old a record must be to be deleted (DefaultAge when 0; a
	// negative age keeps everything).
	Age time.Duration
	// AuditAge is how old an audit entry (the audit log, server/audit)
	// must be to be deleted (DefaultAuditAge when 0; a negative age keeps
	// every entry). It is apart from Age: the audit log answers for who
	// changed what, and is kept longer than delivery records.
	AuditAge time.Duration
	// Batch is how many rows a transaction handles (DefaultBatch when 0).
	Batch int
	// Interval is how often the Collector runs (DefaultInterval when 0).
	Interval time.Duration
	// Now is the clock (clock.UTC when nil).
	Now func() time.Time
	// Logger logs each run's counts and failures.
	Logger *slog.Logger
	// Observe, when not nil, is told of each batch: the table it read
	// (notifications, delivery_events, events, emails, audit_entries), how many rows it
	// deleted there and how long its statements took.
	Observe func(table string, deleted int, took time.Duration)
}

// observe reports a batch of table that began at start, then paces the
// run: it pauses as long as the batch took (at most a second, less if ctx
// ends), so the job takes at most half of one database connection's time
// and the traffic it runs beside keeps its latency.
func (j *Job) observe(ctx context.Context, table string, deleted int, start time.Time) {
	took := clock.Now().Sub(start)
	if j.cfg.Observe != nil {
		j.cfg.Observe(table, deleted, took)
	}
	pause := time.NewTimer(min(took, time.Second))
	defer pause.Stop()
	select {
	case <-pause.C:
	case <-ctx.Done():
	}
}

func (c Config) withDefaults() Config {
	if c.Age == 0 {
		c.Age = DefaultAge
	}
	if c.AuditAge == 0 {
		c.AuditAge = DefaultAuditAge
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.Now == nil {
		c.Now = clock.UTC
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Result counts what a run deleted, and its batches.
type Result struct {
	Notifications, Attempts, DeliveryEvents, Events, Emails int
	// AuditEntries is how many audit entries it deleted.
	AuditEntries int
	// Batches is how many transactions it made.
	Batches int
}

// Job deletes old records (Run) and, as a Collector, runs every interval
// until Stop. Every instance may run one; their deletes overlap harmlessly.
type Job struct {
	startstop.Base
	cfg Config
}

// New returns the job.
func New(cfg Config) *Job { return &Job{cfg: cfg.withDefaults()} }

// Start runs the job every interval until Stop; it returns at once.
func (j *Job) Start(ctx context.Context) error {
	run, err := j.StartInit(ctx)
	if err != nil {
		return err
	}
	j.Go(func() {
		t := time.NewTicker(j.cfg.Interval)
		defer t.Stop()
		for {
			select {
			case <-run.Done():
				return
			case <-t.C:
			}
			res, err := j.Run(run)
			switch {
			case err != nil && run.Err() == nil:
				j.cfg.Logger.Warn("retention", "error", err)
			case res.Notifications+res.DeliveryEvents+res.Events+res.Emails+res.AuditEntries > 0:
				j.cfg.Logger.Info("retention: deleted old records", "notifications", res.Notifications,
					"attempts", res.Attempts, "delivery_events", res.DeliveryEvents, "events", res.Events, "emails", res.Emails,
					"audit_entries", res.AuditEntries)
			}
		}
	})
	return nil
}

// Run makes one pass: it deletes every record older than the age that
// may go, and every audit entry older than the audit age, batch by batch,
// and returns the counts.
func (j *Job) Run(ctx context.Context) (Result, error) {
	var res Result
	now := j.cfg.Now()
	if err := j.deliveryRecords(ctx, now, &res); err != nil {
		return res, err
	}
	if j.cfg.AuditAge >= 0 {
		if err := j.auditEntries(ctx, now.Add(-j.cfg.AuditAge), &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// deliveryRecords deletes the delivery records older than the age (none
// when it is negative).
func (j *Job) deliveryRecords(ctx context.Context, now time.Time, res *Result) error {
	if j.cfg.Age < 0 {
		return nil
	}
	cutoff := now.Add(-j.cfg.Age)
	if err := j.notifications(ctx, now, cutoff, res); err != nil {
		return err
	}
	if err := j.deliveryEvents(ctx, cutoff, res); err != nil {
		return err
	}
	if err := j.events(ctx, cutoff, res); err != nil {
		return err
	}
	return j.emails(ctx, cutoff, res)
}

// auditEntries deletes the audit log's entries created before the cutoff,
// every project's, from the oldest: no index beyond the primary key (see
// ent/schema/auditentry.go; oldPrefix).
func (j *Job) auditEntries(ctx context.Context, cutoff time.Time, res *Result) error {
	n, err := j.oldPrefix(ctx, "audit entries", cutoff, func(after int64) ([]idAt, error) {
		es, err := j.cfg.DB.AuditEntry.Query().Where(auditentry.IDGT(after)).Order(entdb.Asc(auditentry.FieldID)).Limit(j.cfg.Batch).
			Select(auditentry.FieldID, auditentry.FieldCreatedAt).All(ctx)
		out := make([]idAt, len(es))
		for i, e := range es {
			out[i] = idAt{e.ID, e.CreatedAt}
		}
		return out, err
	}, func(ids []int64) (int, error) {
		return j.cfg.DB.AuditEntry.Delete().Where(auditentry.IDIn(ids...)).Exec(ctx)
	}, res)
	res.AuditEntries += n
	return err
}

// idAt is a row's id and creation time.
type idAt struct {
	id int64
	at time.Time
}

// oldPrefix deletes, batch by batch, the rows of a log older than the
// cutoff. It reads them in primary-key order, which is about time order (a
// row is written when what it records happens), from a cursor that spares
// each batch the index entries of the rows deleted before it (dead until
// vacuumed). In each batch it deletes every row older than the cutoff and
// keeps the younger ones, and it stops after a batch with no old row (or
// a short one). So a row dated ahead of the rows stored after it (a
// writer whose clock is fast: an operator's payhook command on another
// host, an instance off by minutes) is kept until it is old by its own
// date, and the older rows after it go all the same: a run passes any
// stretch of fewer than a batch of young rows in a row. It reads at most
// one batch of young rows beyond the last old row it finds. read returns
// up to a batch of rows after an id; del deletes ids and says how many
// went. It returns how many rows it deleted; what names the log in errors.
func (j *Job) oldPrefix(ctx context.Context, what string, cutoff time.Time, read func(after int64) ([]idAt, error), del func([]int64) (int, error), res *Result) (int, error) {
	after, deleted := int64(0), 0
	for {
		start := clock.Now()
		rows, err := read(after)
		if err != nil {
			return deleted, fmt.Errorf("read old %s: %w", what, err)
		}
		var ids []int64
		for _, r := range rows {
			if r.at.Before(cutoff) {
				ids = append(ids, r.id)
			}
		}
		if len(ids) == 0 {
			return deleted, nil
		}
		n, err := del(ids)
		if err != nil {
			return deleted, fmt.Errorf("delete old %s: %w", what, err)
		}
		after = rows[len(rows)-1].id
		deleted += n
		res.Batches++
		j.observe(ctx, strings.ReplaceAll(what, " ", "_"), n, start)
		if len(rows) < j.cfg.Batch {
			return deleted, nil
		}
	}
}

// emails deletes the email outbox's finished emails (sent, or failed for
// good) created before the cutoff; a pending one stays whatever its age.
// It reads in primary-key order, which is time order, and stops at the
// first young email.
func (j *Job) emails(ctx context.Context, cutoff time.Time, res *Result) error {
	after := int64(0)
	for {
		start := clock.Now()
		ms, err := j.cfg.DB.Email.Query().Where(entemail.IDGT(after)).Order(entdb.Asc(entemail.FieldID)).Limit(j.cfg.Batch).
			Select(entemail.FieldID, entemail.FieldCreatedAt, entemail.FieldStatus).All(ctx)
		if err != nil {
			return fmt.Errorf("read old emails: %w", err)
		}
		var ids []int64
		young := false
		for _, m := range ms {
			if !m.CreatedAt.Before(cutoff) {
				young = true
				break
			}
			after = m.ID
			if m.Status != entemail.StatusPending {
				ids = append(ids, m.ID)
			}
		}
		if len(ids) > 0 {
			// Rechecked: an email still pending is never deleted.
			n, err := j.cfg.DB.Email.Delete().Where(entemail.IDIn(ids...), entemail.StatusNEQ(entemail.StatusPending)).Exec(ctx)
			if err != nil {
				return fmt.Errorf("delete old emails: %w", err)
			}
			res.Emails += n
			res.Batches++
			j.observe(ctx, "emails", n, start)
		}
		if young || len(ms) < j.cfg.Batch {
			return nil
		}
	}
}

// deliveryEvents deletes the delivery event log (WatchDeliveries' stream)
// older than the cutoff, whatever its notifications became: a watcher
// resumes from a cursor at most the age old. No index beyond the primary
// key (the log is written on the hot path; oldPrefix).
func (j *Job) deliveryEvents(ctx context.Context, cutoff time.Time, res *Result) error {
	n, err := j.oldPrefix(ctx, "delivery events", cutoff, func(after int64) ([]idAt, error) {
		evs, err := j.cfg.DB.DeliveryEvent.Query().Where(deliveryevent.IDGT(after)).Order(entdb.Asc(deliveryevent.FieldID)).Limit(j.cfg.Batch).
			Select(deliveryevent.FieldID, deliveryevent.FieldCreatedAt).All(ctx)
		out := make([]idAt, len(evs))
		for i, e := range evs {
			out[i] = idAt{e.ID, e.CreatedAt}
		}
		return out, err
	}, func(ids []int64) (int, error) {
		return j.cfg.DB.DeliveryEvent.Delete().Where(deliveryevent.IDIn(ids...)).Exec(ctx)
	}, res)
	res.DeliveryEvents += n
	return err
}

// notifications deletes the old notifications that may go, with their
// attempts and delivery events.
func (j *Job) notifications(ctx context.Context, now, cutoff time.Time, res *Result) error {
	after := int64(0)
	for {
		start := clock.Now()
		rows, err := j.cfg.DB.Notification.Query().
			Where(notification.IDGT(after)).
			Order(entdb.Asc(notification.FieldID)).Limit(j.cfg.Batch).
			Select(notification.FieldID, notification.FieldCreatedAt, notification.FieldStatus, notification.FieldNextAttemptAt,
				notification.FieldLeaseUntil, notification.FieldEndpointID).
			All(ctx)
		if err != nil {
			return fmt.Errorf("read old notifications: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		young := false
		var endpointIDs []int64
		for _, r := range rows {
			if r.EndpointID != nil {
				endpointIDs = append(endpointIDs, *r.EndpointID)
			}
		}
		lastSuccess, err := j.lastSuccess(ctx, endpointIDs)
		if err != nil {
			return err
		}
		var ids []int64
		for _, r := range rows {
			if !r.CreatedAt.Before(cutoff) {
				young = true // ids only grow with time: the rest are younger
				break
			}
			if r.NextAttemptAt != nil || (r.Status != notification.StatusAcknowledged && r.Status != notification.StatusFailed) ||
				(r.LeaseUntil != nil && r.LeaseUntil.After(now)) {
				continue // to deliver, paused, or being attempted
			}
			if r.EndpointID != nil {
				if last, ok := lastSuccess[*r.EndpointID]; ok && !r.CreatedAt.Before(last) {
					continue // newer than its endpoint's last acknowledgement
				}
			}
			ids = append(ids, r.ID)
		}
		if len(ids) > 0 {
			before := res.Notifications
			if err := j.deleteNotifications(ctx, ids, res); err != nil {
				return err
			}
			j.observe(ctx, "notifications", res.Notifications-before, start)
		}
		if young || len(rows) < j.cfg.Batch {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}

// lastSuccess returns, for each endpoint of ids that must keep its recent
// deliveries, the time after which they are kept: its last acknowledged
// delivery (the zero time when it never had one: everything is kept). A
// deleted endpoint keeps nothing.
func (j *Job) lastSuccess(ctx context.Context, ids []int64) (map[int64]time.Time, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	eps, err := j.cfg.DB.Endpoint.Query().Where(entendpoint.IDIn(ids...), entendpoint.DeletedAtIsNil()).
		Select(entendpoint.FieldID, entendpoint.FieldLastSuccessAt).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the endpoints of old notifications: %w", err)
	}
	out := make(map[int64]time.Time, len(eps))
	for _, e := range eps {
		var t time.Time
		if e.LastSuccessAt != nil {
			t = *e.LastSuccessAt
		}
		out[e.ID] = t
	}
	return out, nil
}

// deleteNotifications deletes the notifications of ids that are still
// finished (a resend may have revived one since they were read), then the
// attempts and delivery events of those it deleted, in one transaction.
func (j *Job) deleteNotifications(ctx context.Context, ids []int64, res *Result) error {
	return store.WithTx(ctx, j.cfg.DB, func(tx *entdb.Tx) error {
		finished := []predicate.Notification{
			notification.IDIn(ids...), notification.NextAttemptAtIsNil(),
			notification.StatusIn(notification.StatusAcknowledged, notification.StatusFailed),
		}
		gone, err := tx.Notification.Query().Where(finished...).IDs(ctx)
		if err != nil {
			return fmt.Errorf("recheck old notifications: %w", err)
		}
		if len(gone) == 0 {
			return nil
		}
		n, err := tx.Notification.Delete().Where(notification.IDIn(gone...), notification.NextAttemptAtIsNil()).Exec(ctx)
		if err != nil {
			return fmt.Errorf("delete old notifications: %w", err)
		}
		a, err := tx.DeliveryAttempt.Delete().Where(deliveryattempt.NotificationIDIn(gone...)).Exec(ctx)
		if err != nil {
			return fmt.Errorf("delete old delivery attempts: %w", err)
		}
		res.Notifications += n
		res.Attempts += a
		res.Batches++
		return nil
	})
}

// events deletes the merchant events older than the cutoff that no
// waiting delivery carries.
func (j *Job) events(ctx context.Context, cutoff time.Time, res *Result) error {
	after := int64(0)
	for {
		evs, err := j.cfg.DB.Event.Query().Where(entevent.IDGT(after), entevent.CreatedAtLT(cutoff)).
			Order(entdb.Asc(entevent.FieldID)).Limit(j.cfg.Batch).
			Select(entevent.FieldID).All(ctx)
		if err != nil {
			return fmt.Errorf("read old events: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		ids := make([]int64, len(evs))
		for i, e := range evs {
			ids[i] = e.ID
		}
		err = store.WithTx(ctx, j.cfg.DB, func(tx *entdb.Tx) error {
			waiting, err := tx.Notification.Query().
				Where(notification.EventIDIn(ids...), notification.Or(notification.NextAttemptAtNotNil(), notification.StatusEQ(notification.StatusPaused))).
				Select(notification.FieldEventID).All(ctx)
			if err != nil {
				return fmt.Errorf("find old events still waiting: %w", err)
			}
			keep := map[int64]bool{}
			for _, w := range waiting {
				if w.EventID != nil {
					keep[*w.EventID] = true
				}
			}
			var gone []int64
			for _, id := range ids {
				if !keep[id] {
					gone = append(gone, id)
				}
			}
			if len(gone) == 0 {
				return nil
			}
			n, err := tx.Event.Delete().Where(entevent.IDIn(gone...)).Exec(ctx)
			if err != nil {
				return fmt.Errorf("delete old events: %w", err)
			}
			res.Events += n
			res.Batches++
			return nil
		})
		if err != nil {
			return err
		}
		if len(evs) < j.cfg.Batch {
			return nil
		}
		after = ids[len(ids)-1]
	}
}
