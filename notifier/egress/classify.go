package egress

import (
	"fmt"
	"net/netip"

	"code.dny.dev/ssrf"
)

// guard holds the IANA special-purpose lists (code.dny.dev/ssrf). It is
// built once, never modified, and safe for concurrent use. Any port is
// allowed: merchants run callbacks on ports of their choosing, and the
// address, not the port, decides where a request can reach. Only tcp4 and
// tcp6 may be dialled.
var guard = ssrf.New(ssrf.WithAnyPort(), ssrf.WithNetworks("tcp4", "tcp6"))

// rangeLabel names a blocked range for Classify's reason. The labels cover
// every prefix of ssrf.IPv4DeniedPrefixes and ssrf.IPv6DeniedPrefixes (a
// test checks this) and the well-known ranges outside the IPv6 global
// unicast range; they are also a deny list of their own, so a future
// version of the library that drops a range does not open it.
type rangeLabel struct {
	prefix netip.Prefix
	label  string
}

// labels is checked in order: more specific prefixes first.
var labels = func() []rangeLabel {
	l := func(p, label string) rangeLabel { return rangeLabel{netip.MustParsePrefix(p), label} }
	return []rangeLabel{
		// IPv4 (IANA IPv4 special-purpose registry, plus multicast).
		l("0.0.0.0/32", "the unspecified address (RFC 1122)"),
		l("0.0.0.0/8", `a "this network" address (RFC 791)`),
		l("10.0.0.0/8", "a private address (RFC 1918)"),
		l("100.64.0.0/10", "a shared carrier-grade NAT address (RFC 6598)"),
		l("127.0.0.0/8", "a loopback address (RFC 1122)"),
		l("169.254.0.0/16", "a link-local address (RFC 3927)"),
		l("172.16.0.0/12", "a private address (RFC 1918)"),
		l("192.0.0.0/24", "an IETF protocol assignment (RFC 6890)"),
		l("192.0.2.0/24", "a documentation address (TEST-NET-1, RFC 5737)"),
		l("192.31.196.0/24", "an AS112 anycast address (RFC 7535)"),
		l("192.52.193.0/24", "an AMT relay anycast address (RFC 7450)"),
		l("192.88.99.0/24", "a deprecated 6to4 relay anycast address (RFC 7526)"),
		l("192.168.0.0/16", "a private address (RFC 1918)"),
		l("192.175.48.0/24", "an AS112 direct delegation address (RFC 7534)"),
		l("198.18.0.0/15", "a benchmarking address (RFC 2544)"),
		l("198.51.100.0/24", "a documentation address (TEST-NET-2, RFC 5737)"),
		l("203.0.113.0/24", "a documentation address (TEST-NET-3, RFC 5737)"),
		l("224.0.0.0/4", "a multicast address (RFC 5771)"),
		l("255.255.255.255/32", "the limited broadcast address (RFC 919)"),
		l("240.0.0.0/4", "a reserved address (240.0.0.0/4, RFC 1112)"),
		// IPv6.
		l("::/128", "the unspecified address (RFC 4291)"),
		l("::1/128", "the loopback address (RFC 4291)"),
		l("::ffff:0:0/96", "an IPv4-mapped address (RFC 4291)"),
		l("::/96", "a deprecated IPv4-compatible address (RFC 4291)"),
		l("64:ff9b::/96", "a NAT64 address (RFC 6052); translated destinations are not dialled"),
		l("64:ff9b:1::/48", "a local-use IPv4/IPv6 translation address (RFC 8215)"),
		l("100::/64", "a discard-only address (RFC 6666)"),
		l("2001::/32", "a Teredo address (RFC 4380); tunnelled destinations are not dialled"),
		l("2001:2::/48", "a benchmarking address (RFC 5180)"),
		l("2001:db8::/32", "a documentation address (RFC 3849)"),
		l("2001::/23", "an IETF protocol assignment (RFC 2928)"),
		l("2002::/16", "a 6to4 address (RFC 3056); tunnelled destinations are not dialled"),
		l("2620:4f:8000::/48", "an AS112 direct delegation address (RFC 7534)"),
		l("3fff::/20", "a documentation address (RFC 9637)"),
		l("5f00::/16", "a segment routing (SRv6) SID (RFC 9602)"),
		l("fc00::/7", "a unique local address (RFC 4193)"),
		l("fe80::/10", "a link-local address (RFC 4291)"),
		l("fec0::/10", "a deprecated site-local address (RFC 3879)"),
		l("ff00::/8", "a multicast address (RFC 4291)"),
	}
}()

