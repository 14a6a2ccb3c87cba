package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/payhook/payhook/notifier"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixedStats returns a stats func that always answers st.
func fixedStats(st notifier.QueueStats) func(context.Context) (notifier.QueueStats, error) {
	return func(context.Context) (notifier.QueueStats, error) { return st, nil }
}

// serve starts an httptest server for m's handler, closed with the test.
func serve(t *testing.T, m *Metrics) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// scrape fetches the exposition text over HTTP and checks it was served.
func scrape(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape status %d:\n%s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q", ct)
	}
	return string(body)
}

func TestDeliveries(t *testing.T) {
	t.Parallel()
	m := New(fixedStats(notifier.QueueStats{}), func() int { return 0 })
	m.AttemptFinished("get", "acknowledged", 10*time.Millisecond)
	m.AttemptFinished("get", "acknowledged", 20*time.Millisecond)
	m.AttemptFinished("json", "failed", 1500*time.Millisecond)
	m.AttemptFinished("json", "blocked", time.Millisecond)
	m.AttemptFinished("form", "blocked", 2*time.Millisecond)
	m.AttemptFinished("form", "interrupted", 30*time.Second)
	srv := serve(t, m)

	const want = `
# HELP payhook_deliveries_total Finished webhook delivery attempts, by transport (get, form, json) and outcome (acknowledged, failed, blocked, interrupted).
# TYPE payhook_deliveries_total counter
payhook_deliveries_total{outcome="acknowledged",transport="form"} 0
payhook_deliveries_total{outcome="acknowledged",transport="get"} 2
payhook_deliveries_total{outcome="acknowledged",transport="json"} 0
payhook_deliveries_total{outcome="blocked",transport="form"} 1
payhook_deliveries_total{outcome="blocked",transport="get"} 0
payhook_deliveries_total{outcome="blocked",transport="json"} 1
payhook_deliveries_total{outcome="failed",transport="form"} 0
payhook_deliveries_total{outcome="failed",transport="get"} 0
payhook_deliveries_total{outcome="failed",transport="json"} 1
payhook_deliveries_total{outcome="interrupted",transport="form"} 1
payhook_deliveries_total{outcome="interrupted",transport="get"} 0
payhook_deliveries_total{outcome="interrupted",transport="json"} 0
# HELP payhook_blocked_destinations_total Delivery attempts refused because the callback resolved to a forbidden (private, loopback or special-purpose) address.
# TYPE payhook_blocked_destinations_total counter
payhook_blocked_destinations_total 2
`
	if err := testutil.ScrapeAndCompare(srv.URL, strings.NewReader(want), "payhook_deliveries_total", "payhook_blocked_destinations_total"); err != nil {
		t.Fatal(err)
	}

	body := scrape(t, srv)
	for _, line := range []string{
		`payhook_delivery_attempt_duration_seconds_count{transport="get"} 2`,
		`payhook_delivery_attempt_duration_seconds_count{transport="json"} 2`,
		`payhook_delivery_attempt_duration_seconds_count{transport="form"} 2`,
		`payhook_delivery_attempt_duration_seconds_sum{transport="get"} 0.03`,
		// Buckets are cumulative: 1ms lands in the first bucket, 1.5s in 2.5.
		`payhook_delivery_attempt_duration_seconds_bucket{transport="json",le="0.001"} 1`,
		`payhook_delivery_attempt_duration_seconds_bucket{transport="json",le="1"} 1`,
		`payhook_delivery_attempt_duration_seconds_bucket{transport="json",le="2.5"} 2`,
		// 30s, the egress timeout, still falls in a finite bucket.
		`payhook_delivery_attempt_duration_seconds_bucket{transport="form",le="30"} 2`,
		`# HELP payhook_delivery_attempt_duration_seconds Duration of webhook delivery attempts`,
		`# TYPE payhook_delivery_attempt_duration_seconds histogram`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("exposition lacks %q", line)
		}
	}
}

