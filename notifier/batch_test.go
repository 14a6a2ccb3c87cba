package notifier

import (
	"runtime"
	"testing"
	"time"
)

// TestRecorderBatchesUnderLoadOnly drives the recorder's batching
// (batchResults) with a linger the test fires itself: results already
// waiting are written together at once, at most maxRecordBatch; after a
// batch of lingerAfter or more the next one waits for the linger and takes
// what arrives meanwhile; after a small batch a result is written alone at
// once, with no linger; closing the input ends the loop.
func TestRecorderBatchesUnderLoadOnly(t *testing.T) {
	t.Parallel()
	in := make(chan result, 2*maxRecordBatch)
	written := make(chan int, 16)
	lingers := make(chan chan time.Time, 4)
	// Waiting results, before the recorder starts.
	for range maxRecordBatch + lingerAfter {
		in <- result{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		batchResults(in, func(b []result) { written <- len(b) }, func() (<-chan time.Time, func() bool) {
			c := make(chan time.Time, 1)
			lingers <- c
			return c, func() bool { return true }
		})
	}()
	expect := func(want int) {
		t.Helper()
		select {
		case n := <-written:
			if n != want {
				t.Fatalf("a batch of %d, want %d", n, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no batch written, want one of %d", want)
		}
	}
	nextLinger := func() chan time.Time {
		t.Helper()
		select {
		case c := <-lingers:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("the recorder did not linger after a large batch")
			return nil
		}
	}
	// taken returns once the recorder has received everything sent.
	taken := func() {
		for len(in) > 0 {
			runtime.Gosched()
		}
	}

	expect(maxRecordBatch) // no linger before the first batch
	// The batch was large: the next (the lingerAfter results left, and two
	// more sent while it waits) is written when the linger fires.
	linger := nextLinger()
	in <- result{}
	in <- result{}
	taken()
	select {
	case n := <-written:
		t.Fatalf("a batch of %d written before the linger fired", n)
	default:
	}
	linger <- time.Time{}
	expect(lingerAfter + 2)
	// Still large: the next one lingers too, even for one result.
	in <- result{}
	linger = nextLinger()
	taken()
	linger <- time.Time{}
	expect(1)
	// Light load now: written at once, alone, without a linger.
	in <- result{}
	expect(1)
	if len(lingers) != 0 {
		t.Fatal("the recorder lingered after a small batch")
	}
	close(in)
	<-done
}
