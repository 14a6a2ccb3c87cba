package notifier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/notifier/signer"
)

// Config configures a Notifier.
type Config struct {
	// Policy is the retry schedule and delivery window.
	Policy schedule.Policy
	// Egress configures the outbound client (attempt timeout, operator
	// exceptions for private endpoints, response size).
	Egress egress.Config
	// Workers bounds concurrent attempts of this instance.
	Workers int
	// PerHost bounds concurrent attempts to one destination host:port.
	PerHost int
	// Batch is the most rows claimed per query.
	Batch int
	// Lease is how long a claimed row stays reserved for this instance; it
	// must exceed the attempt timeout. Another instance takes the row over
	// once it expires.
	Lease time.Duration
	// PollInterval is the longest the dispatcher sleeps without a wake-up,
	// so work committed by other instances is picked up.
	PollInterval time.Duration
	// StopTimeout is how long Stop lets attempts in flight finish before
	// cancelling them (they are then recorded as interrupted and retried).
	StopTimeout time.Duration
	// StoredBody is how many bytes of each response body the attempt log keeps.
	StoredBody int
	// InstanceID names this dispatcher in leases; random when empty.
	InstanceID string
	// Now is the clock (retry schedules, expiry, leases run on it, so
	// tests control them); time.Now when nil.
	Now func() time.Time
	// Signers sign messages, each named by its scheme (Message.Signing).
	// Each is a signer.StoredSigner, a signer.AttemptSigner or both
	// (signer.Both).
	Signers []signer.Signer
	// Observer, when set, is told of every finished attempt (metrics).
	Observer Observer
}

// Observer is told of delivery outcomes, for metrics. Its methods must not
// block.
type Observer interface {
	// AttemptFinished reports one attempt: transport is get, form or json;
	// outcome is acknowledged, failed, blocked or interrupted.
	AttemptFinished(transport, outcome string, d time.Duration)
	// NotificationFinished reports a notification this instance moved out
	// of the queue, once its transaction committed: status is acknowledged
	// or failed (its delivery window closed).
	NotificationFinished(status string)
}

// TransportOf names the transport of a stored request: get, form or json.
func TransportOf(method, contentType string) string {
	switch {
	case method == "GET":
		return "get"
	case strings.HasPrefix(contentType, "application/json"):
		return "json"
	default:
		return "form"
	}
}

// WithDefaults returns c with unset fields set to their defaults.
func (c Config) WithDefaults() Config {
	if len(c.Policy.Delays) == 0 && c.Policy.Window == 0 {
		c.Policy = schedule.Default()
	}
	if c.Egress.Timeout == 0 {
		c.Egress.Timeout = 30 * time.Second
	}
	if c.Workers == 0 {
		c.Workers = 64
	}
	if c.PerHost == 0 {
		c.PerHost = 16
	}
	if c.Batch == 0 {
		c.Batch = 64
	}
	if c.Lease == 0 {
		c.Lease = c.Egress.Timeout + 30*time.Second
	}
	if c.Egress.IdlePerHost == 0 {
		c.Egress.IdlePerHost = c.PerHost // keep-alive for every concurrent attempt
	}
	if c.PollInterval == 0 {
		c.PollInterval = time.Second
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = 10 * time.Second
	}
	if c.StoredBody == 0 {
		c.StoredBody = 4096
	}
	if c.InstanceID == "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		c.InstanceID = hex.EncodeToString(b)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports the first bad setting.
func (c Config) Validate() error {
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	switch {
	case c.Egress.Timeout <= 0:
		return errors.New("attempt timeout must be positive")
	case c.Workers < 1:
		return errors.New("workers must be at least 1")
	case c.PerHost < 1:
		return errors.New("per-host concurrency must be at least 1")
	case c.Batch < 1:
		return errors.New("batch must be at least 1")
	case c.Lease <= c.Egress.Timeout:
		return fmt.Errorf("lease %s must be longer than the attempt timeout %s", c.Lease, c.Egress.Timeout)
	}
	seen := map[string]bool{}
	for i, sg := range c.Signers {
		switch sg.(type) {
		case signer.StoredSigner, signer.AttemptSigner:
		default:
			return fmt.Errorf("signer %d (%q) is neither a StoredSigner nor an AttemptSigner", i, sg.Scheme())
		}
		if sg.Scheme() == "" || seen[sg.Scheme()] {
			return fmt.Errorf("signer %d: scheme %q is empty or given twice", i, sg.Scheme())
		}
		seen[sg.Scheme()] = true
	}
	return nil
}

// Notifier is durable delivery, in three parts that share one database
// and one clock: the Queue stores messages in their producers'
// transactions, the Dispatcher claims and delivers them and records every
// attempt, and the Events log fans delivery events out to watchers.
type Notifier struct {
	// Queue stores messages (Enqueue) and reads the queue's state.
	Queue *Queue
	// Dispatcher delivers what the Queue holds.
	Dispatcher *Dispatcher
	// Events is the delivery event log and its watchers.
	Events *Events

	startstop.Base
}

// New returns the three parts wired together. Nothing runs in the
// background until Start, but the Dispatcher can already be driven with
// RunDue.
func New(db *store.DB, cfg Config, logger *slog.Logger) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("notifier: %w", err)
	}
	events := newEvents(db, cfg.Now, logger)
	queue := newQueue(db, cfg, events, logger)
	d, err := newDispatcher(db, cfg, queue, events, logger)
	if err != nil {
		return nil, fmt.Errorf("notifier: %w", err)
	}
	events.onPeer = d.Wake
	return &Notifier{Queue: queue, Dispatcher: d, Events: events}, nil
}

// Enqueue stores m inside tx (see Queue.Enqueue).
func (n *Notifier) Enqueue(ctx context.Context, tx *entdb.Tx, m Message) (*entdb.Notification, error) {
	return n.Queue.Enqueue(ctx, tx, m)
}

// Start starts the event listener and the dispatch loop; it returns once
// both run. Like every long-running part, a Notifier starts once
// (startstop.ErrStarted).
func (n *Notifier) Start(ctx context.Context) error {
	if _, err := n.StartInit(ctx); err != nil {
		return err
	}
	if err := n.Events.Start(ctx); err != nil {
		return err
	}
	return n.Dispatcher.Start(ctx)
}

// Stop stops the dispatcher (attempts in flight finish or are recorded as
// interrupted; queued work stays in the database), then ends every watch
// subscription and the event listener. It is idempotent and waits, and may
// be called without Start.
func (n *Notifier) Stop() {
	n.StopOnce(func() {
		n.Dispatcher.Stop()
		n.Events.Stop()
	})
}
