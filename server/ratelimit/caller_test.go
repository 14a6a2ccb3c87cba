package ratelimit_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ratelimit"
)

// TestCallerAddr: a direct gRPC client's address is its peer's, whatever
// metadata it sends naming another (a guessed token, an address); without
// a peer there is none.
func TestCallerAddr(t *testing.T) {
	t.Parallel()
	l, err := ratelimit.New(storetest.Open(t, store.SQLite), ratelimit.Config{}, discard)
	if err != nil {
		t.Fatal(err)
	}
	forged := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		"payhook-limiter-token", "guess", "payhook-client-addr", "203.0.113.9", "x-forwarded-for", "203.0.113.9"))
	if a, ok := l.CallerAddr(forged); ok {
		t.Fatalf("no peer: %v", a)
	}
	ctx := peer.NewContext(forged, &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("198.51.100.7"), Port: 4242}})
	if a, ok := l.CallerAddr(ctx); !ok || a.String() != "198.51.100.7" {
		t.Fatalf("peer 198.51.100.7 naming 203.0.113.9: %v %v", a, ok)
	}
}
