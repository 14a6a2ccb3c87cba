package dashboard

import (
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/payhook/payhook/server/ratelimit"
)

// Per-network sign-in limits: the user lockout stops guessing one
// account's password; this stops one client from trying many accounts
// (credential stuffing) or locking every user out.
const (
	// SigninFailuresPerIP is how many failed sign-ins a client network
	// may make in a burst.
	SigninFailuresPerIP = 20
	// SigninFailureRefill is how long a client network waits for each
	// further failed sign-in once its burst is spent.
	SigninFailureRefill = time.Minute
	// maxTrackedNetworks bounds the limiter's memory.
	maxTrackedNetworks = 10000
)

// ipLimiter counts failed sign-ins per client network (an IPv4 address,
// an IPv6 /64): a token bucket each, on the injected clock. It lives in
// one instance's memory; behind a load balancer each instance limits on
// its own, and the per-user lockout in the database holds across all.
type ipLimiter struct {
	mu   sync.Mutex
	nets map[netip.Prefix]*rate.Limiter
}

func newIPLimiter() *ipLimiter {
	return &ipLimiter{nets: map[netip.Prefix]*rate.Limiter{}}
}

// network is the bucket of addr: the address itself for IPv4, its /64
// for IPv6 (one customer gets a whole /64).
func network(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	if addr.Is4() {
		return netip.PrefixFrom(addr, 32)
	}
	p, _ := addr.Prefix(64)
	return p
}

// claim takes one failed-sign-in token of addr's network before its
// password is checked, so concurrent guesses cannot all pass a bucket that
// holds one token. It returns how long the network must wait (0: go on)
// and, when it may go on, settle, to be called with the outcome: a sign-in
// that did not fail gives its token back.
func (l *ipLimiter) claim(addr netip.Addr, now time.Time) (time.Duration, func(failed bool)) {
	l.mu.Lock()
	n := network(addr)
	b, ok := l.nets[n]
	if !ok {
		if len(l.nets) >= maxTrackedNetworks {
			l.prune(now)
		}
		b = rate.NewLimiter(rate.Every(SigninFailureRefill), SigninFailuresPerIP)
		l.nets[n] = b
	}
	l.mu.Unlock()
	r := b.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return wait, nil
	}
	return 0, func(failed bool) {
		if !failed {
			r.CancelAt(now)
		}
	}
}

// prune forgets networks whose bucket has refilled (they are as if never
// seen); when none has, it forgets arbitrary ones, so memory stays bounded
// under a flood from many networks (the per-user lockout still holds).
func (l *ipLimiter) prune(now time.Time) {
	for n, b := range l.nets {
		if b.TokensAt(now) >= SigninFailuresPerIP {
			delete(l.nets, n)
		}
	}
	for n := range l.nets {
		if len(l.nets) < maxTrackedNetworks*9/10 {
			break
		}
		delete(l.nets, n)
	}
}

// clientAddr is the address of the client of r (ratelimit.ClientAddr: the
// peer, or the X-Forwarded-For hop a trusted proxy vouches for).
func clientAddr(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	return ratelimit.ClientAddr(r, trusted)
}
