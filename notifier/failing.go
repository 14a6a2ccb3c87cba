package notifier

import (
	"time"

	entdb "github.com/payhook/payhook/ent/db"
)

// Destinations not yet trusted. A destination is trusted once one of its
// attempts has got an HTTP response (whatever its status) in this
// instance, and until one gets no answer at all (it timed out, or the
// connection failed): then it is failing. A destination that is not
// trusted takes one attempt at a time instead of PerHost, in one of two
// shares of a quarter of the workers each:
//
//   - failing destinations: those whose last attempt here got no answer,
//     and those met here first through a retry (an attempt of that row
//     failed before, in this instance or another, or before a restart);
//   - new destinations: those this instance has not attempted yet, met
//     through a first attempt.
//
// Without the shares, dead endpoints would each fill their PerHost slots
// with attempts that hang for the attempt timeout, and every worker would
// wait on them while trusted endpoints' notifications queued behind. With
// one share for both, a new endpoint (a merchant's first notification, or
// every endpoint after a restart) would wait behind the backlog of a
// thousand dead ones, each attempt of which hangs for the timeout; with
// two, its first attempt waits only for other new destinations, and a live
// endpoint is trusted from its first answer, milliseconds later. Rows of
// destinations waiting for their share keep their schedule and are parked
// like a saturated destination's. docs/decisions.md, "Failing
// destinations".

// failingForget is how long a destination is remembered (trusted or
// failing) without a new attempt: longer than the retry window, so a dead
// endpoint's retries never find it forgotten.
const failingForget = 50 * time.Hour

// trust is a destination's standing (see above).
type trust int

const (
	trustNew trust = iota
	trustFailing
	trustTrusted
)

// failingMax is how many attempts to failing destinations may be in
// flight at once; newMax, to new destinations.
func (d *Dispatcher) failingMax() int { return max(1, d.cfg.Workers/4) }
func (d *Dispatcher) newMax() int     { return max(1, d.cfg.Workers/4) }

// standing is host's standing. d.mu must be held.
func (d *Dispatcher) standing(host string) trust {
	if _, ok := d.trusted[host]; ok {
		return trustTrusted
	}
	if _, ok := d.failing[host]; ok {
		return trustFailing
	}
	return trustNew
}

// shareActive returns the counter of attempts in flight of standing t
// (nil for trusted destinations, which have no share). d.mu must be held.
func (d *Dispatcher) shareActive(t trust) *int {
	switch t {
	case trustFailing:
		return &d.failingActive
	case trustNew:
		return &d.newActive
	}
	return nil
}

// restand moves host to standing to, with its attempts in flight from one
// share's count to the other's. d.mu must be held.
func (d *Dispatcher) restand(host string, to trust, now time.Time) {
	from := d.standing(host)
	if c := d.shareActive(from); c != nil {
		*c -= d.perHost[host]
	}
	if c := d.shareActive(to); c != nil {
		*c += d.perHost[host]
	}
	switch to {
	case trustTrusted:
		d.trusted[host] = now
		delete(d.failing, host)
	case trustFailing:
		delete(d.trusted, host)
		d.failing[host] = now
	}
}

// addTrust sets in c the standing of the hosts of rows (its maps are
// made here, when a claim meets such a host), for its claim
// rules (capacity.allows): only the hosts being claimed, not every host
// this instance knows. A host not attempted here yet, met through a retry,
// is failing from now on (see above). d.mu must be held.
func (d *Dispatcher) addTrust(c *capacity, rows []*entdb.Notification) {
	for _, r := range rows {
		switch d.standing(r.Host) {
		case trustTrusted:
			if c.trusted == nil {
				c.trusted = map[string]bool{}
			}
			c.trusted[r.Host] = true
		case trustNew:
			if r.Attempts == 0 {
				continue
			}
			d.restand(r.Host, trustFailing, d.cfg.Now())
			c.failingRoom = d.failingMax() - d.failingActive
			c.newRoom = d.newMax() - d.newActive
			fallthrough
		case trustFailing:
			if c.failing == nil {
				c.failing = map[string]bool{}
			}
			c.failing[r.Host] = true
		}
	}
}

// untrusted reports whether host is not trusted. d.mu must be held.
func (d *Dispatcher) untrusted(host string) bool {
	return d.standing(host) != trustTrusted
}

// limitOf is how many attempts to host may be in flight at once. d.mu must
// be held.
func (d *Dispatcher) limitOf(host string) int {
	if d.untrusted(host) {
		return 1
	}
	return d.cfg.PerHost
}

// failingFull reports whether the failing destinations hold their whole
// share of the workers; newFull, the new ones. d.mu must be held.
func (d *Dispatcher) failingFull() bool { return d.failingActive >= d.failingMax() }
func (d *Dispatcher) newFull() bool     { return d.newActive >= d.newMax() }

// shareFull reports whether host, not trusted, can take no attempt for
// want of its share. d.mu must be held.
func (d *Dispatcher) shareFull(host string) bool {
	switch d.standing(host) {
	case trustFailing:
		return d.failingFull()
	case trustNew:
		return d.newFull()
	}
	return false
}

// blocked reports whether host can take no attempt now for want of its own
// slot or, not trusted, of its share. d.mu must be held.
func (d *Dispatcher) blocked(host string) bool {
	return d.perHost[host] >= d.limitOf(host) || d.shareFull(host)
}

// startCounted counts an attempt to host as started in its share, and
// endCounted as ended (takeSlot, releaseWorker). d.mu must be held.
func (d *Dispatcher) startCounted(host string) {
	if c := d.shareActive(d.standing(host)); c != nil {
		*c++
	}
}

func (d *Dispatcher) endCounted(host string) {
	if c := d.shareActive(d.standing(host)); c != nil {
		*c--
	}
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
	if ok {
		d.restand(host, trustTrusted, now)
	} else {
		d.restand(host, trustFailing, now)
	}
}
