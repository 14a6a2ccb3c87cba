package notifier

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/startstop"
)

// Events is the delivery event log: every stored notification, finished
// attempt and expiry is a row whose id (the cursor) only grows, written in
// the transaction that causes it. Watchers subscribe to an owner's events
// and read what they missed from the database, which is the truth; with
// several instances on one PostgreSQL, a NOTIFY after each commit wakes
// the others' watchers and dispatchers (Start runs that listener).
type Events struct {
	db     *store.DB
	now    func() time.Time
	logger *slog.Logger
	broker *broker
	// onPeer is called when another instance committed events (the
	// dispatcher's Wake).
	onPeer func()
	// instance names this instance in its NOTIFYs, so its listener skips
	// its own (it published them already).
	instance string

	listening chan struct{} // closed once other instances' NOTIFYs reach this one
	// lastPeer is when (wall clock, Unix nanoseconds) another instance
	// was last heard from: its commits' NOTIFYs and its presence.
	lastPeer atomic.Int64
	// heard is closed once another instance was first heard from.
	heard     chan struct{}
	heardOnce sync.Once
	// greet asks announce to announce at once: an instance not heard
	// from for peerTimeout was heard, and may have started after this
	// one's last announcement.
	greet chan struct{}
	startstop.Base
}

// Presence: an instance listening for its peers also tells them it is
// there, at start and every presenceEvery, with a NOTIFY whose owners are
// presenceOwners (which wakes nothing). A dispatcher that has heard from no
// other instance for peerTimeout delivers alone and may hold more of what
// it stores in memory (held.go); with peers it leaves most of a burst in
// the database for every instance to claim. (A pace of work, not a
// schedule: it runs on the wall clock.)
const (
	presenceEvery  = 5 * time.Second
	peerTimeout    = 3 * presenceEvery
	presenceOwners = "?"
)

// alone reports whether no other instance sharing the database was heard
// from within peerTimeout (always, on SQLite).
func (e *Events) alone() bool {
	t := e.lastPeer.Load()
	return t == 0 || clock.Now().Sub(time.Unix(0, t)) > peerTimeout
}

// announce tells the other instances that this one is there, at once,
// every presenceEvery and when greeted, until ctx ends.
func (e *Events) announce(ctx context.Context) {
	tick := time.NewTicker(presenceEvery)
	defer tick.Stop()
	for {
		if _, err := e.db.SQL.ExecContext(ctx, "SELECT pg_notify($1, $2)", PeerChannel, e.peerPayload(presenceOwners)); err != nil && ctx.Err() == nil {
			e.logger.Debug("announce this instance to its peers", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-e.greet:
		}
	}
}

func newEvents(db *store.DB, now func() time.Time, instance string, logger *slog.Logger) *Events {
	return &Events{db: db, now: now, instance: instance, logger: logger, broker: newBroker(), onPeer: func() {}, listening: make(chan struct{}), heard: make(chan struct{}), greet: make(chan struct{}, 1)}
}

// Start listens for other instances' events (PostgreSQL only) until Stop;
// it returns at once. The listener starts once (startstop.ErrStarted).
func (e *Events) Start(ctx context.Context) error {
	ctx, err := e.StartInit(ctx)
	if err != nil {
		return err
	}
	e.Go(func() { e.listenPeers(ctx) })
	return nil
}

// Stop ends every subscription (their channels close) and the listener. It
// is idempotent and waits.
func (e *Events) Stop() {
	e.broker.close()
	e.Base.Stop()
}

// EventFilter selects the events a watcher sees. Owner is mandatory: a
// watcher only ever sees its owner's deliveries. The other fields, when
// set, must equal the notification's labels (Subject).
type EventFilter struct {
	Owner   int64
	Service string
	Ref     string
	Topic   string
	UUID    string
}

// Read returns up to limit events after cursor that match f, oldest
// first, with their notifications loaded when withRequest is set (for
// relays that replay the exact request).
func (e *Events) Read(ctx context.Context, f EventFilter, after int64, limit int, withRequest bool) ([]*entdb.DeliveryEvent, error) {
	q := e.db.Client.DeliveryEvent.Query().
		Where(deliveryevent.OwnerID(f.Owner), deliveryevent.IDGT(after)).
		Order(entdb.Asc(deliveryevent.FieldID)).
		Limit(limit)
	if f.Service != "" {
		q.Where(deliveryevent.Service(f.Service))
	}
	if f.Ref != "" {
		q.Where(deliveryevent.Subject(f.Ref))
	}
	if f.Topic != "" {
		q.Where(deliveryevent.Topic(f.Topic))
	}
	if f.UUID != "" {
		q.Where(deliveryevent.UUID(f.UUID))
	}
	if withRequest {
		q.WithNotification()
	}
	evs, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read delivery events: %w", err)
	}
	return evs, nil
}

