package idempotency

import (
	"context"
	"log/slog"
	"time"

	"github.com/payhook/payhook/internal/startstop"
)

// DefaultCollectInterval is how often a Collector deletes expired keys.
const DefaultCollectInterval = 10 * time.Minute

// Collector deletes expired keys (Store.Expire) every interval until
// Stop. Every instance runs one; their deletes overlap harmlessly. The
// keys' expiry does not wait for it: Begin treats a key older than the TTL
// as gone whether it is deleted yet or not.
type Collector struct {
	startstop.Base
	store    *Store
	interval time.Duration
	logger   *slog.Logger
}

// NewCollector returns a collector of store's expired keys every interval
// (DefaultCollectInterval when 0).
func NewCollector(store *Store, interval time.Duration, logger *slog.Logger) *Collector {
	if interval <= 0 {
		interval = DefaultCollectInterval
	}
	return &Collector{store: store, interval: interval, logger: logger}
}

// Start starts collecting; it returns at once. A collector starts once
// (startstop.ErrStarted); Stop (startstop.Base's) ends it and waits for a
// deletion in progress.
func (c *Collector) Start(ctx context.Context) error {
	run, err := c.StartInit(ctx)
	if err != nil {
		return err
	}
	c.Go(func() { c.loop(run) })
	return nil
}

func (c *Collector) loop(ctx context.Context) {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := c.store.Expire(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			c.logger.Warn("delete expired Idempotency-Keys", "error", err)
		case n > 0:
			c.logger.Debug("deleted expired Idempotency-Keys", "count", n)
		}
	}
}
