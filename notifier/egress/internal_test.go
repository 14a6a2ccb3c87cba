package egress

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"code.dny.dev/ssrf"
)

// TestLabelsCoverLibrary fails when code.dny.dev/ssrf gains a range that
// Classify cannot name, and checks that every labelled range is denied by
// the library too, so the labels never disagree with the library's verdict
// (IPv4-mapped excepted: Classify judges it as its IPv4 address).
func TestLabelsCoverLibrary(t *testing.T) {
	t.Parallel()
	labelled := map[netip.Prefix]bool{}
	for _, l := range labels {
		labelled[l.prefix] = true
	}
	for _, p := range append(append([]netip.Prefix{}, ssrf.IPv4DeniedPrefixes...), ssrf.IPv6DeniedPrefixes...) {
		if !labelled[p] {
			t.Errorf("code.dny.dev/ssrf denies %s, which has no label", p)
		}
	}
	for _, l := range labels {
		if l.prefix.String() == "::ffff:0:0/96" {
			continue
		}
		first := l.prefix.Masked().Addr()
		if err := guard.SafeAddr(first); err == nil {
			t.Errorf("label %s (%s): library allows %s", l.prefix, l.label, first)
		}
	}
}

func TestGuardedControl(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, network, address string
		reason                 string // substring; empty means allowed
	}{
		{"public IPv4 on 443", "tcp4", "8.8.8.8:443", ""},
		{"public IPv4 on any port", "tcp4", "1.1.1.1:8443", ""},
		{"public IPv4 on port 1", "tcp4", "1.1.1.1:1", ""},
		{"public IPv6 on any port", "tcp6", "[2606:4700:4700::1111]:9999", ""},
		{"private IPv4", "tcp4", "10.0.0.5:80", "10.0.0.5 is a private address (RFC 1918)"},
		{"loopback IPv6", "tcp6", "[::1]:80", "::1 is the loopback address"},
		{"metadata service", "tcp4", "169.254.169.254:80", "link-local"},
		{"NAT64 of loopback", "tcp6", "[64:ff9b::7f00:1]:80", "embedding 127.0.0.1"},
		{"udp refused", "udp4", "8.8.8.8:53", "network udp4 is not tcp4 or tcp6"},
		{"unix refused", "unix", "/tmp/sock", "network unix"},
		{"unparsable address", "tcp4", "example.com:80", "not an IP address and port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := guardedControl(tt.network, tt.address, nil)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("guardedControl(%s, %s) = %v; want allowed", tt.network, tt.address, err)
				}
				return
			}
			var be *BlockedError
			if !errors.As(err, &be) || !strings.Contains(be.Reason, tt.reason) {
				t.Fatalf("guardedControl(%s, %s) = %v; want *BlockedError containing %q", tt.network, tt.address, err, tt.reason)
			}
		})
	}
}

// TestTransports checks the settings that make the client safe: no proxy
// from the environment, no redirects, TLS verification on.
func TestTransports(t *testing.T) {
	t.Parallel()
	c, err := New(Config{AllowPrivate: []string{"http://127.0.0.1:9999/hook"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, hc := range map[string]*http.Client{"guarded": c.guarded, "private": c.private} {
		tr := hc.Transport.(*http.Transport)
		if tr.Proxy != nil {
			t.Errorf("%s: Proxy is set", name)
		}
		if tr.TLSClientConfig == nil || tr.TLSClientConfig.InsecureSkipVerify {
			t.Errorf("%s: TLS verification off", name)
		}
		if hc.CheckRedirect == nil || hc.CheckRedirect(nil, nil) != http.ErrUseLastResponse {
			t.Errorf("%s: redirects would be followed", name)
		}
		if hc.Timeout != DefaultTimeout || tr.ResponseHeaderTimeout != DefaultTimeout || tr.TLSHandshakeTimeout != DefaultTimeout {
			t.Errorf("%s: timeouts %s/%s/%s, want %s", name, hc.Timeout, tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout, DefaultTimeout)
		}
	}
}

// TestErrorsHideThisSide checks that stored errors leave out the URL,
// payhook's own address and its DNS server.
func TestErrorsHideThisSide(t *testing.T) {
	t.Parallel()
	src := &net.TCPAddr{IP: net.ParseIP("10.9.9.9"), Port: 5555}
	dst := &net.TCPAddr{IP: net.ParseIP("203.0.113.7"), Port: 443}
	dns := &net.DNSError{Err: "no such host", Name: "merchant.example", Server: "10.255.255.53:53", IsNotFound: true}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"read error", &url.Error{Op: "Post", URL: "https://merchant.example/cb?secret=x", Err: &net.OpError{Op: "read", Net: "tcp", Source: src, Addr: dst, Err: syscall.ECONNRESET}},
			"read tcp 203.0.113.7:443: connection reset by peer"},
		{"lookup", &url.Error{Op: "Get", URL: "https://merchant.example/cb", Err: &net.OpError{Op: "dial", Net: "tcp", Err: dns}},
			"dial tcp: lookup merchant.example: no such host"},
		{"bare lookup", dns, "lookup merchant.example: no such host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := unwrapURLError(tt.err).Error(); got != tt.want {
				t.Errorf("unwrapURLError = %q, want %q", got, tt.want)
			}
		})
	}
}
