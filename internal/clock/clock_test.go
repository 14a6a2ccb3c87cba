package clock_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// monotonic reports whether t carries a monotonic clock reading, which
// time.Time's String prints as "m=±<seconds>".
func monotonic(t time.Time) bool { return strings.Contains(t.String(), " m=") }

func TestProductionClocks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		now       func() time.Time
		utc       bool
		monotonic bool
	}{
		{name: "Now keeps the monotonic reading", now: clock.Now, monotonic: true},
		{name: "UTC is in UTC, without a monotonic reading", now: clock.UTC, utc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.now()
			if got.Year() < 2024 {
				t.Errorf("read %v: not the wall clock", got)
			}
			if isUTC := got.Location() == time.UTC; isUTC != tt.utc {
				t.Errorf("location %v, want UTC: %v", got.Location(), tt.utc)
			}
			if m := monotonic(got); m != tt.monotonic {
				t.Errorf("%v: monotonic reading %v, want %v", got, m, tt.monotonic)
			}
		})
	}
}

func TestManual(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		move func(c *clock.Manual)
		want time.Time
	}{
		{name: "reads what it was made with", move: func(*clock.Manual) {}, want: t0},
		{name: "Advance moves forward", move: func(c *clock.Manual) { c.Advance(90 * time.Second) }, want: t0.Add(90 * time.Second)},
		{name: "Advance adds up", move: func(c *clock.Manual) { c.Advance(time.Hour); c.Advance(-time.Minute) }, want: t0.Add(59 * time.Minute)},
		{name: "Set moves anywhere, backwards too", move: func(c *clock.Manual) { c.Set(t0.Add(-time.Hour)) }, want: t0.Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := clock.NewManual(t0)
			tt.move(c)
			if got := c.Now(); !got.Equal(tt.want) {
				t.Errorf("Now() = %v, want %v", got, tt.want)
			}
			if got := c.Now(); !got.Equal(tt.want) {
				t.Errorf("a second read moved the clock: %v, want %v", got, tt.want)
			}
		})
	}
}

func TestManualZeroValue(t *testing.T) {
	t.Parallel()
	var c clock.Manual
	if got := c.Now(); !got.IsZero() {
		t.Errorf("zero Manual reads %v, want the zero time", got)
	}
}

// TestManualConcurrent: moves from many goroutines all count (run with -race
// to check the locking too).
func TestManualConcurrent(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := clock.NewManual(t0)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			c.Advance(time.Second)
			_ = c.Now()
		})
	}
	wg.Wait()
	if got, want := c.Now(), t0.Add(50*time.Second); !got.Equal(want) {
		t.Errorf("after 50 concurrent Advance(1s): %v, want %v", got, want)
	}
}
