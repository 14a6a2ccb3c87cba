package retention_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/retention"
)

// scaleRows is how many old notifications TestRetentionScale stores (each
// with an attempt and a delivery event): PAYHOOK_RETENTION_ROWS, 30,000
// by default (the suite's share of a two-core machine; docs/benchmarks.md
// has the run with a million).
func scaleRows(t *testing.T) int {
	if v := os.Getenv("PAYHOOK_RETENTION_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10000 {
			t.Fatalf("PAYHOOK_RETENTION_ROWS=%q: want a number of at least 10000", v)
		}
		return n
	}
	return 30_000
}

// TestRetentionScale, on PostgreSQL: with many finished notifications
// older than the age (each with its attempt and delivery event) and one in
// a hundred still to deliver, a run deletes exactly the finished ones, in
// batches that each read one primary-key range (EXPLAIN: an index scan,
// never a sequential one), while a live dispatcher delivers notifications
// stored meanwhile, every one acknowledged; after a vacuum (autovacuum's
// work), three waves stored and deleted the same way leave the tables no
// larger with the third than with the second (a btree's emptied pages are
// recycled a vacuum later). The batch durations and the live
// deliveries' latency before and during the run are logged: they are
// benchmark figures (docs/benchmarks.md), not assertions.
func TestRetentionScale(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	n := scaleRows(t)
	now := clock.UTC()
	old := now.Add(-100 * 24 * time.Hour)

	// A live dispatcher, delivering to a loopback receiver.
	key, _, _, err := signer.GenerateRSAKey(2048)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[string]time.Time{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		acked[r.URL.Query().Get("n")] = clock.Now()
		mu.Unlock()
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(rcv.Close)
	hook := rcv.URL + "/hook"
	var nt *notifier.Notifier
	nt, err = notifier.New(db, notifier.Config{
		Delivery:     notifier.Delivery{AttemptTimeout: 5 * time.Second, AllowPrivateEndpoints: []string{"1=" + hook}},
		Signers:      []signer.Signer{signer.NewRSASigner(key)},
		PollInterval: 50 * time.Millisecond,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := nt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nt.Stop)
	// live stores one notification every 10 ms until stop (or, with
	// count above 0, count of them), and returns each one's store time.
	live := func(stop <-chan struct{}, count int) map[string]time.Time {
		stored := map[string]time.Time{}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for count <= 0 || len(stored) < count {
			select {
			case <-stop:
				return stored
			case <-tick.C:
			}
			id := uuid.NewString()
			req, err := payload.Encode(hook+"?n="+id, payload.TransportGET, []payload.Field{payload.String("uuid", id)}, nil)
			if err != nil {
				t.Error(err)
				return stored
			}
			at := clock.Now()
			if err := store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
				_, err := nt.Queue.Enqueue(ctx, tx, notifier.Message{UUID: id, Owner: 1, Request: req, Signing: notifier.Signing{Scheme: signer.SchemeRSASHA256},
					Subject: notifier.Subject{Service: "bench", Event: "live"}})
				return err
			}); err != nil {
				t.Error(err)
				return stored
			}
			stored[id] = at
		}
		return stored
	}
	// latency waits until every stored one is acknowledged and returns
	// their p50 and p99.
	latency := func(stored map[string]time.Time) (time.Duration, time.Duration) {
		t.Helper()
		deadline := clock.Now().Add(time.Minute)
		poll := time.NewTicker(20 * time.Millisecond)
		defer poll.Stop()
		for range poll.C {
			mu.Lock()
			var ds []time.Duration
			for id, at := range stored {
				if a, ok := acked[id]; ok {
					ds = append(ds, a.Sub(at))
				}
			}
			mu.Unlock()
			if len(ds) == len(stored) {
				slices.Sort(ds)
				return ds[len(ds)/2], ds[len(ds)*99/100]
			}
			if clock.Now().After(deadline) {
				t.Fatalf("%d of %d live notifications acknowledged", len(ds), len(stored))
			}
		}
		return 0, 0
	}

	sizes := func() int64 {
		t.Helper()
		var total int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT pg_total_relation_size('notifications') + pg_total_relation_size('delivery_attempts') + pg_total_relation_size('delivery_events')`).Scan(&total); err != nil {
			t.Fatal(err)
		}
		return total
	}
	vacuum := func() {
		t.Helper()
		for _, tbl := range []string{"notifications", "delivery_attempts", "delivery_events"} {
			if _, err := db.SQL.ExecContext(ctx, "VACUUM "+tbl); err != nil {
				t.Fatal(err)
			}
		}
	}

	var batches []time.Duration
	var bmu sync.Mutex
	job := retention.New(retention.Config{DB: db.Client, Now: func() time.Time { return now }, Observe: func(_ string, _ int, took time.Duration) {
		bmu.Lock()
		batches = append(batches, took)
		bmu.Unlock()
	}})

	var sized []int64 // the tables' size with each wave stored
	for wave := 1; wave <= 3; wave++ {
		seedStart := clock.Now()
		keep := seed(t, db.SQL, n, old)
		seeded := sizes()
		t.Logf("wave %d: %d old notifications, attempts and delivery events stored in %v; tables %d MiB", wave, n, clock.Now().Sub(seedStart).Round(time.Millisecond), seeded>>20)
		sized = append(sized, seeded)
		if wave == 1 {
			explainBatch(t, db.SQL, deliveryBatch, "")
		}

		// Live deliveries alone (five seconds' worth), then during the run.
		baseline := live(nil, 500)
		p50, p99 := latency(baseline)
		stop := make(chan struct{})
		done := make(chan map[string]time.Time)
		go func() { done <- live(stop, 0) }()
		batches = nil
		runStart := clock.Now()
		res, err := job.Run(ctx)
		took := clock.Now().Sub(runStart)
		close(stop)
		during := <-done
		if err != nil {
			t.Fatal(err)
		}
		dp50, dp99 := latency(during)
		want := n - len(keep)
		if res.Notifications != want || res.Attempts != want {
			t.Fatalf("wave %d: deleted %d notifications and %d attempts, want %d", wave, res.Notifications, res.Attempts, want)
		}
		left, err := db.Client.Notification.Query().Where(notification.CreatedAtLT(now.Add(-retention.DefaultAge))).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(left)
		if !slices.Equal(left, keep) {
			t.Fatalf("wave %d: %d old notifications left, want the %d still to deliver", wave, len(left), len(keep))
		}
		bmu.Lock()
		bs := slices.Clone(batches)
		bmu.Unlock()
		slices.Sort(bs)
		t.Logf("wave %d: run %v, %d batches (p50 %v, p99 %v, max %v); live deliveries %d before (p50 %v, p99 %v), %d during (p50 %v, p99 %v)",
			wave, took.Round(time.Millisecond), len(bs), bs[len(bs)/2].Round(time.Microsecond), bs[len(bs)*99/100].Round(time.Microsecond), bs[len(bs)-1].Round(time.Microsecond),
			len(baseline), p50.Round(time.Microsecond), p99.Round(time.Microsecond), len(during), dp50.Round(time.Microsecond), dp99.Round(time.Microsecond))

		// The ones still to deliver finish; autovacuum's work is done.
		if _, err := db.Client.Notification.Update().Where(notification.IDIn(keep...)).
			ClearNextAttemptAt().SetStatus(notification.StatusFailed).Save(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := job.Run(ctx); err != nil {
			t.Fatal(err)
		}
		// The live rows go too (finished, and younger than the age), so the
		// next wave's old rows come first in id order, as time order.
		if _, err := db.SQL.ExecContext(ctx, `DELETE FROM delivery_attempts WHERE notification_id IN (SELECT id FROM notifications WHERE uuid NOT LIKE 'old-%');
DELETE FROM delivery_events WHERE uuid NOT LIKE 'old-%'; DELETE FROM notifications WHERE uuid NOT LIKE 'old-%'`); err != nil {
			t.Fatal(err)
		}
		vacuum()
	}
	// A btree's emptied pages are recycled from the vacuum after the one
	// that emptied them: from the third wave on, a wave fits in the space
	// the earlier ones left.
	t.Logf("tables: %d, %d and %d MiB with each wave stored", sized[0]>>20, sized[1]>>20, sized[2]>>20)
	if sized[2] > sized[1]+sized[1]/10 {
		t.Fatalf("the tables grew from %d to %d MiB from the second wave to the third, each deleted like the first", sized[1]>>20, sized[2]>>20)
	}
}

// seed stores n finished notifications created at old and after (one per
// millisecond), one in a hundred still retrying, each with one attempt and
// one delivery event, in three statements; it returns the ids of the
// retrying ones, in order.
func seed(t *testing.T, db *sql.DB, n int, old time.Time) []int64 {
	t.Helper()
	ctx := context.Background()
	var from int64
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM notifications`).Scan(&from); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `
INSERT INTO notifications (uuid, owner_id, method, url, body, status, attempts, expires_at, next_attempt_at, created_at, updated_at, host, service, event)
SELECT 'old-' || gen_random_uuid(), 1, 'GET', 'https://shop.example/hook?i=' || g, ''::bytea,
       CASE WHEN g % 100 = 0 THEN 'retrying' ELSE 'acknowledged' END, 1,
       $2::timestamptz + interval '48 hours', CASE WHEN g % 100 = 0 THEN now() + interval '1 hour' END,
       $2::timestamptz + g * interval '1 millisecond', $2::timestamptz + g * interval '1 millisecond',
       'shop.example:443', 'bench', 'bench'
FROM generate_series(1, $1::int) g`, n, old); err != nil {
		t.Fatalf("seed notifications: %v", err)
	}
	if _, err := db.ExecContext(ctx, `
INSERT INTO delivery_attempts (notification_id, number, started_at, finished_at, request_method, request_url, outcome, response_status)
SELECT n.id, 1, n.created_at, n.created_at, n.method, n.url, 'acknowledged', 200 FROM notifications n WHERE n.id > $1`, from); err != nil {
		t.Fatalf("seed attempts: %v", err)
	}
	if _, err := db.ExecContext(ctx, `
INSERT INTO delivery_events (notification_id, owner_id, uuid, kind, delivery_status, created_at)
SELECT n.id, n.owner_id, n.uuid, 'created', 'pending', n.created_at FROM notifications n WHERE n.id > $1`, from); err != nil {
		t.Fatalf("seed delivery events: %v", err)
	}
	if _, err := db.ExecContext(ctx, `ANALYZE notifications; ANALYZE delivery_attempts; ANALYZE delivery_events`); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id FROM notifications WHERE id > $1 AND status = 'retrying' ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keep []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		keep = append(keep, id)
	}
	return keep
}

// deliveryBatch are the reads and deletes of a batch of delivery records.
var deliveryBatch = []string{
	`SELECT id, created_at, status, next_attempt_at, lease_until, endpoint_id FROM notifications WHERE id > 1000 ORDER BY id LIMIT 1000`,
	`SELECT id, created_at FROM delivery_events WHERE id > 1000 ORDER BY id LIMIT 1000`,
	`DELETE FROM delivery_attempts WHERE notification_id IN (1001, 1002, 1003)`,
	`DELETE FROM notifications WHERE id IN (1001, 1002, 1003) AND next_attempt_at IS NULL`,
}

// explainBatch checks that each of queries is an index scan (on index,
// when not empty), never a sequential one.
func explainBatch(t *testing.T, db *sql.DB, queries []string, index string) {
	t.Helper()
	for _, q := range queries {
		rows, err := db.QueryContext(context.Background(), "EXPLAIN "+q)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "Seq Scan") || !strings.Contains(text, "Index") || !strings.Contains(text, index) {
			t.Errorf("%s\nis not an index scan (of %q):\n%s", q, index, text)
		}
	}
}
