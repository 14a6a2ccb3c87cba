package dashboard

import (
	"net/http"
	"net/netip"
	"testing"
	"time"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	rows := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"direct client", "203.0.113.7:5000", nil, "203.0.113.7"},
		{"direct client's header is ignored", "203.0.113.7:5000", []string{"198.51.100.1"}, "203.0.113.7"},
		{"through a trusted proxy", "10.1.2.3:443", []string{"198.51.100.1"}, "198.51.100.1"},
		{"spoofed hop left of the real one", "10.1.2.3:443", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "10.1.2.3:443", []string{"198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"header split over lines", "10.1.2.3:443", []string{"1.1.1.1", "198.51.100.1"}, "198.51.100.1"},
		{"trusted proxy without a header", "10.1.2.3:443", nil, "10.1.2.3"},
		{"garbage hop stops the walk", "10.1.2.3:443", []string{"198.51.100.1, nonsense, 10.2.2.2"}, "10.2.2.2"},
		{"ipv6 loopback proxy", "[::1]:80", []string{"2001:db8::5"}, "2001:db8::5"},
		{"ipv4-mapped peer", "[::ffff:203.0.113.9]:80", nil, "203.0.113.9"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			req := &http.Request{RemoteAddr: r.remote, Header: http.Header{}}
			for _, v := range r.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			got, ok := clientAddr(req, proxies)
			if !ok || got.String() != r.want {
				t.Fatalf("client %v (%v), want %s", got, ok, r.want)
			}
		})
	}
	if _, ok := clientAddr(&http.Request{RemoteAddr: "pipe"}, nil); ok {
		t.Fatal("an unparsable peer gave an address")
	}
}

func TestIPLimiter(t *testing.T) {
	t.Parallel()
	l := newIPLimiter()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	a := netip.MustParseAddr("203.0.113.7")
	sameNet := netip.MustParseAddr("2001:db8:1:2::1")
	sameNet2 := netip.MustParseAddr("2001:db8:1:2:ffff::9")
	otherNet := netip.MustParseAddr("2001:db8:1:3::1")
	fail := func(addr netip.Addr, at time.Time) {
		t.Helper()
		wait, settle := l.claim(addr, at)
		if wait != 0 {
			t.Fatalf("%s must wait %s", addr, wait)
		}
		settle(true)
	}
	// Successes give their token back: any number of them.
	for range 3 * SigninFailuresPerIP {
		wait, settle := l.claim(a, now)
		if wait != 0 {
			t.Fatalf("successful sign-ins are limited: wait %s", wait)
		}
		settle(false)
	}
	for range SigninFailuresPerIP {
		fail(a, now)
		fail(sameNet, now)
	}
	if w, _ := l.claim(a, now); w != SigninFailureRefill {
		t.Fatalf("after the burst: wait %s, want %s", w, SigninFailureRefill)
	}
	if w, _ := l.claim(sameNet2, now); w == 0 {
		t.Fatal("another address of the same IPv6 /64 is not limited")
	}
	if w, settle := l.claim(otherNet, now); w != 0 {
		t.Fatalf("another /64 must wait %s", w)
	} else {
		settle(false)
	}
	if w, _ := l.claim(a, now.Add(SigninFailureRefill/2)); w != SigninFailureRefill/2 {
		t.Fatalf("half a refill later: wait %s", w)
	}
	now = now.Add(SigninFailureRefill)
	// One token is back: two concurrent guesses cannot both take it.
	w1, settle1 := l.claim(a, now)
	w2, _ := l.claim(a, now)
	if w1 != 0 || w2 == 0 {
		t.Fatalf("two claims of one token: waits %s and %s", w1, w2)
	}
	settle1(true)
	if w, _ := l.claim(a, now); w == 0 {
		t.Fatal("the refilled attempt did not count")
	}
}

func TestIPLimiterBoundedMemory(t *testing.T) {
	t.Parallel()
	l := newIPLimiter()
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for i := range maxTrackedNetworks + 500 {
		if _, settle := l.claim(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now); settle != nil {
			settle(true)
		}
	}
	if n := len(l.nets); n > maxTrackedNetworks {
		t.Fatalf("%d networks tracked, bound %d", n, maxTrackedNetworks)
	}
}
