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
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/startstop"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
	"github.com/payhook/payhook/notifier/signer"
)

// Delivery is the part of a Config an operator tunes: payhook serve's
// delivery flags fill it, and server.Config carries it as it is. Its
// WithDefaults holds the only delivery defaults of the house.
type Delivery struct {
	// Policy is the retry schedule (Delays: the waits after failed
	// attempts, the last repeating; --retry-delays) and the delivery window
	// (Window: how long after its creation a notification may still be
	// attempted; --delivery-window).
	schedule.Policy
	// AttemptTimeout bounds one attempt: connect, TLS, request and response
	// (--attempt-timeout).
	AttemptTimeout time.Duration
	// AllowPrivateEndpoints are exact endpoints (scheme, host, port, path;
	// see egress.ParseEndpoint) that one owner's notifications may send to
	// although they resolve to private or loopback addresses: the
	// operator's development receivers (--allow-private-endpoint). Each is
	// OWNER=URL (the owner is a Message's Owner, payhook's project id) or
	// URL alone, for Config.DefaultOwner (egress.ParseAllowance). An
	// endpoint allowed to one owner is refused to every other, at every
	// attempt. Merchants cannot add any.
	AllowPrivateEndpoints []string
	// Lease is how long a claimed row stays reserved for this instance
	// (--delivery-lease); it must exceed AttemptTimeout. Another instance
	// (or this one after a crash) takes the row over once it expires.
	Lease time.Duration
	// Workers bounds concurrent attempts of this instance
	// (--delivery-workers).
	Workers int
	// PerHost bounds concurrent attempts to one destination host:port
	// (--per-host-concurrency).
	PerHost int
}

// Defaults of Delivery. DefaultPerHost is what protects a healthy endpoint
// from a dead one sharing the workers; docs/benchmarks.md measures it.
const (
	DefaultWorkers = 256
	DefaultPerHost = 64
	// DefaultLeaseMargin is how much longer than AttemptTimeout a lease
	// lasts when Lease is unset.
	DefaultLeaseMargin = 30 * time.Second
)

// DefaultHold is how many notifications a dispatcher holds in memory at
// most (Config.Hold): some 15 MB of rows.
const DefaultHold = 10000

// WithDefaults returns d with every unset field set to its default: the
// spec's schedule and window (schedule.Default), its attempt limit
// (egress.DefaultTimeout), DefaultWorkers, DefaultPerHost, and a lease of
// AttemptTimeout plus DefaultLeaseMargin.
func (d Delivery) WithDefaults() Delivery {
	if len(d.Delays) == 0 {
		d.Delays = schedule.Default().Delays
	}
	if d.Window == 0 {
		d.Window = schedule.Default().Window
	}
	if d.AttemptTimeout == 0 {
		d.AttemptTimeout = egress.DefaultTimeout
	}
	if d.Workers == 0 {
		d.Workers = DefaultWorkers
	}
	if d.PerHost == 0 {
		d.PerHost = DefaultPerHost
	}
	if d.Lease == 0 {
		d.Lease = d.AttemptTimeout + DefaultLeaseMargin
	}
	return d
}

// egress is the outbound client's configuration: the attempt limit, the
// operator's exceptions with the owner of those that name none, and a
// keep-alive connection for every concurrent attempt to a destination.
func (c Config) egress() egress.Config {
	return egress.Config{Timeout: c.AttemptTimeout, AllowPrivate: c.AllowPrivateEndpoints, DefaultOwner: c.DefaultOwner, IdlePerHost: c.PerHost}
}

// Config configures a Notifier.
type Config struct {
	// Delivery is what the operator tunes: schedule, attempt limit,
	// private endpoints, lease and concurrency.
	Delivery
	// DefaultOwner owns the AllowPrivateEndpoints entries that name no
	// owner (payhook: the default project's id).
	DefaultOwner int64
	// Batch is the most rows claimed per query.
	Batch int
	// Hold bounds the notifications held in memory for their first attempt
	// (stored leased while no slot is free, see held.go); DefaultHold when
	// 0, none when negative.
	Hold int
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
	// tests control them); clock.Now when nil.
	Now func() time.Time
	// Signers sign messages, each named by its scheme (Message.Signing).
	// Each is a signer.StoredSigner, a signer.AttemptSigner or both
	// (signer.Both).
	Signers []signer.Signer
	// Observer, when set, is told of every finished attempt (metrics).
	Observer Observer
	// Throttle grants the tokens of endpoints' rate limits (throttle.go):
	// token buckets in this process when nil (one instance).
	Throttle Throttle
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

// WithDefaults returns c with unset fields set to their defaults (the
// Delivery part's are Delivery.WithDefaults').
func (c Config) WithDefaults() Config {
	c.Delivery = c.Delivery.WithDefaults()
	if c.Batch == 0 {
		c.Batch = 64
	}
	if c.Hold == 0 {
		c.Hold = DefaultHold
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
		c.Now = clock.Now
	}
	return c
}

// Validate reports the first bad setting.
func (c Config) Validate() error {
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	switch {
	case c.AttemptTimeout <= 0:
		return errors.New("attempt timeout must be positive")
	case c.Workers < 1:
		return errors.New("workers must be at least 1")
	case c.PerHost < 1:
		return errors.New("per-host concurrency must be at least 1")
	case c.Batch < 1:
		return errors.New("batch must be at least 1")
	case c.Lease <= c.AttemptTimeout:
		return fmt.Errorf("lease %s must be longer than the attempt timeout %s", c.Lease, c.AttemptTimeout)
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
	events := newEvents(db, cfg.Now, cfg.InstanceID, logger)
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
