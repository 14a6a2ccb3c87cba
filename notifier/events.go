package notifier

import (
	"context"
	"fmt"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
)

// EventFilter selects the events a watcher sees. APIKeyID is mandatory: a
// watcher only ever sees its owner's deliveries.
type EventFilter struct {
	APIKeyID  int64
	AddressIn string
	Ticker    string
	UUID      string
}

// Events returns up to limit events after cursor that match f, oldest
// first, with their notifications loaded when withRequest is set (for
// relays that replay the exact request).
func (n *Notifier) Events(ctx context.Context, f EventFilter, after int64, limit int, withRequest bool) ([]*entdb.DeliveryEvent, error) {
	q := n.db.Client.DeliveryEvent.Query().
		Where(deliveryevent.APIKeyID(f.APIKeyID), deliveryevent.IDGT(after)).
		Order(entdb.Asc(deliveryevent.FieldID)).
		Limit(limit)
	if f.AddressIn != "" {
		q.Where(deliveryevent.AddressIn(f.AddressIn))
	}
	if f.Ticker != "" {
		q.Where(deliveryevent.Ticker(f.Ticker))
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
func (n *Notifier) LastCursor(ctx context.Context, apiKeyID int64) (int64, error) {
	ids, err := n.db.Client.DeliveryEvent.Query().
		Where(deliveryevent.APIKeyID(apiKeyID)).
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

// Subscribe returns a channel that receives a value whenever events of the
// owner apiKeyID may have been added, and a function that ends the
// subscription. The channel holds one pending signal: a slow watcher
// coalesces signals and never slows delivery; it reads what it missed from
// the database (Events), which is the truth.
func (n *Notifier) Subscribe(apiKeyID int64) (<-chan struct{}, func()) {
	return n.events.subscribe(apiKeyID)
}

// CloseWatchers ends every subscription (their channels close), so watch
// streams return before the gRPC server drains. New subscriptions are
// refused.
func (n *Notifier) CloseWatchers() { n.events.close() }

// QueueStats is the notification queue as metrics report it.
type QueueStats struct {
	// ByStatus counts the notifications still to deliver (pending or
	// retrying, attempts in flight included) per delivery status.
	// Acknowledged and failed notifications have left the queue; an
	// Observer counts them as they finish.
	ByStatus map[string]int
	// OldestDue is how long the oldest due, unleased notification has been
	// waiting (0 when none is due).
	OldestDue time.Duration
}

// Stats reads the queue's depth by status and the age of the oldest due
// notification. Both read only the partial indexes of rows still to
// deliver, so a scrape costs the size of the queue, not of the table.
func (n *Notifier) Stats(ctx context.Context) (QueueStats, error) {
	var rows []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := n.db.Client.Notification.Query().
		// next_attempt_at is set exactly while a row is pending or
		// retrying: the predicate of the notification_queued index.
		Where(notification.NextAttemptAtNotNil()).
		GroupBy(notification.FieldStatus).
		Aggregate(entdb.Count()).
		Scan(ctx, &rows); err != nil {
		return QueueStats{}, fmt.Errorf("queue depth: %w", err)
	}
	st := QueueStats{ByStatus: map[string]int{}}
	for _, r := range rows {
		st.ByStatus[r.Status] = r.Count
	}
	now := n.cfg.Clock.Now()
	due, err := n.db.Client.Notification.Query().
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
	return st, nil
}

// Watchers returns the number of live subscriptions.
func (n *Notifier) Watchers() int { return n.events.count() }

// broker signals subscribers that their owner's events changed.
type broker struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

type subscriber struct {
	apiKeyID int64
	c        chan struct{}
}

func newBroker() *broker { return &broker{subs: map[*subscriber]struct{}{}} }

func (b *broker) subscribe(apiKeyID int64) (<-chan struct{}, func()) {
	s := &subscriber{apiKeyID: apiKeyID, c: make(chan struct{}, 1)}
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
		owners = append(owners, e.APIKeyID)
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
		if set[s.apiKeyID] {
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
