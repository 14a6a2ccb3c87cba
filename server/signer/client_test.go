package signer_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/signer"
)

// TestClientSignerDown: a signer that cannot be reached is
// ErrSignerUnavailable of kind Unavailable, so that an API call needing it
// (a Solana address on a server without the seed) answers 503, not 500,
// and the outbound engine retries rather than fails.
func TestClientSignerDown(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close() // nothing listens there any more
	c, err := signer.Dial(signer.ClientConfig{URL: "https://" + addr, Cert: cert, Key: key, CA: ca.file, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	sol, _ := family.DefaultRegistry().Lookup("sol")
	_, err = c.OperatorAddress(context.Background(), sol)
	if !errors.Is(err, chains.ErrSignerUnavailable) || kind.Of(err) != kind.Unavailable {
		t.Errorf("a signer that is down: %v (kind %v), want ErrSignerUnavailable of kind Unavailable", err, kind.Of(err))
	}
}
