package startstop_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/startstop"
)

// part is the smallest long-running part: one loop that runs until its
// context ends, and a count of shutdowns.
type part struct {
	startstop.Base
	running   chan struct{} // closed once the loop runs
	cause     error         // context.Cause of the loop's context when it ended
	shutdowns int
}

func newPart() *part { return &part{running: make(chan struct{})} }

func (p *part) Start(ctx context.Context) error {
	ctx, err := p.StartInit(ctx)
	if err != nil {
		return err
	}
	p.Go(func() {
		close(p.running)
		<-ctx.Done()
		p.cause = context.Cause(ctx)
	})
	return nil
}

func (p *part) Stop() {
	p.StopOnce(func() {
		p.Wait()
		p.shutdowns++
	})
}

// wait waits for c to close, failing the test after a deadline.
func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: timed out", what)
	}
}

func TestStartTwiceAndAfterStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// before runs on a new part; then Start must return want.
		before func(*testing.T, *part)
		want   error
	}{
		{"first start", func(*testing.T, *part) {}, nil},
		{"second start", func(t *testing.T, p *part) {
			if err := p.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
		}, startstop.ErrStarted},
		{"start after stop", func(t *testing.T, p *part) {
			if err := p.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			p.Stop()
		}, startstop.ErrStarted},
		{"start after a stop without start", func(_ *testing.T, p *part) { p.Stop() }, startstop.ErrStarted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := newPart()
			tt.before(t, p)
			err := p.Start(t.Context())
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Start: %v, want %v", err, tt.want)
			}
			p.Stop()
			if p.shutdowns != 1 {
				t.Errorf("%d shutdowns, want 1", p.shutdowns)
			}
		})
	}
}

func TestStartWithAnEndedContextChangesNothing(t *testing.T) {
	t.Parallel()
	p := newPart()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Start(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start with a cancelled context: %v", err)
	}
	if err := p.Start(t.Context()); err != nil {
		t.Fatalf("Start after a refused one: %v", err)
	}
	wait(t, p.running, "loop")
	p.Stop()
}

func TestRunContextOutlivesStartsAndEndsWithStop(t *testing.T) {
	t.Parallel()
	p := newPart()
	ctx, cancel := context.WithCancel(t.Context())
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wait(t, p.running, "loop")
	cancel() // Start's context bounds starting only
	stopped := make(chan struct{})
	go func() { p.Stop(); close(stopped) }()
	wait(t, stopped, "Stop")
	if !errors.Is(p.cause, startstop.ErrStopped) {
		t.Errorf("the run context's cause: %v, want ErrStopped", p.cause)
	}
}

func TestConcurrentStopsWaitForTheFirst(t *testing.T) {
	t.Parallel()
	var b startstop.Base
	var mu sync.Mutex
	shutDown := false
	release, inShutdown, first := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(first)
		b.StopOnce(func() {
			close(inShutdown)
			<-release
			mu.Lock()
			shutDown = true
			mu.Unlock()
		})
	}()
	wait(t, inShutdown, "first Stop's shutdown")
	entered, second := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(second)
		close(entered)
		b.StopOnce(func() { t.Error("a second shutdown ran") })
		mu.Lock()
		defer mu.Unlock()
		if !shutDown {
			t.Error("a second Stop returned while the first was still shutting down")
		}
	}()
	wait(t, entered, "second Stop")
	close(release)
	wait(t, first, "first Stop")
	wait(t, second, "second Stop")
}

func TestGoAfterStopDoesNotRun(t *testing.T) {
	t.Parallel()
	var b startstop.Base
	if _, err := b.StartInit(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	var mu sync.Mutex
	ran := false
	if b.Go(func() { mu.Lock(); ran = true; mu.Unlock() }) {
		t.Error("Go after Stop reported that it ran fn")
	}
	b.Wait()
	mu.Lock()
	defer mu.Unlock()
	if ran {
		t.Error("Go ran a goroutine after Stop, which nothing waits for")
	}
}
