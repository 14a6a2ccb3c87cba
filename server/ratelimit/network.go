package ratelimit

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Network is the bucket of a client address: its IPv4 /24 or its IPv6 /64
// (one customer, one hosting tenant, usually gets a whole one of either).
func Network(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	bits := 64
	if addr.Is4() {
		bits = 24
	}
	p, _ := addr.Prefix(bits)
	return p
}

// ClientAddr is the address of the client of r: the connection's peer, or,
// when the peer is a trusted proxy, the rightmost X-Forwarded-For address
// that is not one (the nearest hop a trusted proxy vouches for). ok is
// false when no address can be read.
func ClientAddr(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	peer = peer.Unmap()
	if !inAny(peer, trusted) {
		return peer, true
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			// A hop a trusted proxy wrote cannot be garbage; what is left
			// of it came from the client: stop at the last good one.
			return peer, true
		}
		a = a.Unmap()
		if !inAny(a, trusted) {
			return a, true
		}
		peer = a
	}
	return peer, true
}

func inAny(a netip.Addr, nets []netip.Prefix) bool {
	for _, n := range nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}
