package notifier

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/notifier/signer"
)

// Queue stores messages inside their producers' transactions and answers
// what the queue holds. Rows are written when the producer's transaction
// commits, together (one statement for the notifications, one for their
// created events), so a producer's batch costs a few round trips.
type Queue struct {
	db      *store.DB
	policy  schedule.Policy
	now     func() time.Time
	signers map[string]signer.Signer
	events  *Events
	logger  *slog.Logger

	// handOff, once a dispatcher is attached, claims rows as they are
	// stored and is woken for the rest.
	handOff handOff

	// pendingTxs maps an open *entdb.Tx to its *pendingTx.
	pendingTxs sync.Map

	// signing bounds the signatures made once that are computed at the
	// same time to the processors Go runs on: an RSA signature is a
	// millisecond of CPU and nothing else, so more at once only lengthen
	// the run queue, and every goroutine woken by the network (the watcher
	// between its database round trips, the recorder) waits behind them.
	signing chan struct{}

	depth depthCache // Stats' queue depth
}

// depthCache keeps the last queue depth Stats counted. Counting reads an
// index entry per queued notification (a million take about a quarter of
// a second of PostgreSQL), so a count that found at least depthCacheRows
// queued and took at least depthCacheFrom is made again only once
// depthCacheFactor times its duration has passed: a large queue's depth
// costs at most about 2% of one database connection's time however often
// /metrics is scraped (a million rows: counted about every 14 s), and a
// smaller queue is counted at every scrape, however long a loaded machine
// takes to count it. (A pace of work, not a schedule: it runs on the wall
// clock.)
type depthCache struct {
	mu       sync.Mutex
	at       time.Time     // when the last count started
	took     time.Duration // how long it took
	byStatus map[string]int
}

const (
	depthCacheRows   = 100_000
	depthCacheFrom   = 20 * time.Millisecond
	depthCacheFactor = 50
)

// recent reports whether the last count may stand for one started at now.
func (c *depthCache) recent(now time.Time) bool {
	if c.byStatus == nil || c.took < depthCacheFrom || now.Sub(c.at) >= depthCacheFactor*c.took {
		return false
	}
	total := 0
	for _, n := range c.byStatus {
		total += n
	}
	return total >= depthCacheRows
}

// handOff is what the Queue needs of a dispatcher.
type handOff interface {
	// claimStored reserves, among rows about to be stored, those the
	// dispatcher can attempt at once: it leases them (their fields are set
	// for the insert) and takes their slots.
	// first holds the rows whose sequence has no earlier message. Rows
	// left for the dispatch loop may get a later due time (after an
	// earlier notification of their sequence).
	claimStored(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification, first map[*entdb.Notification]bool) (stored, error)
	// sendStored starts the claimed attempts once their rows committed,
	// and wakes the dispatcher if the rest can be claimed.
	sendStored(st stored)
	// abandon gives back the slots of claims whose rows were not stored.
	abandon(st stored)
	// oldestHeld is how long the oldest row held in memory for its first
	// attempt has waited.
	oldestHeld(now time.Time) time.Duration
	// Wake tells the dispatcher that work may be due.
	Wake()
}

func newQueue(db *store.DB, cfg Config, events *Events, logger *slog.Logger) *Queue {
	q := &Queue{db: db, policy: cfg.Policy, now: cfg.Now, signers: map[string]signer.Signer{}, events: events, logger: logger,
		signing: make(chan struct{}, runtime.GOMAXPROCS(0))}
	for _, s := range cfg.Signers {
		q.signers[s.Scheme()] = s
	}
	return q
}

// pendingTx holds the notifications one transaction enqueued, written
// together when it commits.
type pendingTx struct {
	rows []*entdb.Notification
	// first holds the rows whose sequence has no earlier message
	// (Subject.FirstOfSequence).
	first map[*entdb.Notification]bool
	// before run first when the transaction commits (BeforeStore).
	before []func(ctx context.Context, tx *entdb.Tx) error
}

