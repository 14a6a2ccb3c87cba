//go:build !faults

package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine started by a test outlives it.
// The fault tests (-tags faults) have their own, which builds the binary.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
