package notifier

import (
	"time"

	entdb "github.com/payhook/payhook/ent/db"
)

// Destinations not yet trusted. A destination is trusted once one of its
// attempts has got an HTTP response (whatever its status) in this
// instance, and until one gets no answer at all (it timed out, or the
// connection failed): then it is failing. A destination that is not
// trusted (failing, or not yet answered here) takes one attempt at a time
// instead of PerHost, and all of them together take at most a quarter of
// the workers (failingMax). Without that, dead endpoints would each fill
// their PerHost slots with attempts that hang for the attempt timeout,
// those payhook already knows to fail as much as those it meets for the
// first time, and every worker would wait on them while trusted
// endpoints' notifications queued behind. A live endpoint is trusted from
// its first answer, milliseconds after its first attempt. Rows of
// destinations waiting for the share keep their schedule and are parked
// like a saturated destination's. docs/decisions.md, "Failing
// destinations".

// failingForget is how long a destination is remembered (trusted or
// failing) without a new attempt: longer than the retry window, so a dead
// endpoint's retries never find it forgotten.
const failingForget = 50 * time.Hour

// failingMax is how many attempts to destinations that are not trusted
// may be in flight at once.
func (d *Dispatcher) failingMax() int {
	return max(1, d.cfg.Workers/4)
}

// addTrust marks in c which hosts of rows are trusted, for its claim
// rules (capacity.allows): only the hosts being claimed, not every host
// this instance knows. d.mu must be held.
func (d *Dispatcher) addTrust(c *capacity, rows []*entdb.Notification) {
	if c.trusted == nil {
		c.trusted = map[string]bool{}
	}
	for _, r := range rows {
		if _, ok := d.trusted[r.Host]; ok {
			c.trusted[r.Host] = true
		}
	}
}

// untrusted reports whether host is not trusted. d.mu must be held.
func (d *Dispatcher) untrusted(host string) bool {
	_, ok := d.trusted[host]
	return !ok
}

// limitOf is how many attempts to host may be in flight at once. d.mu must
// be held.
func (d *Dispatcher) limitOf(host string) int {
	if d.untrusted(host) {
		return 1
	}
	return d.cfg.PerHost
}

// failingFull reports whether the destinations that are not trusted hold
// their whole share of the workers. d.mu must be held.
func (d *Dispatcher) failingFull() bool {
	return d.failingActive >= d.failingMax()
}

// blocked reports whether host can take no attempt now for want of its own
// slot or, not trusted, of the share. d.mu must be held.
func (d *Dispatcher) blocked(host string) bool {
	if d.perHost[host] >= d.limitOf(host) {
		return true
	}
	return d.untrusted(host) && d.failingFull()
}

// answered records how an attempt to host ended: with an HTTP response
// (any status), or without one (timed out, connection failed). d.mu must
// be held, and the attempt must still count in perHost.
func (d *Dispatcher) answered(host string, ok bool, now time.Time) {
	if now.Sub(d.forgotAt) > time.Hour {
		// Forget destinations idle for longer than the retry window (at
		// most once an hour: the maps can hold every destination).
		d.forgotAt = now
		for h, at := range d.failing {
			if now.Sub(at) > failingForget && d.perHost[h] == 0 {
				delete(d.failing, h)
			}
		}
		for h, at := range d.trusted {
			if now.Sub(at) > failingForget && d.perHost[h] == 0 {
				delete(d.trusted, h)
			}
		}
	}
	was := !d.untrusted(host)
	switch {
	case ok:
		if !was {
			d.failingActive -= d.perHost[host]
		}
		d.trusted[host] = now
		delete(d.failing, host)
	default:
		if was {
			delete(d.trusted, host)
			d.failingActive += d.perHost[host]
		}
		d.failing[host] = now
	}
}
