//go:build !faults

package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine started by a test outlives it.
// The fault tests (-tags faults) have their own, which builds the binary.
// The admin commands that write a secret read the seed as `payhook serve`
// does: the package's tests share one, in PAYHOOK_SEED_FILE.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "payhook-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	seed := make([]byte, 32)
	_, _ = rand.Read(seed)
	path := filepath.Join(dir, "payhook.seed")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(seed)+"\n"), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("PAYHOOK_SEED_FILE", path); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
