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
	if got := TuneGC(DefaultGCPercent); got != 150 || debug.SetGCPercent(150) != 150 {
		t.Fatalf("with GOGC=150, TuneGC = %d, want the 150 in effect", got)
	}
	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	if got := TuneGC(DefaultGCPercent); got != DefaultGCPercent || debug.SetGCPercent(100) != DefaultGCPercent {
		t.Fatalf("without GOGC, TuneGC = %d, want %d in effect", got, DefaultGCPercent)
	}
}
