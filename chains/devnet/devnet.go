package devnet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/internal/startstop"
)

// Devnet is one simulated Chain per ticker of a registry, optionally mined
// on a timer. It is safe for concurrent use.
type Devnet struct {
	chains map[string]*Chain
	sorted []*Chain

	startstop.Base
}

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
// Stop, wraps startstop.ErrStarted; a blockTime that is not positive wraps
// ErrInvalidBlockTime.
func (d *Devnet) Start(ctx context.Context, blockTime time.Duration) error {
	if blockTime <= 0 {
		return fmt.Errorf("%w: %v, want a positive duration", ErrInvalidBlockTime, blockTime)
	}
	run, err := d.StartInit(ctx)
	if err != nil {
		return err
	}
	// Unlike the house's other parts, the miner also ends with ctx: a
	// caller that wants it to outlive ctx detaches ctx (the server does).
	d.Go(func() { d.run(ctx.Done(), run.Done(), blockTime) })
	return nil
}

// run is the mining goroutine; it exits when ended or stopped is closed.
func (d *Devnet) run(ended, stopped <-chan struct{}, blockTime time.Duration) {
	tick := time.NewTicker(blockTime)
	defer tick.Stop()
	for {
		select {
		case <-ended:
			return
		case <-stopped:
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
func (d *Devnet) Stop() { d.Base.Stop() }