func TestNotificationsFinished(t *testing.T) {
	t.Parallel()
	m := New(nil, nil)
	m.NotificationFinished("acknowledged")
	m.NotificationFinished("acknowledged")
	m.NotificationFinished("failed")
	m.NotificationFinished("paused") // outside the known set
	const want = `
# HELP payhook_notifications_finished_total Notifications that left the queue on this instance, by final status: acknowledged, or failed (delivery window closed).
# TYPE payhook_notifications_finished_total counter
payhook_notifications_finished_total{status="acknowledged"} 2
payhook_notifications_finished_total{status="failed"} 1
payhook_notifications_finished_total{status="other"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "payhook_notifications_finished_total"); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownLabelsAreBounded(t *testing.T) {
	t.Parallel()
	m := New(nil, nil)
	m.AttemptFinished("carrier-pigeon", "acknowledged", time.Second)
	m.AttemptFinished("get", "in_flight", time.Second)
	m.AttemptFinished("smtp", "lost", time.Second)
	m.AttemptFinished("smtp", "blocked", time.Second)

	for _, c := range []struct {
		transport, outcome string
		want               float64
	}{
		{"other", "acknowledged", 1},
		{"get", "other", 1},
		{"other", "other", 1},
		{"other", "blocked", 1},
	} {
		if got := testutil.ToFloat64(m.deliveries.WithLabelValues(c.transport, c.outcome)); got != c.want {
			t.Errorf("deliveries{%s,%s} = %v, want %v", c.transport, c.outcome, got, c.want)
		}
	}
	if got := testutil.ToFloat64(m.blocked); got != 1 {
		t.Errorf("blocked = %v, want 1", got)
	}
	// 12 known pairs plus the four "other" ones above.
	if n := testutil.CollectAndCount(m.deliveries); n != 16 {
		t.Errorf("%d delivery series, want 16", n)
	}
	// get's duration was still observed for its unknown outcome.
	if n := histogramCount(t, m.Registry(), "get"); n != 1 {
		t.Errorf("get histogram count %d, want 1", n)
	}
}

// histogramCount reads the attempt-duration sample count of one transport.
func histogramCount(t *testing.T, g prometheus.Gatherer, transport string) uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "payhook_delivery_attempt_duration_seconds" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "transport" && l.GetValue() == transport {
					return mt.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	t.Fatalf("no histogram for transport %q", transport)
	return 0
}

func TestQueueGauges(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name  string
		stats notifier.QueueStats
		want  string
	}{
		{
			name:  "every queued status exported, absent ones at zero",
			stats: notifier.QueueStats{ByStatus: map[string]int{"pending": 3}, OldestDue: 1500 * time.Millisecond},
			want: `
payhook_notifications{status="pending"} 3
payhook_notifications{status="retrying"} 0
payhook_oldest_due_notification_age_seconds 1.5
payhook_metrics_scrape_errors_total 0
`,
		},
		{
			name:  "empty queue",
			stats: notifier.QueueStats{},
			want: `
payhook_notifications{status="pending"} 0
payhook_notifications{status="retrying"} 0
payhook_oldest_due_notification_age_seconds 0
payhook_metrics_scrape_errors_total 0
`,
		},
		{
			name:  "status added to the schema later is exported too",
			stats: notifier.QueueStats{ByStatus: map[string]int{"retrying": 2, "paused": 4}},
			want: `
payhook_notifications{status="paused"} 4
payhook_notifications{status="pending"} 0
payhook_notifications{status="retrying"} 2
payhook_oldest_due_notification_age_seconds 0
payhook_metrics_scrape_errors_total 0
`,
		},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, New(fixedStats(r.stats), func() int { return 0 }))
			body := scrape(t, srv)
			for line := range strings.SplitSeq(strings.TrimSpace(r.want), "\n") {
				if !containsLine(body, line) {
					t.Errorf("exposition lacks %q", line)
				}
			}
			if got, want := strings.Count(body, "\npayhook_notifications{"), strings.Count(r.want, "payhook_notifications{"); got != want {
				t.Errorf("%d notification series, want %d", got, want)
			}
		})
	}
}

// containsLine reports whether text has line as a whole line.
func containsLine(text, line string) bool {
	for l := range strings.SplitSeq(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

func TestQueueHelpText(t *testing.T) {
	t.Parallel()
	m := New(fixedStats(notifier.QueueStats{ByStatus: map[string]int{"pending": 1}}), func() int { return 2 })
	const want = `
# HELP payhook_notifications Notifications still to deliver (attempts in flight included), by delivery status (pending, retrying), read from the database at scrape time; a large queue's (100,000 or more, counted in 20 ms or more) at most every 50 times the count's duration (a million rows: about every 14 s).
# TYPE payhook_notifications gauge
payhook_notifications{status="pending"} 1
payhook_notifications{status="retrying"} 0
# HELP payhook_oldest_due_notification_age_seconds How long the oldest due, unclaimed notification has been waiting for a worker (0 when none is due); a growing value means delivery is falling behind.
# TYPE payhook_oldest_due_notification_age_seconds gauge
payhook_oldest_due_notification_age_seconds 0
# HELP payhook_watchers Live WatchDeliveries subscriptions on this instance.
# TYPE payhook_watchers gauge
payhook_watchers 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want),
		"payhook_notifications", "payhook_oldest_due_notification_age_seconds", "payhook_watchers"); err != nil {
		t.Fatal(err)
	}
}