// LastCursor returns the newest event cursor of an owner (0 when none).
func (e *Events) LastCursor(ctx context.Context, owner int64) (int64, error) {
	ids, err := e.db.Client.DeliveryEvent.Query().
		Where(deliveryevent.OwnerID(owner)).
		Order(entdb.Desc(deliveryevent.FieldID)).
		Limit(1).
		IDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("read last event: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return ids[0], nil
}

// Subscribe returns a channel that receives a value whenever events of
// owner may have been added, and a function that ends the subscription.
// The channel holds one pending signal: a slow watcher coalesces signals
// and never slows delivery; it reads what it missed from the database
// (Read), which is the truth.
func (e *Events) Subscribe(owner int64) (<-chan struct{}, func()) {
	return e.broker.subscribe(owner)
}

// CloseWatchers ends every subscription (their channels close), so watch
// streams return before the gRPC server drains. New subscriptions are
// refused.
func (e *Events) CloseWatchers() { e.broker.close() }

// Watchers returns the number of live subscriptions.
func (e *Events) Watchers() int { return e.broker.count() }

// broker signals subscribers that their owner's events changed.
type broker struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	owner int64
	c     chan struct{}
}

func newBroker() *broker { return &broker{subs: map[*subscriber]struct{}{}} }

func (b *broker) subscribe(owner int64) (<-chan struct{}, func()) {
	s := &subscriber{owner: owner, c: make(chan struct{}, 1)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.c)
		return s.c, func() {}
	}
	b.subs[s] = struct{}{}
	var once sync.Once
	return s.c, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if _, ok := b.subs[s]; ok {
				delete(b.subs, s)
				close(s.c)
			}
		})
	}
}

func (b *broker) publish(evs []*entdb.DeliveryEvent) {
	owners := make([]int64, 0, len(evs))
	for _, e := range evs {
		owners = append(owners, e.OwnerID)
	}
	b.publishOwners(owners)
}

// publishOwners signals the subscribers of these owners.
func (b *broker) publishOwners(owners []int64) {
	if len(owners) == 0 {
		return
	}
	set := make(map[int64]bool, len(owners))
	for _, o := range owners {
		set[o] = true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if set[s.owner] {
			signal(s.c)
		}
	}
}

// publishAll signals every subscriber (after a lost listener connection).
func (b *broker) publishAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		signal(s.c)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (b *broker) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// close ends every subscription (their channels close) and refuses new ones.
func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.c)
	}
}

// WatchPollInterval is how often a watcher rereads the event log without a
// signal, to see events committed by other instances.
const WatchPollInterval = 2 * time.Second

// publish signals the watchers of the owners of evs (committed).
func (e *Events) publish(evs []*entdb.DeliveryEvent) { e.broker.publish(evs) }

// newEvent describes one entry of the event log about row; insert stores it.
func (e *Events) newEvent(row *entdb.Notification, kind deliveryevent.Kind, attempt int, outcome string, httpStatus *int, errText, status string, next *time.Time) *entdb.DeliveryEvent {
	return &entdb.DeliveryEvent{
		CreatedAt:      e.now(),
		NotificationID: row.ID,
		OwnerID:        row.OwnerID,
		UUID:           row.UUID,
		Service:        row.Service,
		Event:          row.Event,
		Subject:        row.Subject,
		Topic:          row.Topic,
		Kind:           kind,
		Attempt:        attempt,
		Outcome:        outcome,
		HTTPStatus:     httpStatus,
		Error:          errText,
		DeliveryStatus: status,
		NextAttemptAt:  next,
	}
}

