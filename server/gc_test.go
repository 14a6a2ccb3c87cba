package server

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestTuneGC: without GOGC in the environment the collector's target
// becomes the one asked for; with GOGC set, the one in effect stays. (Not
// parallel: the target and the environment are the process's.)
func TestTuneGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOGC", "150") // restored after the test
	debug.SetGCPercent(150) // as the runtime read it at start
	if TuneGC(DefaultGCPercent) || debug.SetGCPercent(150) != 150 {
		t.Fatal("with GOGC=150, TuneGC changed the collector's target")
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	if !TuneGC(DefaultGCPercent) || debug.SetGCPercent(100) != DefaultGCPercent {
		t.Fatalf("without GOGC, the target is not %d", DefaultGCPercent)
	}
}