func TestScrapeErrorSkipsQueueGauges(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	stats := func(context.Context) (notifier.QueueStats, error) {
		if down.Load() {
			return notifier.QueueStats{}, errors.New("database is down")
		}
		return notifier.QueueStats{ByStatus: map[string]int{"pending": 1}}, nil
	}
	watchers := 5
	m := New(stats, func() int { return watchers })
	m.AttemptFinished("get", "acknowledged", time.Millisecond)
	srv := serve(t, m)

	for i, wantErrors := range []string{"1", "2"} {
		body := scrape(t, srv)
		for _, line := range []string{
			"payhook_metrics_scrape_errors_total " + wantErrors,
			"payhook_watchers 5",
			`payhook_deliveries_total{outcome="acknowledged",transport="get"} 1`,
		} {
			if !containsLine(body, line) {
				t.Errorf("scrape %d lacks %q", i+1, line)
			}
		}
		for _, name := range []string{"payhook_notifications{", "payhook_oldest_due_notification_age_seconds"} {
			if strings.Contains(body, "\n"+name) {
				t.Errorf("scrape %d has %s despite the failed read", i+1, name)
			}
		}
		if !strings.Contains(body, "\ngo_goroutines ") {
			t.Errorf("scrape %d lacks the Go collector", i+1)
		}
	}

	down.Store(false)
	body := scrape(t, srv)
	for _, line := range []string{
		"payhook_metrics_scrape_errors_total 2",
		`payhook_notifications{status="pending"} 1`,
		`payhook_notifications{status="retrying"} 0`,
		"payhook_oldest_due_notification_age_seconds 0",
	} {
		if !containsLine(body, line) {
			t.Errorf("recovered scrape lacks %q", line)
		}
	}
}

func TestStatsTimeout(t *testing.T) {
	t.Parallel()
	t.Run("New bounds the read with StatsTimeout", func(t *testing.T) {
		t.Parallel()
		var remaining time.Duration
		m := New(func(ctx context.Context) (notifier.QueueStats, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				t.Error("stats called without a deadline")
			}
			remaining = time.Until(dl)
			return notifier.QueueStats{}, nil
		}, nil)
		if _, err := m.Registry().Gather(); err != nil {
			t.Fatal(err)
		}
		if remaining <= 0 || remaining > StatsTimeout {
			t.Fatalf("deadline %v away, want within (0, %v]", remaining, StatsTimeout)
		}
	})
	t.Run("a read that outlives the timeout is a scrape error", func(t *testing.T) {
		t.Parallel()
		c := newQueueCollector(func(ctx context.Context) (notifier.QueueStats, error) {
			<-ctx.Done()
			return notifier.QueueStats{}, ctx.Err()
		}, time.Millisecond)
		const want = `
# HELP payhook_metrics_scrape_errors_total Scrapes whose notification queue read failed or timed out; payhook_notifications and payhook_oldest_due_notification_age_seconds are missing from those scrapes.
# TYPE payhook_metrics_scrape_errors_total counter
payhook_metrics_scrape_errors_total 1
`
		if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNilFeedsAreOmitted(t *testing.T) {
	t.Parallel()
	srv := serve(t, New(nil, nil))
	body := scrape(t, srv)
	for _, name := range []string{"payhook_notifications", "payhook_watchers", "payhook_metrics_scrape_errors_total"} {
		if strings.Contains(body, "\n"+name+" ") || strings.Contains(body, "\n"+name+"{") {
			t.Errorf("exposition has %s without its feed", name)
		}
	}
	if !strings.Contains(body, "\npayhook_blocked_destinations_total 0") {
		t.Error("exposition lacks payhook_blocked_destinations_total")
	}
}

func TestRuntimeCollectors(t *testing.T) {
	t.Parallel()
	body := scrape(t, serve(t, New(nil, nil)))
	want := []string{"go_goroutines", "go_memstats_alloc_bytes", "promhttp_metric_handler_requests_total"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_cpu_seconds_total", "process_open_fds")
	}
	for _, name := range want {
		if !strings.Contains(body, "\n"+name) {
			t.Errorf("exposition lacks %s", name)
		}
	}
}

// TestIndependentRegistries guards against package-level state: two
// instances neither collide on registration nor share values.
func TestIndependentRegistries(t *testing.T) {
	t.Parallel()
	a, b := New(nil, nil), New(nil, nil)
	a.AttemptFinished("get", "blocked", time.Millisecond)
	if got := testutil.ToFloat64(b.blocked); got != 0 {
		t.Fatalf("second instance saw %v blocked attempts", got)
	}
}

func TestLint(t *testing.T) {
	t.Parallel()
	m := New(fixedStats(notifier.QueueStats{}), func() int { return 0 })
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, Namespace+"_") {
			t.Errorf("%s: %s", p.Metric, p.Text)
		}
	}
}

func TestConcurrentObserveAndScrape(t *testing.T) {
	t.Parallel()
	m := New(fixedStats(notifier.QueueStats{}), func() int { return 1 })
	srv := serve(t, m)
	const workers, each = 8, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				m.AttemptFinished("json", "acknowledged", time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	wg.Wait()
	if got := testutil.ToFloat64(m.deliveries.WithLabelValues("json", "acknowledged")); got != workers*each {
		t.Fatalf("counted %v, want %d", got, workers*each)
	}
}

func BenchmarkAttemptFinished(b *testing.B) {
	m := New(fixedStats(notifier.QueueStats{}), func() int { return 0 })
	b.Run("known", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.AttemptFinished("json", "acknowledged", 120*time.Millisecond)
		}
	})
	b.Run("blocked", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.AttemptFinished("get", "blocked", time.Millisecond)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.AttemptFinished("form", "failed", 2*time.Second)
			}
		})
	})
}
