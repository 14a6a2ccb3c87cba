package server

import (
	"os"
	"runtime/debug"
)

// DefaultGCPercent is the Go collector's target `payhook serve` runs with
// when the environment does not set GOGC: a collection once the heap has
// grown by twice what the last one left live, instead of Go's once (100).
// payhook's live heap is small and its allocation rate follows the payments
// and callbacks it handles, so the collector's CPU is proportional to the
// rate divided by this target: at 200 it costs half as much, for a peak heap
// about a third larger (docs/decisions.md, "The collector runs at GOGC=200";
// docs/benchmarks.md measures both). GOGC, when set, wins, as does a
// GOMEMLIMIT the operator sets for a small machine.
const DefaultGCPercent = 200

// TuneGC sets the collector's target to percent unless GOGC is set in the
// environment (the runtime applied it at start), and reports whether it did.
func TuneGC(percent int) bool {
	if _, set := os.LookupEnv("GOGC"); set {
		return false
	}
	debug.SetGCPercent(percent)
	return true
}