// pending returns tx's pending notifications, registering the hooks that
// store them when it commits (or forget them when it rolls back) the
// first time.
func (q *Queue) pending(tx *entdb.Tx) *pendingTx {
	p, loaded := q.pendingTxs.LoadOrStore(tx, &pendingTx{})
	pt := p.(*pendingTx)
	if loaded {
		return pt
	}
	tx.OnRollback(func(next entdb.Rollbacker) entdb.Rollbacker {
		return entdb.RollbackFunc(func(ctx context.Context, tx *entdb.Tx) error {
			q.pendingTxs.Delete(tx)
			return next.Rollback(ctx, tx)
		})
	})
	tx.OnCommit(func(next entdb.Committer) entdb.Committer {
		return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
			// The before hooks may enqueue more: they run while the
			// transaction's pending rows are still the ones Enqueue adds to.
			for i := 0; i < len(pt.before); i++ {
				if err := pt.before[i](ctx, tx); err != nil {
					q.pendingTxs.Delete(tx)
					return err
				}
			}
			q.pendingTxs.Delete(tx)
			return q.commit(ctx, tx, pt.rows, pt.first, next)
		})
	})
	return pt
}

// BeforeStore runs fn when tx commits, before the notifications tx
// enqueued are stored, inside the transaction: fn may write rows in bulk
// and Enqueue more notifications (the endpoints' event log writes its
// events there, then their deliveries). Hooks run in the order given.
func (q *Queue) BeforeStore(tx *entdb.Tx, fn func(ctx context.Context, tx *entdb.Tx) error) {
	pt := q.pending(tx)
	pt.before = append(pt.before, fn)
}

// Enqueue stores m inside the caller's transaction: the frozen request
// (method, URL, body, content type), its signing scheme and key, and its
// schedule (due at once; failed when the delivery window closes). A
// signature made once (RSA) is made by the first attempt, on the
// dispatcher's workers, and stored with its record (storedHeaders): the
// producer's transaction does not wait for signatures. The rows are
// written when the transaction commits (the returned row's ID is set then;
// a duplicate uuid fails the commit) and the dispatcher is woken; if it
// rolls back, nothing was stored and nothing is sent. Errors wrap
// ErrInvalidMessage or ErrUnknownSigner.
func (q *Queue) Enqueue(ctx context.Context, tx *entdb.Tx, m Message) (*entdb.Notification, error) {
	if m.UUID == "" {
		m.UUID = uuid.NewString()
	}
	host, err := m.check()
	if err != nil {
		return nil, err
	}
	if m.Signing.Scheme != "" {
		if _, ok := q.signers[m.Signing.Scheme]; !ok {
			return nil, fmt.Errorf("%w %q", ErrUnknownSigner, m.Signing.Scheme)
		}
	}
	body := m.Request.Body
	if body == nil {
		body = []byte{} // GET: no body, stored as empty bytes
	}
	now := q.now()
	next, expires := now, q.policy.Expires(now)
	row := &entdb.Notification{
		UUID: m.UUID, OwnerID: m.Owner,
		Service: m.Subject.Service, Event: m.Subject.Event, Subject: m.Subject.Ref, Topic: m.Subject.Topic,
		Host: host, Method: m.Request.Method, URL: m.Request.URL, Body: body, ContentType: m.Request.ContentType,
		SignatureScheme: m.Signing.Scheme, SigningKey: m.Signing.Key,
		Status: notification.StatusPending, NextAttemptAt: &next, ExpiresAt: expires, CreatedAt: now, UpdatedAt: now,
	}
	if m.Subject.Sequence != "" {
		seq := m.Subject.Sequence
		row.Sequence = &seq
	}
	if m.EndpointID != 0 {
		id := m.EndpointID
		row.EndpointID = &id
	}
	if m.EventID != 0 {
		id := m.EventID
		row.EventID = &id
	}
	if m.Paused {
		// Waits for its endpoint: not due, and its window starts when the
		// endpoint resumes (the resume sets both).
		row.Status, row.NextAttemptAt = notification.StatusPaused, nil
	}
	pt := q.pending(tx)
	pt.rows = append(pt.rows, row)
	if m.Subject.FirstOfSequence && row.Sequence != nil {
		if pt.first == nil {
			pt.first = map[*entdb.Notification]bool{}
		}
		pt.first[row] = true
	}
	return row, nil
}

