package ratelimit_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/ratebucket"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/ratelimit"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// t0 has a fraction of a second, so the stored time's fraction is read
// back by the refill (SQLite's julianday of the stored text).
var t0 = time.Date(2026, 11, 28, 12, 0, 0, 123456789, time.UTC)

func take(t *testing.T, b *ratelimit.Buckets, key string, l ratelimit.Limit) ratelimit.Result {
	t.Helper()
	r, err := b.Take(context.Background(), key, l)
	if err != nil {
		t.Fatalf("take %s: %v", key, err)
	}
	return r
}

// TestBucket: a bucket starts full, refuses once empty saying when the
// next token comes, refills on the injected clock by the time passed (up to
// its burst), never refills when the clock reads earlier, and is shared by
// two instances on one database.
func TestBucket(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := clock.NewManual(t0)
		a := ratelimit.NewBuckets(db, clk.Now, discard)
		l := ratelimit.Limit{Rate: 2, Burst: 3}
		for i, want := range []int{2, 1, 0} {
			r := take(t, a, "k", l)
			if !r.Allowed || r.Remaining != want || r.Limit != 3 {
				t.Fatalf("take %d: %+v, want allowed with %d left of 3", i, r, want)
			}
		}
		r := take(t, a, "k", l)
		if r.Allowed || r.Remaining != 0 || r.RetryAfter != 500*time.Millisecond || r.Reset != 1500*time.Millisecond {
			t.Fatalf("empty bucket: %+v, want refused, retry after 500ms, full in 1.5s", r)
		}
		// Another key is another bucket.
		if r := take(t, a, "other", l); !r.Allowed || r.Remaining != 2 {
			t.Fatalf("another key: %+v", r)
		}
		// A second instance on the same database shares the bucket.
		b := ratelimit.NewBuckets(db, clk.Now, discard)
		if r := take(t, b, "k", l); r.Allowed || r.RetryAfter != 500*time.Millisecond {
			t.Fatalf("second instance: %+v, want refused like the first", r)
		}
		clk.Advance(250 * time.Millisecond)
		if r := take(t, b, "k", l); r.Allowed || r.RetryAfter != 250*time.Millisecond {
			t.Fatalf("half a token later: %+v, want refused for 250ms more", r)
		}
		clk.Advance(250 * time.Millisecond)
		if r := take(t, b, "k", l); !r.Allowed || r.Remaining != 0 {
			t.Fatalf("a token later: %+v, want allowed with none left", r)
		}
		if r := take(t, a, "k", l); r.Allowed {
			t.Fatalf("the first instance took the token the second took: %+v", r)
		}
		// A clock that reads earlier (another instance's) refills nothing.
		clk.Advance(-time.Hour)
		if r := take(t, a, "k", l); r.Allowed {
			t.Fatalf("an earlier clock refilled the bucket: %+v", r)
		}
		clk.Advance(time.Hour)
		// Refills stop at the burst.
		clk.Advance(time.Hour)
		if r := take(t, a, "k", l); !r.Allowed || r.Remaining != 2 || r.Reset != 500*time.Millisecond {
			t.Fatalf("an hour later: %+v, want allowed with 2 left, full in 500ms", r)
		}
	})
}

