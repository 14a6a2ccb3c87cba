package notifier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/schedule"
)

// Clock tells the time. Retry schedules, expiry and leases run on it, so
// tests control them.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

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
	// Clock is the clock; the system clock when nil.
	Clock Clock
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
	if c.Clock == nil {
		c.Clock = systemClock{}
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
	return nil
}

// Notifier stores, signs, delivers and logs notifications.
type Notifier struct {
	db     *store.DB
	cfg    Config
	logger *slog.Logger
	signer Signer
	client *egress.Client
	events *broker

	wake chan struct{}

	mu               sync.Mutex
	perHost          map[string]int
	inflightPayments map[int64]int
	parkedAt         map[string]time.Time     // destinations with parked rows, since when
	parkScanAt       time.Time                // last look for parked rows in the database
	hostDuration     map[string]time.Duration // recent attempt duration per destination
	fullSince        map[string]time.Time     // destinations at their bound, since when
	parking          sync.Mutex               // held while a park runs
	active           int
	sends            sync.WaitGroup
	// handOff is set while the dispatch loop runs: notifications are then
	// claimed as they are stored, when there is a free slot for them.
	handOff bool

	sendCtx    context.Context
	sendCancel context.CancelFunc

	results      chan result
	recorderDone chan struct{}
	listening    chan struct{} // closed once other instances' NOTIFYs reach this one

	// pendingTxs maps an open *entdb.Tx to its *pendingTx.
	pendingTxs sync.Map

	runMu    sync.Mutex
	running  bool
	stopped  bool
	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// New returns a Notifier that signs low-level callbacks with signer.
func New(db *store.DB, signer Signer, cfg Config, logger *slog.Logger) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("notifier: %w", err)
	}
	client, err := egress.New(cfg.Egress)
	if err != nil {
		return nil, fmt.Errorf("notifier: %w", err)
	}
	sendCtx, cancel := context.WithCancel(context.Background())
	n := &Notifier{
		db:               db,
		cfg:              cfg,
		logger:           logger,
		signer:           signer,
		client:           client,
		events:           newBroker(),
		wake:             make(chan struct{}, 1),
		perHost:          map[string]int{},
		inflightPayments: map[int64]int{},
		parkedAt:         map[string]time.Time{},
		hostDuration:     map[string]time.Duration{},
		fullSince:        map[string]time.Time{},
		sendCtx:          sendCtx,
		sendCancel:       cancel,
		results:          make(chan result, 1024),
		recorderDone:     make(chan struct{}),
		listening:        make(chan struct{}),
	}
	go n.recordLoop()
	return n, nil
}

// Wake tells the dispatcher that work may be due; it never blocks.
func (n *Notifier) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Start runs the dispatch loop in the background and returns at once.
func (n *Notifier) Start() {
	n.runMu.Lock()
	defer n.runMu.Unlock()
	if n.running || n.stopped {
		return
	}
	n.running = true
	n.mu.Lock()
	n.handOff = true
	n.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	n.stopLoop = cancel
	n.loopDone = make(chan struct{})
	go func() {
		defer close(n.loopDone)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); n.listenPeers(ctx) }()
		n.loop(ctx)
		wg.Wait()
	}()
}

// Stop stops claiming work, lets attempts in flight finish for up to
// StopTimeout, then cancels the rest (recorded as interrupted, retried at
// the next start), and stops the recorder. Queued work stays in the
// database. Stop is idempotent and waits. The notifier cannot be started
// again.
func (n *Notifier) Stop() {
	n.runMu.Lock()
	defer n.runMu.Unlock()
	if n.stopped {
		return
	}
	n.stopped = true
	n.mu.Lock()
	n.handOff = false // before waiting for sends: no slot is taken after
	n.mu.Unlock()
	if n.running {
		n.running = false
		n.stopLoop()
		<-n.loopDone
	}
	defer func() {
		close(n.results)
		<-n.recorderDone
	}()
	done := make(chan struct{})
	go func() { n.sends.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(n.cfg.StopTimeout):
		n.sendCancel()
		<-done
	}
	n.events.close()
}

func (n *Notifier) loop(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		claimed, err := n.dispatch(ctx)
		if err != nil && ctx.Err() == nil {
			n.logger.Error("claim notifications", "error", err)
		}
		wait := n.cfg.PollInterval
		if err == nil && claimed > 0 && n.hasCapacity() {
			wait = 0 // more may be due right away
		} else if due, ok, err := n.nextDue(ctx); err == nil && ok {
			if d := due.Sub(n.cfg.Clock.Now()); d < wait {
				wait = max(d, 0)
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-timer.C:
		}
	}
}

func (n *Notifier) hasCapacity() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.active < n.cfg.Workers
}

// RunDue delivers every notification due at the clock's current time and
// returns when their attempts have been recorded. Retries that become due
// later are left for a later call. Tests drive delivery with it; the
// background loop uses the same claim and send path.
func (n *Notifier) RunDue(ctx context.Context) error {
	for {
		claimed, err := n.dispatch(ctx)
		if err != nil {
			return err
		}
		n.sends.Wait()
		if claimed == 0 {
			return nil
		}
	}
}