// commit writes a transaction's notifications and their created events,
// commits, then hands the rows claimed as stored to the dispatcher and
// wakes it for the rest.
func (q *Queue) commit(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification, first map[*entdb.Notification]bool, next entdb.Committer) error {
	var st stored
	if q.handOff != nil {
		// A paused row waits for its endpoint: never handed off.
		due := rows
		if slices.ContainsFunc(rows, isPaused) {
			due = slices.DeleteFunc(slices.Clone(rows), isPaused)
		}
		var err error
		if st, err = q.handOff.claimStored(ctx, tx, due, first); err != nil {
			return err
		}
	}
	evs, err := q.insert(ctx, tx, rows)
	if err == nil {
		err = next.Commit(ctx, tx)
	}
	if err != nil {
		// Nothing was stored (or, if only the commit's answer was lost,
		// the lease lapses and the rows are taken over).
		if q.handOff != nil {
			q.handOff.abandon(st)
		}
		return err
	}
	q.events.publish(evs)
	if q.handOff != nil {
		q.handOff.sendStored(st)
	}
	return nil
}

// isPaused tells a row stored paused (its endpoint is paused).
func isPaused(r *entdb.Notification) bool { return r.Status == notification.StatusPaused }

// EnqueueNow stores one message in its own transaction.
func (q *Queue) EnqueueNow(ctx context.Context, m Message) (*entdb.Notification, error) {
	var row *entdb.Notification
	err := store.WithTx(ctx, q.db.Client, func(tx *entdb.Tx) error {
		var err error
		row, err = q.Enqueue(ctx, tx, m)
		return err
	})
	return row, err
}

// insert writes a transaction's notifications and their created events.
func (q *Queue) insert(ctx context.Context, tx *entdb.Tx, rows []*entdb.Notification) ([]*entdb.DeliveryEvent, error) {
	if err := insertNotifications(ctx, tx, q.db.Dialect, rows); err != nil {
		return nil, fmt.Errorf("store notifications: %w", err)
	}
	evs := make([]*entdb.DeliveryEvent, len(rows))
	for i, r := range rows {
		// Due at once when created, or when the earlier notification of its
		// sequence is (claimStored); a row claimed as it is stored was
		// due at once too.
		due := &r.CreatedAt
		if r.Attempts == 0 && r.NextAttemptAt != nil {
			due = r.NextAttemptAt
		}
		status := notification.StatusPending
		if isPaused(r) {
			status, due = notification.StatusPaused, nil
		}
		evs[i] = q.events.newEvent(r, deliveryevent.KindCreated, 0, "", nil, "", string(status), due)
	}
	if err := q.events.insert(ctx, tx, q.events.lock(ctx, tx), evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// AttemptHeaders returns the headers of an attempt of a stored
// notification made at time at: Content-Type (POST), Idempotency-Key (its
// uuid, so receivers can deduplicate on a header and a POST may be resent
// on a fresh connection) and its signature: the one stored with it, the
// headers a per-attempt signer computes now (with the message's event), or
// both for a signer that signs both ways. It is the one place these are
// decided: the dispatcher sends them, and relays of a notification
// (WatchDeliveries with the request) replay them.
func (q *Queue) AttemptHeaders(ctx context.Context, n *entdb.Notification, at time.Time) (http.Header, error) {
	h, err := q.storedHeaders(n)
	if err != nil {
		return nil, err
	}
	signed, err := q.attemptSigned(ctx, n, at)
	if err != nil {
		return nil, err
	}
	for k, vs := range signed {
		h[k] = vs
	}
	return h, nil
}

// StoredHeaders returns the headers of n that are the same on every
// attempt (Content-Type, Idempotency-Key, a signature stored with it); an
// attempt's SignatureHeaders complete what it sent.
func (q *Queue) StoredHeaders(n *entdb.Notification) (http.Header, error) {
	return q.storedHeaders(n)
}

func (q *Queue) storedHeaders(n *entdb.Notification) (http.Header, error) {
	h := http.Header{}
	if n.ContentType != "" {
		h.Set("Content-Type", n.ContentType)
	}
	h.Set("Idempotency-Key", n.UUID)
	if n.SignatureScheme == "" {
		return h, nil
	}
	s, ok := q.signers[n.SignatureScheme]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSigner, n.SignatureScheme)
	}
	// A signer may sign both ways (signer.Both): the stored signature, then
	// the attempt's headers. A signature made once is made by the first
	// attempt (n.Signature is empty until its record stores it) and is
	// the same bytes every time (RSA PKCS#1 v1.5 is deterministic).
	if st, ok := s.(signer.StoredSigner); ok {
		if n.Signature == "" {
			sig, err := q.signOnce(st, n)
			if err != nil {
				return nil, err
			}
			n.Signature = sig
		}
		h.Set(st.Header(), n.Signature)
	}
	return h, nil
}

