package devnet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/payhook/payhook/chains"
)

// Devnet is one simulated Chain per ticker of a registry, optionally mined
// on a timer. It is safe for concurrent use.
type Devnet struct {
	chains map[string]*Chain
	sorted []*Chain

	mu      sync.Mutex
	state   int           // devnetIdle, devnetRunning or devnetStopped
	stop    chan struct{} // closed by Stop
	done    chan struct{} // closed when the mining goroutine exits
	stopper sync.Once
}

const (
	devnetIdle = iota
	devnetRunning
	devnetStopped
)

// New returns a Devnet with one empty Chain per ticker of reg, all built
// with opts. When opts.Seed is empty one random seed is drawn and shared:
// hashes still differ between chains, which mix the ticker in. It panics if
// opts fails Validate (see NewChain).
func New(reg *chains.Registry, opts Options) *Devnet {
	if len(opts.Seed) == 0 {
		opts.Seed = randomSeed()
	}
	d := &Devnet{chains: make(map[string]*Chain)}
	for _, t := range reg.All() {
		c := NewChain(t, opts)
		d.chains[t.Ticker] = c
		d.sorted = append(d.sorted, c)
	}
	return d
}

// Chain returns the chain of ticker (compared case-insensitively).
func (d *Devnet) Chain(ticker string) (*Chain, bool) {
	c, ok := d.chains[strings.ToLower(ticker)]
	return c, ok
}

// Chains returns every chain, sorted by ticker. The slice is a copy.
func (d *Devnet) Chains() []*Chain { return slices.Clone(d.sorted) }

// Start mines one block on every chain each blockTime, from one goroutine
// that runs until Stop is called or ctx ends. It returns once that goroutine
// is running. A Devnet starts at most once: a second Start, or a Start after
// Stop, wraps ErrAlreadyStarted; a blockTime that is not positive wraps
// ErrInvalidBlockTime.
func (d *Devnet) Start(ctx context.Context, blockTime time.Duration) error {
	if blockTime <= 0 {
		return fmt.Errorf("%w: %v, want a positive duration", ErrInvalidBlockTime, blockTime)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != devnetIdle {
		return ErrAlreadyStarted
	}
	d.state = devnetRunning
	d.stop, d.done = make(chan struct{}), make(chan struct{})
	go d.run(ctx, blockTime, d.stop, d.done)
	return nil
}

// run is the mining goroutine; it exits when stop is closed or ctx ends.
func (d *Devnet) run(ctx context.Context, blockTime time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(blockTime)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case <-tick.C:
			for _, c := range d.sorted {
				_, _ = c.Mine(1) // cannot fail: 1 is within 1..MaxMine
			}
		}
	}
}

// Stop ends the mining goroutine and waits for it to exit. It is idempotent
// and safe to call without Start (the Devnet then never starts).
func (d *Devnet) Stop() {
	d.mu.Lock()
	d.state = devnetStopped
	stop, done := d.stop, d.done
	d.mu.Unlock()
	if stop == nil {
		return
	}
	d.stopper.Do(func() { close(stop) })
	<-done
}
