package notifier

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
)

// TestPercentile: nearest rank, on sorted durations.
func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	twenty := ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20)
	for _, tc := range []struct {
		name   string
		values []time.Duration
		p      float64
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one value is every percentile", ms(7), 95, 7 * time.Millisecond},
		{"median of four is the second", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"median of five is the third", ms(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"p95 of twenty is the nineteenth", twenty, 95, 19 * time.Millisecond},
		{"p95 of ten is the tenth", twenty[:10], 95, 10 * time.Millisecond},
		{"p100 is the largest", twenty, 100, 20 * time.Millisecond},
		{"a tiny p is the smallest", twenty, 0.01, 1 * time.Millisecond},
	} {
		if got := Percentile(tc.values, tc.p); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestReadActivity: attempts at chosen times land in the clock hour they
// started in, over the 48 hours ending with now's hour; the window's edges
// are exact; another owner's attempts are not counted; latency figures are
// of acknowledged and failed attempts only.
func TestReadActivity(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d, "http://127.0.0.1:1/hook")
		ctx := context.Background()
		mine := f.enqueue(t, f.envelope("pending", payload.TransportJSON))
		m := f.message(t, f.envelope("pending", payload.TransportJSON))
		m.Owner = f.keyID + 1
		theirs, err := f.n.Queue.EnqueueNow(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		number := map[int64]int{}
		add := func(owner int64, at time.Time, outcome deliveryattempt.Outcome, durationMs int64) {
			t.Helper()
			row := mine
			if owner != f.keyID {
				row = theirs
			}
			number[row.ID]++
			if err := f.db.Client.DeliveryAttempt.Create().SetNotificationID(row.ID).SetNumber(number[row.ID]).
				SetStartedAt(at).SetRequestMethod("POST").SetRequestURL(f.hook).
				SetOutcome(outcome).SetDurationMs(durationMs).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC)
		from := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)                       // 48 clock hours before 13:00
		add(f.keyID, from.Add(-time.Second), deliveryattempt.OutcomeAcknowledged, 1) // before the window
		add(f.keyID, from, deliveryattempt.OutcomeAcknowledged, 100)                 // first hour, first instant
		add(f.keyID, from.Add(59*time.Minute), deliveryattempt.OutcomeFailed, 300)
		for i := 1; i <= 20; i++ { // 11:00-12:00: 20 acknowledged, 10..200 ms
			add(f.keyID, time.Date(2026, 11, 24, 11, i, 0, 0, time.UTC), deliveryattempt.OutcomeAcknowledged, int64(10*i))
		}
		add(f.keyID, time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), deliveryattempt.OutcomeFailed, 30_000)
		add(f.keyID, time.Date(2026, 11, 24, 12, 5, 0, 0, time.UTC), deliveryattempt.OutcomeBlocked, 0)
		add(f.keyID, time.Date(2026, 11, 24, 12, 10, 0, 0, time.UTC), deliveryattempt.OutcomeInterrupted, 90_000)
		add(f.keyID, time.Date(2026, 11, 24, 12, 29, 0, 0, time.UTC), deliveryattempt.OutcomeInFlight, 0)
		add(f.keyID, time.Date(2026, 11, 24, 12, 45, 0, 0, time.UTC), deliveryattempt.OutcomeAcknowledged, 40) // later in now's hour
		add(f.keyID, time.Date(2026, 11, 24, 13, 0, 0, 0, time.UTC), deliveryattempt.OutcomeAcknowledged, 1)   // the next hour
		add(f.keyID+1, time.Date(2026, 11, 24, 12, 15, 0, 0, time.UTC), deliveryattempt.OutcomeFailed, 5)      // another owner's

		a, err := ReadActivity(ctx, f.db.Client, f.keyID, now, 48)
		if err != nil {
			t.Fatal(err)
		}
		if !a.From.Equal(from) || !a.Until.Equal(from.Add(48*time.Hour)) || len(a.Hours) != 48 || a.Truncated {
			t.Fatalf("window %s..%s, %d hours, truncated %v", a.From, a.Until, len(a.Hours), a.Truncated)
		}
		for i, h := range a.Hours {
			if want := from.Add(time.Duration(i) * time.Hour); !h.Start.Equal(want) {
				t.Fatalf("hour %d starts %s, want %s", i, h.Start, want)
			}
		}
		ms := time.Millisecond
		show := func(h ActivityHour) string {
			return fmt.Sprintf("ack %d failed %d blocked %d interrupted %d in-flight %d; timed %d p50 %s p95 %s max %s",
				h.Acknowledged, h.Failed, h.Blocked, h.Interrupted, h.InFlight, h.Timed, h.P50, h.P95, h.Max)
		}
		for _, tc := range []struct {
			name string
			got  ActivityHour
			want ActivityHour
		}{
			{"first hour", a.Hours[0], ActivityHour{Acknowledged: 1, Failed: 1, Timed: 2, P50: 100 * ms, P95: 300 * ms, Max: 300 * ms}},
			{"an empty hour", a.Hours[1], ActivityHour{}},
			{"11:00", a.Hours[46], ActivityHour{Acknowledged: 20, Timed: 20, P50: 100 * ms, P95: 190 * ms, Max: 200 * ms}},
			{"now's hour", a.Hours[47], ActivityHour{Acknowledged: 1, Failed: 1, Blocked: 1, Interrupted: 1, InFlight: 1, Timed: 2, P50: 40 * ms, P95: 30 * time.Second, Max: 30 * time.Second}},
			{"total", a.Total, ActivityHour{Acknowledged: 22, Failed: 2, Blocked: 1, Interrupted: 1, InFlight: 1, Timed: 24, P50: 100 * ms, P95: 300 * ms, Max: 30 * time.Second}},
		} {
			tc.want.Start = tc.got.Start
			if tc.got != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.name, show(tc.got), show(tc.want))
			}
		}
		if got := a.Total.Finished(); got != 26 {
			t.Errorf("finished %d, want 26", got)
		}

		empty, err := ReadActivity(ctx, f.db.Client, f.keyID+2, now, 48)
		if err != nil || len(empty.Hours) != 48 || empty.Total.Finished()+empty.Total.InFlight != 0 {
			t.Fatalf("an owner without attempts: %+v %v", empty, err)
		}
		if _, err := ReadActivity(ctx, f.db.Client, f.keyID, now, 0); !errors.Is(err, ErrInvalidFilter) {
			t.Fatalf("0 hours: %v", err)
		}
	})
}