// signOnce makes n's signature made once, at most GOMAXPROCS at a time.
func (q *Queue) signOnce(st signer.StoredSigner, n *entdb.Notification) (string, error) {
	q.signing <- struct{}{}
	sig, err := st.Sign(n.SigningKey, requestOf(n))
	<-q.signing
	if err != nil {
		return "", fmt.Errorf("sign notification %s: %w", n.UUID, err)
	}
	return sig, nil
}

// storedSigner returns the signer of n when its scheme signs once and n's
// signature is not made yet (the dispatcher signs such a held row before
// it starts: Dispatcher.signHeld).
func (q *Queue) storedSigner(n *entdb.Notification) (signer.StoredSigner, bool) {
	if n.SignatureScheme == "" || n.Signature != "" {
		return nil, false
	}
	st, ok := q.signers[n.SignatureScheme].(signer.StoredSigner)
	return st, ok
}

// attemptSigned returns the headers a per-attempt signer makes for an
// attempt of n at time at (none for a scheme that signs once).
func (q *Queue) attemptSigned(ctx context.Context, n *entdb.Notification, at time.Time) (http.Header, error) {
	if n.SignatureScheme == "" {
		return nil, nil
	}
	s, ok := q.signers[n.SignatureScheme]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownSigner, n.SignatureScheme)
	}
	as, ok := s.(signer.AttemptSigner)
	if !ok {
		return nil, nil
	}
	sh, err := as.SignAttempt(ctx, n.SigningKey, signer.Attempt{UUID: n.UUID, Time: at, Request: requestOf(n), Event: n.Event})
	if err != nil {
		return nil, fmt.Errorf("sign attempt: %w", err)
	}
	return sh, nil
}

// SentHeaders returns the headers attempt a of n sent: n's stored headers
// and the ones signed for the attempt, as recorded. exact is false when the
// attempt recorded no per-attempt signature though its scheme makes one
// (its process died before recording it, or it predates the record); the
// signature is then computed again for its start time with the key's
// current secret.
func (q *Queue) SentHeaders(ctx context.Context, n *entdb.Notification, a *entdb.DeliveryAttempt) (h http.Header, exact bool, err error) {
	if a.SignatureHeaders != "" {
		h, err := q.storedHeaders(n)
		if err != nil {
			return nil, false, err
		}
		for k, vs := range ParseHeaders(a.SignatureHeaders) {
			h[k] = vs
		}
		return h, true, nil
	}
	_, perAttempt := q.signers[n.SignatureScheme].(signer.AttemptSigner)
	h, err = q.AttemptHeaders(ctx, n, a.StartedAt)
	return h, err == nil && !perAttempt, err
}

