package startstop

import (
	"context"
	"fmt"
	"sync"
)

// Base is embedded by a long-running part. Its zero value is ready: a part
// needs no constructor call for it. The part's Start calls StartInit first
// and starts its goroutines with Go; the part either inherits Stop (cancel,
// then wait for those goroutines) or writes its own on top of StopOnce.
//
//	func (p *Part) Start(ctx context.Context) error {
//		ctx, err := p.StartInit(ctx)
//		if err != nil {
//			return err
//		}
//		p.Go(func() { p.loop(ctx) })
//		return nil
//	}
type Base struct {
	mu       sync.Mutex
	started  bool
	stopping bool
	cancel   context.CancelCauseFunc
	stopped  chan struct{} // closed once the first Stop has finished
	running  sync.WaitGroup
}

// StartInit marks the part started and returns the context it runs on:
// ctx's values, cancelled (with cause ErrStopped) only when Stop begins. It
// returns ErrStarted when the part was started or stopped before, and
// ctx's error when ctx has ended; in both cases nothing changes.
func (b *Base) StartInit(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started || b.stopping {
		return nil, ErrStarted
	}
	b.started = true
	run, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	b.cancel = cancel
	return run, nil
}

// Go runs fn in a goroutine the part owns: Wait (and so the default Stop)
// returns only once fn has. Call it from Start, after StartInit, from a
// goroutine Go started, or from the part's constructor for a goroutine that
// serves before Start (a metrics listener). Once Stop has begun, fn is not run at all (a
// goroutine started now would outlive the Stop that already waited) and Go
// reports false, so the part can release what it prepared for fn.
func (b *Base) Go(fn func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopping {
		return false
	}
	b.running.Go(fn)
	return true
}

// Wait waits for every goroutine started with Go to return.
func (b *Base) Wait() { b.running.Wait() }

// StopOnce stops the part: the first call cancels the run context with the
// cause ErrStopped, runs shutdown (which may be nil) and returns when it is
// done; every other call waits for that and returns without running
// anything. A part stopped before it started never starts. shutdown runs
// also when the part never started, so it may release what the part's
// constructor took; it must not call Stop.
func (b *Base) StopOnce(shutdown func()) {
	b.mu.Lock()
	if b.stopped == nil {
		b.stopped = make(chan struct{})
	}
	stopped := b.stopped
	if b.stopping {
		b.mu.Unlock()
		<-stopped
		return
	}
	b.stopping = true
	cancel := b.cancel
	b.mu.Unlock()
	defer close(stopped)
	if cancel != nil {
		cancel(ErrStopped)
	}
	if shutdown != nil {
		shutdown()
	}
}

// Stop cancels the run context and waits for the goroutines started with
// Go. It is idempotent, waits, and may be called without Start.
func (b *Base) Stop() { b.StopOnce(b.Wait) }