// TestQueueDepthOfALargeQueueIsCountedAtAPace: a count that found a large
// queue and took long is reused until 50 times its duration has passed,
// then counted again; a smaller queue is counted at every call, however
// long its count took (a loaded machine can take 20 ms to count one row),
// and so is a large one counted quickly.
func TestQueueDepthOfALargeQueueIsCountedAtAPace(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d, "http://192.0.2.1:9/hook") // never dialled
		ctx := context.Background()
		pending := func() int {
			t.Helper()
			st, err := f.n.Queue.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st.ByStatus["pending"]
		}
		q := &f.n.Queue.depth
		// set makes the last count look as if it had found total pending
		// rows and taken took, ago before now.
		set := func(total int, took, ago time.Duration) {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.byStatus, q.took, q.at = map[string]int{"pending": total}, took, clock.Now().Add(-ago)
		}
		want := 0
		add := func() {
			t.Helper()
			f.enqueue(t, f.envelope("pending", payload.TransportGET))
			want++
		}
		add()
		if n := pending(); n != want {
			t.Fatalf("%d pending, want %d", n, want)
		}
		for _, tc := range []struct {
			name   string
			total  int
			took   time.Duration
			ago    time.Duration
			reused bool
		}{
			{"a small queue counted slowly, just now", depthCacheRows - 1, time.Second, 0, false},
			{"a large queue counted quickly, just now", depthCacheRows, depthCacheFrom - time.Millisecond, 0, false},
			{"a large queue counted in a second, just now", depthCacheRows, time.Second, 0, true},
			{"a large queue counted in a second, 49 s ago", depthCacheRows, time.Second, 49 * time.Second, true},
			{"a large queue counted in a second, 50 s ago", depthCacheRows, time.Second, 50 * time.Second, false},
		} {
			set(tc.total, tc.took, tc.ago)
			add()
			got := pending()
			switch {
			case tc.reused && got != tc.total:
				t.Fatalf("%s: %d pending, want the last count (%d)", tc.name, got, tc.total)
			case !tc.reused && got != want:
				t.Fatalf("%s: %d pending, want a new count (%d)", tc.name, got, want)
			}
		}
	})
}