// FormatHeaders writes h as sorted "Name: value" lines, the form an
// attempt's SignatureHeaders are stored in.
func FormatHeaders(h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range h[k] {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// ParseHeaders reads FormatHeaders' lines back.
func ParseHeaders(s string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			h[k] = append(h[k], v)
		}
	}
	return h
}

// requestOf is the stored request of n.
func requestOf(n *entdb.Notification) payload.Request {
	r := payload.Request{Method: n.Method, URL: n.URL, ContentType: n.ContentType}
	if n.Method != http.MethodGet {
		r.Body = n.Body
	}
	return r
}

// queueDepth counts the notifications still to deliver by status, or
// returns the last count while the pace of depthCache says it is recent.
// The map returned is the caller's.
func (q *Queue) queueDepth(ctx context.Context) (map[string]int, error) {
	c := &q.depth
	c.mu.Lock() // one count at a time: concurrent scrapes share it
	defer c.mu.Unlock()
	started := clock.Now()
	if c.recent(started) {
		return maps.Clone(c.byStatus), nil
	}
	var byStatus map[string]int
	if err := store.WithTx(ctx, q.db.Client, func(tx *entdb.Tx) error {
		// A background count: a large queue's scan takes one core, not
		// every core with parallel workers (store.OneProcess).
		if err := store.OneProcess(ctx, tx, q.db.Dialect); err != nil {
			return err
		}
		var err error
		byStatus, err = countQueued(ctx, tx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("queue depth: %w", err)
	}
	c.at, c.took, c.byStatus = started, clock.Now().Sub(started), byStatus
	return maps.Clone(byStatus), nil
}

// countQueued counts the notifications still to deliver by status.
func countQueued(ctx context.Context, tx *entdb.Tx) (map[string]int, error) {
	var rows []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := tx.Notification.Query().
		// next_attempt_at is set exactly while a row is pending or
		// retrying: the predicate of the notification_queued index.
		Where(notification.NextAttemptAtNotNil()).
		GroupBy(notification.FieldStatus).
		Aggregate(entdb.Count()).
		Scan(ctx, &rows); err != nil {
		return nil, err
	}
	byStatus := make(map[string]int, len(rows))
	for _, r := range rows {
		byStatus[r.Status] = r.Count
	}
	return byStatus, nil
}

// QueueStats is the notification queue as metrics report it.
type QueueStats struct {
	// ByStatus counts the notifications still to deliver (pending or
	// retrying, attempts in flight included) per delivery status.
	// Acknowledged and failed notifications have left the queue; an
	// Observer counts them as they finish.
	ByStatus map[string]int
	// OldestDue is how long the oldest due notification has been waiting
	// for its attempt (0 when none is due): unleased in the database, or
	// held in this instance's memory.
	OldestDue time.Duration
}

// Stats reads the queue's depth by status and the age of the oldest due
// notification. Both read only the partial indexes of rows still to
// deliver, so a scrape costs the size of the queue, not of the table; the
// depth of a large queue is counted at a bounded pace (depthCache).
func (q *Queue) Stats(ctx context.Context) (QueueStats, error) {
	byStatus, err := q.queueDepth(ctx)
	if err != nil {
		return QueueStats{}, err
	}
	st := QueueStats{ByStatus: byStatus}
	now := q.now()
	due, err := q.db.Client.Notification.Query().
		// next_attempt_at is set exactly while a row is pending or
		// retrying; leased rows (attempts in flight) carry their lease's
		// end and are not due.
		Where(notification.NextAttemptAtLTE(now)).
		Order(entdb.Asc(notification.FieldNextAttemptAt)).
		Select(notification.FieldNextAttemptAt).
		First(ctx)
	switch {
	case entdb.IsNotFound(err):
	case err != nil:
		return QueueStats{}, fmt.Errorf("oldest due: %w", err)
	default:
		st.OldestDue = now.Sub(*due.NextAttemptAt)
	}
	if q.handOff != nil {
		// Held rows are leased: the database counts them, but as not due.
		st.OldestDue = max(st.OldestDue, q.handOff.oldestHeld(now))
	}
	return st, nil
}
