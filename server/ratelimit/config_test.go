package ratelimit_test

import (
	"math"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/payhook/payhook/server/ratelimit"
)

func TestNetwork(t *testing.T) {
	t.Parallel()
	rows := []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.0/24"},
		{"203.0.113.255", "203.0.113.0/24"},
		{"::ffff:203.0.113.9", "203.0.113.0/24"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"::1", "::/64"},
	}
	for _, r := range rows {
		if got := ratelimit.Network(netip.MustParseAddr(r.addr)).String(); got != r.want {
			t.Errorf("Network(%s) = %s, want %s", r.addr, got, r.want)
		}
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	d := ratelimit.Limits{}.WithDefaults()
	if d != (ratelimit.Limits{KeyRate: 50, KeyBurst: 100, AnonRate: 10, AnonBurst: 20, InvoiceAddresses: 5, SubscriptionAddresses: 10, TestEvents: 100}) {
		t.Fatalf("defaults: %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if ratelimit.FromFlag(0) != ratelimit.Off || ratelimit.FromFlag(2.5) != 2.5 || ratelimit.FromFlag(7) != 7 {
		t.Fatal("FromFlag: 0 is Off, anything else itself")
	}
	if (ratelimit.Limits{KeyRate: ratelimit.Off}).WithDefaults().Key().On() {
		t.Fatal("an Off key rate limits")
	}
	if l := d.Tests(); l.Burst != 100 || math.Abs(l.Rate*86400-100) > 1e-9 {
		t.Fatalf("the test quota: %+v, want 100 refilled over a day", l)
	}
	for _, bad := range []struct {
		l    ratelimit.Limits
		flag string
	}{
		{ratelimit.Limits{KeyRate: math.NaN()}, "--key-rate"},
		{ratelimit.Limits{AnonRate: math.Inf(1)}, "--anon-rate"},
		{ratelimit.Limits{KeyBurst: -1}, "--key-burst"},
		{ratelimit.Limits{AnonBurst: 2_000_000}, "--anon-burst"},
		{ratelimit.Limits{TestEvents: 2_000_000}, "--test-events-per-day"},
	} {
		if err := bad.l.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), bad.flag) {
			t.Errorf("%+v: %v, want an error naming %s", bad.l, err, bad.flag)
		}
	}
}

// TestHeaders: a result's headers, the same over HTTP and as gRPC
// metadata, and which metadata the REST gateway passes.
func TestHeaders(t *testing.T) {
	t.Parallel()
	ok := ratelimit.Result{Allowed: true, Limit: 100, Remaining: 42, Reset: 1100 * time.Millisecond}
	h := http.Header{}
	ok.SetHeaders(h)
	if h.Get("RateLimit-Limit") != "100" || h.Get("RateLimit-Remaining") != "42" || h.Get("RateLimit-Reset") != "2" || h.Get("Retry-After") != "" {
		t.Fatalf("allowed: %v", h)
	}
	no := ratelimit.Result{Limit: 100, RetryAfter: 20 * time.Millisecond, Reset: 2 * time.Second}
	md := no.Metadata()
	if md.Get("retry-after")[0] != "1" || md.Get("ratelimit-remaining")[0] != "0" || md.Get("ratelimit-reset")[0] != "2" {
		t.Fatalf("refused: %v", md)
	}
	h = http.Header{}
	if !ratelimit.CopyHeaders(h, md) || h.Get("Retry-After") != "1" || h.Get("RateLimit-Limit") != "100" {
		t.Fatalf("copied: %v", h)
	}
	if ratelimit.CopyHeaders(http.Header{}, metadata.MD{"content-type": {"application/grpc"}}) {
		t.Fatal("copied headers from metadata without any")
	}
	for key, want := range map[string]string{"ratelimit-limit": "RateLimit-Limit", "retry-after": "Retry-After", "content-type": "", "grpc-status": ""} {
		if got, ok := ratelimit.HTTPHeader(key); got != want || ok != (want != "") {
			t.Errorf("HTTPHeader(%s) = %q %v, want %q", key, got, ok, want)
		}
	}
}
