package egress_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/payhook/payhook/notifier/egress"
)

func TestClassifyBlockedRanges(t *testing.T) {
	t.Parallel()
	// Each blocked range with an address at its start, middle and end.
	tests := []struct {
		name   string
		addrs  []string
		reason string // substring of Classify's reason
	}{
		{"IPv4 unspecified", []string{"0.0.0.0"}, "unspecified"},
		{"IPv4 this network 0/8", []string{"0.0.0.1", "0.128.0.0", "0.255.255.255"}, "this network"},
		{"RFC 1918 10/8", []string{"10.0.0.0", "10.128.0.0", "10.255.255.255"}, "private address (RFC 1918)"},
		{"CGNAT 100.64/10", []string{"100.64.0.0", "100.96.0.0", "100.127.255.255"}, "carrier-grade NAT"},
		{"loopback 127/8", []string{"127.0.0.0", "127.0.0.1", "127.128.0.0", "127.255.255.255"}, "loopback"},
		{"link-local 169.254/16", []string{"169.254.0.0", "169.254.169.254", "169.254.255.255"}, "link-local"},
		{"RFC 1918 172.16/12", []string{"172.16.0.0", "172.24.0.0", "172.31.255.255"}, "private address (RFC 1918)"},
		{"IETF protocol assignments 192.0.0/24", []string{"192.0.0.0", "192.0.0.128", "192.0.0.255"}, "IETF protocol assignment"},
		{"TEST-NET-1 192.0.2/24", []string{"192.0.2.0", "192.0.2.128", "192.0.2.255"}, "documentation"},
		{"AS112 192.31.196/24", []string{"192.31.196.0", "192.31.196.128", "192.31.196.255"}, "AS112"},
		{"AMT 192.52.193/24", []string{"192.52.193.0", "192.52.193.128", "192.52.193.255"}, "AMT"},
		{"6to4 relay anycast 192.88.99/24", []string{"192.88.99.0", "192.88.99.1", "192.88.99.255"}, "6to4 relay"},
		{"RFC 1918 192.168/16", []string{"192.168.0.0", "192.168.128.0", "192.168.255.255"}, "private address (RFC 1918)"},
		{"AS112 direct delegation 192.175.48/24", []string{"192.175.48.0", "192.175.48.128", "192.175.48.255"}, "AS112"},
		{"benchmarking 198.18/15", []string{"198.18.0.0", "198.19.0.0", "198.19.255.255"}, "benchmarking"},
		{"TEST-NET-2 198.51.100/24", []string{"198.51.100.0", "198.51.100.128", "198.51.100.255"}, "documentation"},
		{"TEST-NET-3 203.0.113/24", []string{"203.0.113.0", "203.0.113.128", "203.0.113.255"}, "documentation"},
		{"multicast 224/4", []string{"224.0.0.0", "232.0.0.0", "239.255.255.255"}, "multicast"},
		{"reserved 240/4", []string{"240.0.0.0", "248.0.0.0", "255.255.255.254"}, "reserved"},
		{"limited broadcast", []string{"255.255.255.255"}, "broadcast"},
		{"IPv6 unspecified", []string{"::"}, "unspecified"},
		{"IPv6 loopback", []string{"::1"}, "loopback"},
		{"IPv4-compatible ::/96", []string{"::2", "::8000:0", "::ffff:ffff"}, "IPv4-compatible"},
		{"discard-only 100::/64", []string{"100::", "100::8000:0:0:0", "100::ffff:ffff:ffff:ffff"}, "discard-only"},
		{"IETF protocol assignments 2001::/23", []string{"2001:100::", "2001:180::", "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff"}, "IETF protocol assignment"},
		{"benchmarking 2001:2::/48", []string{"2001:2::", "2001:2:0:8000::", "2001:2:0:ffff:ffff:ffff:ffff:ffff"}, "benchmarking"},
		{"documentation 2001:db8::/32", []string{"2001:db8::", "2001:db8:8000::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"}, "documentation"},
		{"AS112 2620:4f:8000::/48", []string{"2620:4f:8000::", "2620:4f:8000:8000::", "2620:4f:8000:ffff:ffff:ffff:ffff:ffff"}, "AS112"},
		{"documentation 3fff::/20", []string{"3fff::", "3fff:800::", "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff"}, "documentation"},
		{"SRv6 SIDs 5f00::/16", []string{"5f00::", "5f00:8000::", "5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "SRv6"},
		{"ULA fc00::/7", []string{"fc00::", "fd00::", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "unique local"},
		{"IPv6 link-local fe80::/10", []string{"fe80::", "fe80::1", "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "link-local"},
		{"IPv6 link-local with zone", []string{"fe80::1%eth0"}, "link-local"},
		{"site-local fec0::/10", []string{"fec0::", "fef0::", "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "site-local"},
		{"IPv6 multicast ff00::/8", []string{"ff00::", "ff02::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}, "multicast"},
		{"outside IPv6 global unicast", []string{"1::", "4000::", "8000::", "e000::1"}, "outside the IPv6 global unicast"},
	}
	for _, tt := range tests {
		for _, a := range tt.addrs {
			t.Run(tt.name+" "+a, func(t *testing.T) {
				t.Parallel()
				blocked, reason := egress.Classify(netip.MustParseAddr(a))
				if !blocked || !strings.Contains(reason, tt.reason) {
					t.Errorf("Classify(%s) = %v, %q; want blocked, reason containing %q", a, blocked, reason, tt.reason)
				}
			})
		}
	}
}

func TestClassifyPublic(t *testing.T) {
	t.Parallel()
	// Public addresses, including the neighbours of blocked ranges.
	for _, a := range []string{
		"8.8.8.8", "1.1.1.1", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0", "169.253.255.255", "169.255.0.0", "172.15.255.255", "172.32.0.0",
		"192.0.1.255", "192.0.3.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
		"223.255.255.255",
		"2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1", "2001:200::1", "2003::1",
		"2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8001::", "3ffe:ffff::1",
		"2606:4700:4700::1111%eth0",
	} {
		t.Run(a, func(t *testing.T) {
			t.Parallel()
			if blocked, reason := egress.Classify(netip.MustParseAddr(a)); blocked {
				t.Errorf("Classify(%s) = blocked (%s); want allowed", a, reason)
			}
		})
	}
}

func TestClassifyEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	// Teredo: 2001:0:<server>:<flags>:<port>:<client XOR 0xffffffff>.
	// Server 65.54.227.120 = 4136:e378 (public).
	tests := []struct {
		name    string
		addr    string
		blocked bool
		reason  []string // substrings of the reason
	}{
		{"IPv4-mapped private", "::ffff:10.0.0.5", true, []string{"IPv4-mapped", "10.0.0.5", "private address (RFC 1918)"}},
		{"IPv4-mapped loopback", "::ffff:127.0.0.1", true, []string{"IPv4-mapped", "127.0.0.1", "loopback"}},
		{"IPv4-mapped metadata link-local", "::ffff:169.254.169.254", true, []string{"IPv4-mapped", "169.254.169.254", "link-local"}},
		{"IPv4-mapped public is that IPv4 address", "::ffff:8.8.8.8", false, nil},
		{"NAT64 private", "64:ff9b::a00:5", true, []string{"NAT64", "10.0.0.5", "private address (RFC 1918)"}},
		{"NAT64 loopback", "64:ff9b::7f00:1", true, []string{"NAT64", "127.0.0.1", "loopback"}},
		{"NAT64 public still refused", "64:ff9b::808:808", true, []string{"NAT64", "not dialled"}},
		{"NAT64 local-use private", "64:ff9b:1::a00:5", true, []string{"local-use", "10.0.0.5", "private"}},
		{"NAT64 local-use loopback", "64:ff9b:1:ffff::7f00:1", true, []string{"local-use", "127.0.0.1", "loopback"}},
		{"NAT64 local-use public still refused", "64:ff9b:1::808:808", true, []string{"local-use"}},
		{"6to4 private", "2002:a00:5::1", true, []string{"6to4", "10.0.0.5", "private address (RFC 1918)"}},
		{"6to4 loopback", "2002:7f00:1::", true, []string{"6to4", "127.0.0.1", "loopback"}},
		{"6to4 192.168", "2002:c0a8:101:ffff:ffff:ffff:ffff:ffff", true, []string{"6to4", "192.168.1.1", "private"}},
		{"6to4 public still refused", "2002:808:808::1", true, []string{"6to4", "not dialled"}},
		{"Teredo private client", "2001:0:4136:e378:8000:63bf:f5ff:fffa", true, []string{"Teredo", "client 10.0.0.5", "private"}},
		{"Teredo loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe", true, []string{"Teredo", "client 127.0.0.1", "loopback"}},
		{"Teredo private server", "2001:0:a00:5:8000:63bf:f7f7:f7f7", true, []string{"Teredo", "server 10.0.0.5", "private"}},
		{"Teredo public still refused", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", true, []string{"Teredo", "not dialled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			blocked, reason := egress.Classify(netip.MustParseAddr(tt.addr))
			if blocked != tt.blocked {
				t.Fatalf("Classify(%s) = %v, %q; want blocked=%v", tt.addr, blocked, reason, tt.blocked)
			}
			for _, want := range tt.reason {
				if !strings.Contains(reason, want) {
					t.Errorf("Classify(%s) reason %q; want it to contain %q", tt.addr, reason, want)
				}
			}
		})
	}
}

func TestClassifyInvalid(t *testing.T) {
	t.Parallel()
	if blocked, _ := egress.Classify(netip.Addr{}); !blocked {
		t.Error("Classify(zero Addr) allowed")
	}
}
