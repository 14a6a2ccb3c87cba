package notifier

import (
	"context"
	stdsql "database/sql"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
)

// TestClaimUsesIndex guards the plans of the queue's hot queries: with a
// large table (200,000 finished rows, 20,000 scheduled for later, a few due)
// PostgreSQL must find due work, and count the queue for the metrics,
// through the partial indexes of rows still to deliver, not by scanning the
// table.
func TestClaimUsesIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, store.Postgres)
	clk := clock.NewManual(t0)
	// Bulk rows straight in SQL: this measures the plan, not the API. A
	// tenth of them belong to a sequence, as a payment's callbacks do.
	const cols = `created_at, updated_at, uuid, topic, subject, host, event, method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, owner_id, sequence`
	const seq = `CASE WHEN g % 10 = 0 THEN 'address-payment:' || g END`
	for _, q := range []string{
		`INSERT INTO notifications (` + cols + `)
			SELECT now(), now(), 'done-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', CASE WHEN g % 10 = 0 THEN 'failed' ELSE 'acknowledged' END, 1, NULL, now(), 7, ` + seq + ` FROM generate_series(1, 200000) g`,
		`INSERT INTO notifications (` + cols + `)
			SELECT now(), now(), 'later-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', 'retrying', 1, now() + interval '1 hour', now() + interval '2 days', 7, ` + seq + ` FROM generate_series(1, 20000) g`,
		`INSERT INTO notifications (` + cols + `)
			SELECT now(), now(), 'due-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', 'pending', 0, now() - interval '1 second', now() + interval '2 days', 7, ` + seq + ` FROM generate_series(1, 50) g`,
		// First attempts parked over the next minute, a hundred destinations.
		`INSERT INTO notifications (` + cols + `)
			SELECT now(), now(), 'parked-' || g, 'btc', 'a', 'p' || (g % 100) || ':80', 'confirmed', 'GET', 'http://p/', '', '', '', '', 'pending', 0, now() + (g % 60) * interval '1 second', now() + interval '2 days', 7, NULL FROM generate_series(1, 10000) g`,
		"ANALYZE notifications",
	} {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// Capture the SQL and arguments of the real claim query.
	var mu sync.Mutex
	var query, sequenceQuery, statsQuery, pullQuery string
	var args, sequenceArgs, statsArgs, pullArgs []any
	// Whether the transaction that counted the queue depth ran alone (no
	// parallel workers: store.OneProcess) before it counted.
	var txAlone, statsAlone bool
	drv := captureDriver{Driver: entsql.OpenDB(dialect.Postgres, db.SQL), f: func(q string, a any) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case q == "BEGIN":
			txAlone = false
		case strings.Contains(q, "max_parallel_workers_per_gather"):
			txAlone = true
		case strings.Contains(q, "FOR UPDATE SKIP LOCKED"):
			query, args = q, a.([]any)
		case strings.Contains(q, "CROSS JOIN LATERAL"):
			sequenceQuery, sequenceArgs = q, a.([]any)
		case strings.Contains(q, "GROUP BY"):
			statsQuery, statsArgs, statsAlone = q, a.([]any), txAlone
		case strings.Contains(q, `"notifications"."attempts" = 0`) && strings.Contains(q, `"notifications"."host" = `):
			pullQuery, pullArgs = q, a.([]any)
		}
	}}
	logged := &store.DB{SQL: db.SQL, Dialect: db.Dialect, Client: entdb.NewClient(entdb.Driver(drv))}
	n, err := New(logged, Config{Delivery: Delivery{AttemptTimeout: time.Second}, Now: clk.Now}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	d := n.Dispatcher
	clk.Set(clock.Now())
	d.mu.Lock()
	capa := d.capacity()
	d.mu.Unlock()
	capa.free = 64
	if _, err := d.claim(ctx, capa, []string{"x:1"}, []string{"address-payment:1"}, []int64{1}); err != nil {
		t.Fatal(err)
	}
	// The check a notification of a sequence makes when it is stored (is
	// an earlier one due?).
	d.mu.Lock()
	d.handOff = true
	d.mu.Unlock()
	tx, err := logged.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seqKey := "address-payment:7"
	held, err := d.claimStored(ctx, tx, []*entdb.Notification{{Sequence: &seqKey, Host: "h:80"}}, nil)
	_ = tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	d.abandon(held)

	// A parked destination's first attempts are pulled forward by a probe
	// of the parked index, not a scan of every parked row.
	if pulled, err := d.pull(ctx, "p7:80", 1, clk.Now()); err != nil || pulled != 1 {
		t.Fatalf("pulled %d (%v), want 1", pulled, err)
	}

	// The metrics' queue depth counts the queue alone, not the 200,000
	// finished rows.
	st, err := n.Queue.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ByStatus) != 2 || st.ByStatus["pending"] != 10050 || st.ByStatus["retrying"] != 20000 {
		t.Fatalf("queue depth %v, want 10,050 pending and 20,000 retrying", st.ByStatus)
	}

	mu.Lock()
	defer mu.Unlock()
	if query == "" || sequenceQuery == "" || statsQuery == "" || pullQuery == "" {
		t.Fatalf("queries not captured: claim %q, sequence check %q, queue depth %q, pull %q", query, sequenceQuery, statsQuery, pullQuery)
	}
	plan := explain(t, db, pullQuery, pullArgs)
	if !strings.Contains(plan, "notification_parked") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the pull of parked rows is not an ordered scan of the parked index:\n%s", plan)
	}
	plan = explain(t, db, statsQuery, statsArgs)
	if !strings.Contains(plan, "notification_queued") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the queue depth does not read the queued index alone:\n%s", plan)
	}
	// The count is a background scan that may read a million rows: it runs
	// with no parallel workers, which would take every core of a small
	// machine from the deliveries for its duration. Where the planner
	// would use workers (made cheap here), the count's settings stop it.
	if !statsAlone {
		t.Fatal("the queue depth was not counted in a transaction without parallel workers (store.OneProcess)")
	}
	parallel := map[string]string{"parallel_setup_cost": "0", "parallel_tuple_cost": "0", "min_parallel_table_scan_size": "0", "min_parallel_index_scan_size": "0"}
	if plan := explainWith(t, db, parallel, false, statsQuery, statsArgs); !strings.Contains(plan, "Gather") {
		t.Fatalf("with parallel plans made cheap, the planner does not use workers for the count: the check below proves nothing:\n%s", plan)
	}
	if plan := explainWith(t, db, parallel, true, statsQuery, statsArgs); strings.Contains(plan, "Gather") || strings.Contains(plan, "Parallel") {
		t.Fatalf("the queue depth's count uses parallel workers:\n%s", plan)
	}
	// An index scan in due order that stops at the limit: no bitmap of
	// every due row, no sort.
	plan = explain(t, db, query, args)
	if !strings.Contains(plan, "Index Scan using notification_due") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("claim is not an ordered scan of the due index:\n%s", plan)
	}
	plan = explain(t, db, sequenceQuery, sequenceArgs)
	if !strings.Contains(plan, "notification_sequence_undelivered") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the sequence check does not use its index:\n%s", plan)
	}
}

