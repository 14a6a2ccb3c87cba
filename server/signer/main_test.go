package signer_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
