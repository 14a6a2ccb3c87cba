package clock

import (
	"sync"
	"time"
)

// Now returns the current wall-clock time, with its monotonic reading. It is
// the production clock that every injected clock defaults to.
func Now() time.Time { return time.Now() }

// UTC returns the current wall-clock time in UTC, without a monotonic
// reading: the production clock of parts whose readings are stored or shown.
func UTC() time.Time { return time.Now().UTC() }

// Manual is a clock a test moves by hand. Its zero value reads the zero
// time; inject its Now method where a clock is taken.
type Manual struct {
	mu sync.Mutex
	t  time.Time
}

// NewManual returns a Manual that reads t until it is moved.
func NewManual(t time.Time) *Manual { return &Manual{t: t} }

// Now returns the time the clock was last set to.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t (backwards too: a test may replay a step of the
// wall clock).
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock by d.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
