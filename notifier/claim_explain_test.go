package notifier

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/notifier/egress"
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
	f := &fixture{db: db, clock: &fakeClock{now: t0}}
	seed := newFixtureOn(t, db)
	// Bulk rows straight in SQL: this measures the plan, not the API.
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO notifications (created_at, updated_at, uuid, ticker, address_in, host, payment_status, method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, address_id, api_key_id)
			SELECT now(), now(), 'done-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', CASE WHEN g %% 10 = 0 THEN 'failed' ELSE 'acknowledged' END, 1, NULL, now(), %d, %d FROM generate_series(1, 200000) g`, seed.addr.ID, seed.keyID),
		fmt.Sprintf(`INSERT INTO notifications (created_at, updated_at, uuid, ticker, address_in, host, payment_status, method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, address_id, api_key_id)
			SELECT now(), now(), 'later-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', 'retrying', 1, now() + interval '1 hour', now() + interval '2 days', %d, %d FROM generate_series(1, 20000) g`, seed.addr.ID, seed.keyID),
		fmt.Sprintf(`INSERT INTO notifications (created_at, updated_at, uuid, ticker, address_in, host, payment_status, method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at, address_id, api_key_id)
			SELECT now(), now(), 'due-' || g, 'btc', 'a', 'h:80', 'confirmed', 'GET', 'http://h/', '', '', '', '', 'pending', 0, now() - interval '1 second', now() + interval '2 days', %d, %d FROM generate_series(1, 50) g`, seed.addr.ID, seed.keyID),
		"ANALYZE notifications",
	} {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// Capture the SQL and arguments of the real claim query.
	var mu sync.Mutex
	var query, paymentQuery, statsQuery string
	var args, paymentArgs, statsArgs []any
	drv := captureDriver{Driver: entsql.OpenDB(dialect.Postgres, db.SQL), f: func(q string, a any) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.Contains(q, "FOR UPDATE SKIP LOCKED"):
			query, args = q, a.([]any)
		case strings.Contains(q, `"notifications"."payment_id" IN`):
			paymentQuery, paymentArgs = q, a.([]any)
		case strings.Contains(q, "GROUP BY"):
			statsQuery, statsArgs = q, a.([]any)
		}
	}}
	logged := &store.DB{SQL: db.SQL, Dialect: db.Dialect, Client: entdb.NewClient(entdb.Driver(drv))}
	n, err := New(logged, NewRSASigner(testKey), Config{Egress: egress.Config{Timeout: time.Second}, Clock: f.clock}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Stop)
	f.clock.Set(time.Now())
	if _, _, err := n.claim(ctx, 64, nil, []string{"x:1"}, []int64{1}); err != nil {
		t.Fatal(err)
	}
	// The check a notification of a payment makes when it is stored (is an
	// earlier one due?).
	n.mu.Lock()
	n.handOff = true
	n.mu.Unlock()
	tx, err := logged.Client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := int64(7)
	claims, err := n.claimOnStore(ctx, tx, []*entdb.Notification{{PaymentID: &pid, Host: "h:80"}})
	_ = tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	n.mu.Lock()
	for _, c := range claims {
		n.freeSlot(c.n)
	}
	n.mu.Unlock()

	// The metrics' queue depth counts the queue alone, not the 200,000
	// finished rows.
	st, err := n.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.ByStatus) != 2 || st.ByStatus["pending"] != 50 || st.ByStatus["retrying"] != 20000 {
		t.Fatalf("queue depth %v, want 50 pending and 20000 retrying", st.ByStatus)
	}

	mu.Lock()
	defer mu.Unlock()
	if query == "" || paymentQuery == "" || statsQuery == "" {
		t.Fatalf("queries not captured: claim %q, payment check %q, queue depth %q", query, paymentQuery, statsQuery)
	}
	plan := explain(t, db, statsQuery, statsArgs)
	if !strings.Contains(plan, "notification_queued") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the queue depth does not read the queued index alone:\n%s", plan)
	}
	// An index scan in due order that stops at the limit: no bitmap of
	// every due row, no sort.
	plan = explain(t, db, query, args)
	if !strings.Contains(plan, "Index Scan using notification_due") || strings.Contains(plan, "Sort") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("claim is not an ordered scan of the due index:\n%s", plan)
	}
	plan = explain(t, db, paymentQuery, paymentArgs)
	if !strings.Contains(plan, "notification_payment_undelivered") || strings.Contains(plan, "Seq Scan") {
		t.Fatalf("the payment check does not use its index:\n%s", plan)
	}
}

// explain returns PostgreSQL's plan of query.
func explain(t *testing.T, db *store.DB, query string, args []any) string {
	t.Helper()
	rows, err := db.SQL.QueryContext(context.Background(), "EXPLAIN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	t.Logf("plan:\n%s", plan.String())
	return plan.String()
}

// newFixtureOn creates an API key and an address on db.
func newFixtureOn(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	f := &fixture{db: db}
	ctx := context.Background()
	key, err := db.Client.APIKey.Create().SetName("t").SetPrefix("ph_test0").SetHash(strings.Repeat("e", 64)).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, err := db.Client.Address.Create().SetAPIKeyID(key.ID).SetTicker("btc").SetFamily("utxo").
		SetAddressIn("bc1qjcnhwsw976enmkvdlnyas0lcpc5fcee2gkl64h").SetDerivationIndex(0).
		SetCallbackURL("http://h/").SetCallbackKey(strings.Repeat("f", 64)).SetRequiredConfirmations(1).
		SetDestinations([]schema.Destination{}).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.keyID, f.addr = key.ID, a
	return f
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

func (t captureTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (stdsql.Result, error)
	}).ExecContext(ctx, query, args...)
}
