package notifier

import "time"

// Failing destinations. A destination whose last attempt got no answer at
// all (it timed out, or the connection failed) is failing until one of its
// attempts gets an HTTP response, whatever its status. A failing
// destination takes one attempt at a time instead of PerHost, and all
// failing destinations together take at most a quarter of the workers
// (failingMax): without that, a few hundred dead endpoints would each fill
// their PerHost slots with attempts that hang for the attempt timeout, and
// every worker would wait on them while healthy endpoints' notifications
// queued behind. Their rows keep their schedule; those due while the
// failing share is full wait (parked like a saturated destination's) for a
// slot. docs/decisions.md, "Failing destinations".

// failingForget is how long a failing destination is remembered without
// a new failure: longer than the retry window, so a dead endpoint's
// retries never find it forgotten.
const failingForget = 50 * time.Hour

// failingMax is how many attempts to failing destinations may be in flight
// at once.
func (d *Dispatcher) failingMax() int {
	return max(1, d.cfg.Workers/4)
}

// limitOf is how many attempts to host may be in flight at once. d.mu must
// be held.
func (d *Dispatcher) limitOf(host string) int {
	if _, ok := d.failing[host]; ok {
		return 1
	}
	return d.cfg.PerHost
}

// failingFull reports whether the failing destinations hold their whole
// share of the workers. d.mu must be held.
func (d *Dispatcher) failingFull() bool {
	return d.failingActive >= d.failingMax()
}

// blocked reports whether host can take no attempt now for want of its own
// slot or, failing, of the failing share. d.mu must be held.
func (d *Dispatcher) blocked(host string) bool {
	if d.perHost[host] >= d.limitOf(host) {
		return true
	}
	_, failing := d.failing[host]
	return failing && d.failingFull()
}

// answered records how an attempt to host ended: with an HTTP response
// (any status), or without one (timed out, connection failed). d.mu must
// be held, and the attempt must still count in perHost.
func (d *Dispatcher) answered(host string, ok bool, now time.Time) {
	_, was := d.failing[host]
	switch {
	case ok && was:
		delete(d.failing, host)
		d.failingActive -= d.perHost[host]
	case !ok && !was:
		for h, at := range d.failing {
			if now.Sub(at) > failingForget && d.perHost[h] == 0 {
				delete(d.failing, h)
			}
		}
		d.failing[host] = now
		d.failingActive += d.perHost[host]
	case !ok:
		d.failing[host] = now
	}
}