// TestBucketConcurrent: concurrent takes of one bucket (two instances on
// one database) allow exactly its burst.
func TestBucketConcurrent(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := clock.NewManual(t0)
		inst := []*ratelimit.Buckets{ratelimit.NewBuckets(db, clk.Now, discard), ratelimit.NewBuckets(db, clk.Now, discard)}
		l := ratelimit.Limit{Rate: 1, Burst: 30}
		var allowed atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 80)
		for i := range 80 {
			wg.Go(func() {
				r, err := inst[i%2].Take(context.Background(), "hot", l)
				if err != nil {
					errs <- err
					return
				}
				if r.Allowed {
					allowed.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if n := allowed.Load(); n != 30 {
			t.Fatalf("%d of 80 concurrent takes allowed, want the burst, 30", n)
		}
	})
}

// TestBucketLimits: a limit that is off takes nothing; one slower than
// MaxRefill is served with the burst that fills within it.
func TestBucketLimits(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	clk := clock.NewManual(t0)
	b := ratelimit.NewBuckets(db, clk.Now, discard)
	for _, l := range []ratelimit.Limit{{}, {Rate: 0, Burst: 5}, {Rate: 5, Burst: 0}, {Rate: -1, Burst: 5}} {
		if r := take(t, b, "off", l); !r.Allowed {
			t.Fatalf("limit %+v is off but refused: %+v", l, r)
		}
	}
	if n, err := db.Client.RateBucket.Query().Count(context.Background()); err != nil || n != 0 {
		t.Fatalf("limits that are off stored %d buckets (%v)", n, err)
	}
	// One token an hour with a burst of 100 would take 100 hours to fill.
	r := take(t, b, "slow", ratelimit.Limit{Rate: 1.0 / 3600, Burst: 100})
	if r.Limit != 24 || r.Remaining != 23 {
		t.Fatalf("slow limit: %+v, want a burst of 24 (a day's refill)", r)
	}
}

// TestBucketPrune: a bucket untouched for a day is deleted (it is full, as
// a missing one is); a recent one stays.
func TestBucketPrune(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		clk := clock.NewManual(t0)
		b := ratelimit.NewBuckets(db, clk.Now, discard)
		l := ratelimit.Limit{Rate: 1, Burst: 2}
		take(t, b, "old", l)
		clk.Advance(23 * time.Hour)
		take(t, b, "recent", l)
		clk.Advance(2 * time.Hour)
		take(t, b, "now", l)
		keys, err := db.Client.RateBucket.Query().Select(ratebucket.FieldKey).Strings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"now", "recent"}) {
			t.Fatalf("buckets after a prune: %v, want now and recent", keys)
		}
	})
}

// TestBucketTakeUpTo: a batch take gets the whole tokens the bucket holds,
// at most the number asked, shares the bucket with single takes and with
// another instance, says when the next token comes when it got none, and
// concurrent batch takes never get more than the bucket held.
func TestBucketTakeUpTo(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := clock.NewManual(t0)
		a := ratelimit.NewBuckets(db, clk.Now, discard)
		l := ratelimit.Limit{Rate: 4, Burst: 4}
		upTo := func(b *ratelimit.Buckets, n, want int, wantRetry time.Duration) {
			t.Helper()
			got, retry, err := b.TakeUpTo(ctx, "e", l, n)
			if err != nil || got != want || retry != wantRetry {
				t.Fatalf("take up to %d: %d, retry %v, %v; want %d, retry %v", n, got, retry, err, want, wantRetry)
			}
		}
		upTo(a, 3, 3, 0) // a new bucket is full
		upTo(a, 3, 1, 0) // what is left
		upTo(a, 3, 0, 250*time.Millisecond)
		clk.Advance(600 * time.Millisecond) // 2.4 tokens: 2 whole
		b := ratelimit.NewBuckets(db, clk.Now, discard)
		upTo(b, 5, 2, 0)
		if r := take(t, a, "e", l); r.Allowed {
			t.Fatalf("a single take got a token the batch took: %+v", r)
		}
		clk.Advance(time.Hour)
		if r := take(t, a, "e", l); !r.Allowed || r.Remaining != 3 {
			t.Fatalf("after an hour: %+v, want allowed with 3 left", r)
		}
		upTo(a, 10, 3, 0)
		if got, _, err := a.TakeUpTo(ctx, "off", ratelimit.Limit{}, 7); err != nil || got != 7 {
			t.Fatalf("no limit: %d, %v; want all 7", got, err)
		}

		// Concurrent batch takes of a fresh bucket share its burst.
		clk.Advance(time.Hour)
		var total atomic.Int64
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := ratelimit.NewBuckets(db, clk.Now, discard)
				got, _, err := c.TakeUpTo(ctx, "shared", ratelimit.Limit{Rate: 1, Burst: 10}, 4)
				if err != nil {
					t.Errorf("concurrent take: %v", err)
				}
				total.Add(int64(got))
			}()
		}
		wg.Wait()
		if total.Load() != 10 {
			t.Fatalf("concurrent batch takes got %d tokens of a bucket of 10", total.Load())
		}
	})
}
