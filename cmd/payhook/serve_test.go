package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeRefusesWithoutChains: serve without --dev and without any node
// does not start, and says what to give.
func TestServeRefusesWithoutChains(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"serve", "--db", "sqlite:" + filepath.Join(dir, "p.db"), "--seed-file", filepath.Join(dir, "seed"),
		"--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--node") || !strings.Contains(err.Error(), "--dev") {
		t.Fatalf("serve without chains: %v", err)
	}
}
