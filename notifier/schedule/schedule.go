package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Policy is a retry schedule: the delays between attempts and the window in
// which automatic attempts may start.
type Policy struct {
	// Delays are the waits after the 1st, 2nd, ... failed attempt. The last
	// delay repeats for every further failure.
	Delays []time.Duration
	// Window is how long after a notification's creation new attempts may
	// start.
	Window time.Duration
}

// Default returns the spec's schedule: 1m, 5m, 15m, 1h, then 3h between
// further attempts, within 48 hours of the notification's creation.
func Default() Policy {
	return Policy{
		Delays: []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour},
		Window: 48 * time.Hour,
	}
}

// ParseDelays parses a comma-separated list of Go durations such as
// "1m,5m,15m,1h,3h". Spaces around elements are ignored. The list must not
// be empty and every delay must be positive; an error names the bad element
// by position and text.
func ParseDelays(s string) ([]time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%w: no delays given (want a list such as 1m,5m,15m,1h,3h)", ErrInvalidPolicy)
	}
	parts := strings.Split(s, ",")
	delays := make([]time.Duration, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%w: delay %d is empty", ErrInvalidPolicy, i+1)
		}
		d, err := time.ParseDuration(p)
		if err != nil {
			return nil, fmt.Errorf("%w: delay %d %q is not a duration such as 90s or 5m", ErrInvalidPolicy, i+1, p)
		}
		if d <= 0 {
			return nil, fmt.Errorf("%w: delay %d %q must be positive", ErrInvalidPolicy, i+1, p)
		}
		delays = append(delays, d)
	}
	return delays, nil
}

// Validate reports the first problem of p: no delays, a delay that is not
// positive, or a window that is not positive.
func (p Policy) Validate() error {
	if len(p.Delays) == 0 {
		return fmt.Errorf("%w: no delays", ErrInvalidPolicy)
	}
	for i, d := range p.Delays {
		if d <= 0 {
			return fmt.Errorf("%w: delay %d (%s) must be positive", ErrInvalidPolicy, i+1, d)
		}
	}
	if p.Window <= 0 {
		return fmt.Errorf("%w: window %s must be positive", ErrInvalidPolicy, p.Window)
	}
	return nil
}

// Next returns when the next attempt may start after the attempt-th attempt
// (1-based) failed and finished at finished, for a notification created at
// created. The wait is Delays[min(attempt, len(Delays))-1], counted from
// finished. ok is false when that time is after created+Window: no new
// attempt may start, and the notification fails. A start exactly at
// created+Window is allowed.
//
// next is the zero time when ok is false. attempt below 1 is treated as 1.
// An invalid policy (see Validate) always returns ok=false.
func (p Policy) Next(created, finished time.Time, attempt int) (next time.Time, ok bool) {
	if p.Validate() != nil {
		return time.Time{}, false
	}
	attempt = max(attempt, 1)
	next = finished.Add(p.Delays[min(attempt, len(p.Delays))-1])
	if next.After(p.Expires(created)) {
		return time.Time{}, false
	}
	return next, true
}

// Expires returns the end of the automatic delivery window of a
// notification created at created: no new attempt starts after it.
func (p Policy) Expires(created time.Time) time.Time {
	return created.Add(p.Window)
}