// insert takes the event-log lock (lock, see Events.lock), inserts evs,
// sets their ids (the watch cursor) and queues the NOTIFY that tells other
// instances when tx commits.
func (e *Events) insert(ctx context.Context, tx *entdb.Tx, lock func() error, evs []*entdb.DeliveryEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if err := lock(); err != nil {
		return err
	}
	if err := insertEvents(ctx, tx, e.db.Dialect, evs); err != nil {
		return fmt.Errorf("store events: %w", err)
	}
	return e.notifyPeers(ctx, tx, evs)
}

// lock returns a function that, on its first call, serialises event
// inserts on PostgreSQL until the transaction ends, so event ids (the
// watch cursor) become visible in increasing order: a reader that saw id N
// never later finds an id below N appear. Call it right before inserting
// events. SQLite has one writer at a time already.
func (e *Events) lock(ctx context.Context, tx *entdb.Tx) func() error {
	done := e.db.Dialect != store.Postgres
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

// PeerChannel is the PostgreSQL NOTIFY channel on which instances sharing a
// database tell each other that events were committed; the payload is the
// sending instance's id, a semicolon and the owners concerned (a payload
// without the semicolon lists owners only). It is only a wake-up: the
// event table is the truth.
const PeerChannel = "payhook_events"

// peerPayload is a NOTIFY's payload from this instance about owners.
func (e *Events) peerPayload(owners string) string { return e.instance + ";" + owners }

// notifyPeers queues a NOTIFY, delivered when tx commits, so other
// instances wake their dispatchers and watch streams.
func (e *Events) notifyPeers(ctx context.Context, tx *entdb.Tx, evs []*entdb.DeliveryEvent) error {
	if e.db.Dialect != store.Postgres || len(evs) == 0 {
		return nil
	}
	seen := map[int64]bool{}
	var owners []string
	for _, ev := range evs {
		if !seen[ev.OwnerID] {
			seen[ev.OwnerID] = true
			owners = append(owners, strconv.FormatInt(ev.OwnerID, 10))
		}
	}
	if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", PeerChannel, e.peerPayload(strings.Join(owners, ","))); err != nil {
		return fmt.Errorf("notify peers: %w", err)
	}
	return nil
}

// listenPeers wakes this instance's dispatcher and watch streams when
// another instance commits events, until ctx ends.
func (e *Events) listenPeers(ctx context.Context) {
	msgs, err := store.Listen(ctx, e.db, PeerChannel, func(err error) {
		e.logger.Warn("event listener connection", "error", err)
	})
	if err != nil {
		if ctx.Err() == nil {
			e.logger.Error("listen for other instances' events; relying on polling", "error", err)
		}
		return
	}
	if msgs == nil {
		return
	}
	// Events other instances committed before this listener was up were
	// announced to nobody here: watchers re-read, the loop claims.
	e.onPeer()
	e.broker.publishAll()
	close(e.listening)
	e.Go(func() { e.announce(ctx) })
	for m := range msgs {
		payload := m.Payload
		if from, owners, ok := strings.Cut(payload, ";"); ok {
			if from == e.instance {
				// This instance's own commit: its dispatcher and watchers
				// were told when it committed. Waking the dispatcher again
				// here would make it scan the due rows at every commit.
				continue
			}
			if e.alone() {
				// A peer new to this instance: it hears of this one now,
				// not at the next announcement.
				select {
				case e.greet <- struct{}{}:
				default:
				}
			}
			e.lastPeer.Store(clock.Now().UnixNano())
			e.heardOnce.Do(func() { close(e.heard) })
			if owners == presenceOwners {
				continue // only there
			}
			payload = owners
		}
		e.onPeer()
		if payload == "" {
			e.broker.publishAll()
			continue
		}
		var owners []int64
		for f := range strings.SplitSeq(payload, ",") {
			if id, err := strconv.ParseInt(f, 10, 64); err == nil {
				owners = append(owners, id)
			}
		}
		e.broker.publishOwners(owners)
	}
}
