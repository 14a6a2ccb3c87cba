package notifier

import (
	"context"
	"errors"
	"sync"
)

// ErrStarted reports a second Start, or a Start after Stop: each
// long-running part runs once.
var ErrStarted = errors.New("already started or stopped")

// runner is the one Start/Stop shape of the notifier's long-running parts:
// start runs fn in a goroutine, returning at once; stop cancels fn's
// context and waits for it to return. stop is idempotent, and a part
// stopped before it started never starts.
type runner struct {
	mu      sync.Mutex
	started bool
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

func (r *runner) start(ctx context.Context, fn func(context.Context)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return ErrStarted
	}
	r.started = true
	ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	r.done = make(chan struct{})
	go func() {
		defer close(r.done)
		fn(ctx)
	}()
	return nil
}

// stop reports whether this call stopped the part (false when it had been
// stopped already).
func (r *runner) stop() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return false
	}
	r.stopped = true
	if r.started {
		r.cancel()
		<-r.done
	}
	return true
}