// Embedded-IPv4 forms. IPv4-mapped is handled by Unmap.
var (
	nat64WKP   = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052: IPv4 in the last 32 bits
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215: layout is the operator's; read as /96
	sixToFour  = netip.MustParsePrefix("2002::/16")      // RFC 3056: IPv4 in bits 16..48
	teredo     = netip.MustParsePrefix("2001::/32")      // RFC 4380: server in bits 32..64, client = last 32 bits XOR 0xffffffff
)

// Classify decides whether ip may be dialled for a merchant callback.
// reason says why not, as a phrase that follows the address ("10.0.0.5 is
// " + reason), and is empty when ip is allowed.
//
// Blocked: every range of the IANA IPv4 and IPv6 special-purpose registries
// and multicast (code.dny.dev/ssrf), everything outside the IPv6 global
// unicast range 2000::/3, and the IPv6 forms that embed an IPv4 address:
//   - IPv4-mapped ::ffff:a.b.c.d is the IPv4 address itself (Go dials it
//     over IPv4), so it is judged as a.b.c.d: blocked exactly when a.b.c.d is.
//   - NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4 (2002::/16) and Teredo
//     (2001::/32) are always blocked, as code.dny.dev/ssrf does; when the
//     embedded IPv4 address is itself blocked the reason names it.
//
// An address with an IPv6 zone is judged without its zone.
func Classify(ip netip.Addr) (blocked bool, reason string) {
	if !ip.IsValid() {
		return true, "not a valid IP address"
	}
	ip = ip.WithZone("")
	if ip.Is4In6() {
		v4 := ip.Unmap()
		if blocked, reason := Classify(v4); blocked {
			return true, fmt.Sprintf("an IPv4-mapped address (RFC 4291) of %s, %s", v4, reason)
		}
		return false, ""
	}
	if r, ok := embeddedReason(ip); ok {
		return true, r
	}
	for _, l := range labels {
		if l.prefix.Contains(ip) {
			return true, l.label
		}
	}
	if err := guard.SafeAddr(ip); err != nil {
		// A range the library denies and labels does not name yet.
		for _, p := range append(append([]netip.Prefix{}, ssrf.IPv4DeniedPrefixes...), ssrf.IPv6DeniedPrefixes...) {
			if p.Contains(ip) {
				return true, fmt.Sprintf("a special-purpose address (%s, IANA registry)", p)
			}
		}
		if ip.Is6() && !ssrf.IPv6GlobalUnicast.Contains(ip) {
			return true, "outside the IPv6 global unicast range (2000::/3)"
		}
		return true, "a special-purpose address (IANA registry)"
	}
	return false, ""
}

// embeddedReason reports the reason for an IPv6 address that embeds an IPv4
// address which is itself blocked. It returns ok=false for any other
// address (including these forms with a public IPv4 address, which the
// range labels then block).
func embeddedReason(ip netip.Addr) (reason string, ok bool) {
	if !ip.Is6() {
		return "", false
	}
	b := ip.As16()
	v4 := func(x []byte) netip.Addr { return netip.AddrFrom4([4]byte(x)) }
	check := func(form string, embedded netip.Addr, role string) (string, bool) {
		if blocked, r := Classify(embedded); blocked {
			return fmt.Sprintf("%s embedding %s%s, %s", form, role, embedded, r), true
		}
		return "", false
	}
	switch {
	case nat64WKP.Contains(ip):
		return check("a NAT64 address (RFC 6052)", v4(b[12:16]), "")
	case nat64Local.Contains(ip):
		return check("a local-use IPv4/IPv6 translation address (RFC 8215)", v4(b[12:16]), "")
	case sixToFour.Contains(ip):
		return check("a 6to4 address (RFC 3056)", v4(b[2:6]), "")
	case teredo.Contains(ip):
		client := [4]byte{b[12] ^ 0xff, b[13] ^ 0xff, b[14] ^ 0xff, b[15] ^ 0xff}
		if r, ok := check("a Teredo address (RFC 4380)", netip.AddrFrom4(client), "client "); ok {
			return r, true
		}
		return check("a Teredo address (RFC 4380)", v4(b[4:8]), "server ")
	}
	return "", false
}