// explain returns PostgreSQL's plan of query.
func explain(t *testing.T, db *store.DB, query string, args []any) string {
	t.Helper()
	return storetest.Explain(t, db.SQL, query, args...)
}

// explainWith returns PostgreSQL's plan of query in a transaction with
// settings, after store.OneProcess when alone is set.
func explainWith(t *testing.T, db *store.DB, settings map[string]string, alone bool, query string, args []any) string {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	for k, v := range settings {
		if _, err := tx.ExecContext(ctx, "SELECT set_config($1, $2, true)", k, v); err != nil {
			t.Fatal(err)
		}
	}
	if alone {
		if err := store.OneProcess(ctx, tx, db.Dialect); err != nil {
			t.Fatal(err)
		}
	}
	return storetest.Explain(t, tx, query, args...)
}

// captureDriver reports every query run in a transaction.
type captureDriver struct {
	dialect.Driver
	f func(query string, args any)
}

func (d captureDriver) Query(ctx context.Context, query string, args, v any) error {
	d.f(query, args)
	return d.Driver.Query(ctx, query, args, v)
}

func (d captureDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	d.f("BEGIN", nil)
	tx, err := d.Driver.Tx(ctx)
	return captureTx{Tx: tx, f: d.f}, err
}

type captureTx struct {
	dialect.Tx
	f func(query string, args any)
}

func (t captureTx) Query(ctx context.Context, query string, args, v any) error {
	t.f(query, args)
	return t.Tx.Query(ctx, query, args, v)
}

func (t captureTx) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	t.f(query, args)
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*stdsql.Rows, error)
	}).QueryContext(ctx, query, args...)
}

func (t captureTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	t.f(query, args)
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	}).ExecContext(ctx, query, args...)
}
