package export_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/ledger/export"
)

// TestExportClockDisorder: lines whose times disagree with their ids (a
// journal written by instances whose clocks differ) are exported by their
// time, in id order: a line dated before or after the range between lines
// inside it is left out, one dated inside after lines outside is in; on
// both dialects, in pages of 1, 2 and the default.
func TestExportClockDisorder(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		btc, _ := family.DefaultRegistry().Lookup("btc")
		p := c.Project.Create().SetName("a").SetCurrency("USD").SetIpnSecret("whsec_a").SaveX(ctx)
		from, to := t0, t0.Add(24*time.Hour)
		// In journal (id) order: the amount says whether it is in the range.
		for i, at := range []time.Time{
			from.Add(-time.Hour), from, to.Add(time.Second), from.Add(-time.Minute), from.Add(time.Hour),
			to.Add(-time.Nanosecond * 1000), to, from.Add(2 * time.Hour), to.Add(time.Hour), from.Add(-time.Hour),
		} {
			in := !at.Before(from) && at.Before(to)
			v := "0.002"
			if in {
				v = "0.001"
			}
			e := ledger.Credit(btc, ledger.Ref{ProjectID: p.ID, PaymentID: int64(100 + i), AddressID: 1}, dec(v))
			if err := store.WithTx(ctx, c, func(tx *entdb.Tx) error { return ledger.Write(ctx, tx, db.Dialect, at, e) }); err != nil {
				t.Fatal(err)
			}
		}
		for _, size := range []int{1, 2, 0} {
			ex, err := export.New(export.Config{DB: c, Tickers: family.DefaultRegistry().Lookup, PageSize: size})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			w := export.NewWriter(&buf, export.CSV)
			n, err := ex.Export(ctx, p.ID, export.Range{From: from, To: to}, w)
			if err != nil || w.Close() != nil {
				t.Fatalf("page size %d: %v", size, err)
			}
			rows := parseCSV(t, buf.Bytes())
			var want []export.Row
			for _, r := range rows {
				if r.Amount != "0.001" {
					t.Errorf("page size %d: a line out of the range exported: %+v", size, r)
				}
				r.EntryID = "" // checkRows checks the id order
				want = append(want, r)
			}
			checkRows(t, rows, want)
			if n != 4 || len(rows) != 4 {
				t.Errorf("page size %d: %d rows (%d written), want the 4 lines dated in the range", size, len(rows), n)
			}
		}
	})
}

// TestExportPlan, on PostgreSQL: exporting one month of a small project's
// ten-year journal, beside ten busy projects, reads the month's lines of
// the project, not the years before it nor the other projects' lines: the
// range's bounds come from the (project_id, created_at, id) index and each
// page is a range of the (project_id, id) index (no sequential scan; the
// first page in the index's order, without a sort), as the planner takes
// them with statistics of the whole journal. (For a project with a larger share of the journal a page may
// read the primary key's range between the bounds instead: the heap is in
// id order, so that range's pages are about those the project's lines
// are on.)
func TestExportPlan(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	start := time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC)
	var projects []int64
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "small"} {
		p := db.Client.Project.Create().SetName(name).SetCurrency("USD").SetIpnSecret("whsec_" + name).SaveX(ctx)
		projects = append(projects, p.ID)
	}
	// For ten years, a line of each busy project every six hours
	// (146,000 lines) and one of the small project every third day at
	// noon (1,217), on an exported account and on an inner one in turn.
	if _, err := db.SQL.ExecContext(ctx, `
INSERT INTO ledger_entries (created_at, project_id, ticker, event, account, amount, key)
SELECT at, project, 'btc', 'credit', CASE WHEN n % 2 = 0 THEN 'received' ELSE 'pending' END, 1000, 'k' || project || ':' || n
FROM (
  SELECT $1::timestamptz + (g / 10) * interval '6 hours' AS at, $2::bigint + g % 10 AS project, g / 10 AS n FROM generate_series(0, 145999) g
  UNION ALL
  SELECT $1::timestamptz + g * interval '3 days' + interval '12 hours', $3::bigint, g FROM generate_series(0, 1216) g
) l ORDER BY at, project`, start, projects[0], projects[10]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "ANALYZE ledger_entries"); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var queries []captured
	drv := captureDriver{Driver: entsql.OpenDB(dialect.Postgres, db.SQL), f: func(q string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(q, `FROM "ledger_entries"`) {
			queries = append(queries, captured{q, args})
		}
	}}
	ex, err := export.New(export.Config{DB: entdb.NewClient(entdb.Driver(drv)), PageSize: 2,
		Tickers: func(string) (chains.Ticker, bool) { return family.DefaultRegistry().Lookup("btc") }})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := export.NewWriter(&buf, export.CSV)
	month := export.Range{From: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)}
	n, err := ex.Export(ctx, projects[10], month, w)
	if err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	// A line every third day, every other one on an exported account.
	if n != 5 {
		t.Errorf("%d rows, want 5", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queries) != 4 { // the bounds, three pages (2, 2, 1)
		t.Fatalf("%d ledger queries, want the bounds and two pages: %v", len(queries), queries)
	}
	bounds := func(q captured) {
		t.Helper()
		plan := explain(t, db, q)
		if !strings.Contains(plan, "ledgerentry_project_id_created_at_id") || strings.Contains(plan, "Seq Scan") || strings.Contains(plan, "pkey") {
			t.Errorf("the bounds do not read the range of the (project_id, created_at, id) index:\n%s", plan)
		}
	}
	bounds(queries[0])
	// A busy project's bounds too: min and max alone would be searched
	// in id order through the lines outside the range.
	bounds(captured{queries[0].query, []any{projects[3], queries[0].args[1], queries[0].args[2]}})
	// Each page reads the project's ids after the last one read up to
	// the range's last: an ordered index scan, or, for the last few
	// lines, a bitmap of them sorted (the planner's choice when it
	// expects a handful).
	for i, q := range queries[1:] {
		plan := explain(t, db, q)
		if !strings.Contains(plan, "Index Cond: ((project_id = ") || !strings.Contains(plan, "ledgerentry_project_id_id") ||
			strings.Contains(plan, "Seq Scan") || (i == 0 && strings.Contains(plan, "Sort")) {
			t.Errorf("page %d is not a range of the (project_id, id) index (the first in its order):\n%s", i+1, plan)
		}
	}
}

// captured is a query the exporter ran, with its arguments.
type captured struct {
	query string
	args  []any
}

// explain returns PostgreSQL's plan of q.
func explain(t *testing.T, db *store.DB, q captured) string {
	t.Helper()
	return storetest.Explain(t, db.SQL, q.query, q.args...)
}

// captureDriver reports every query before running it.
type captureDriver struct {
	dialect.Driver
	f func(query string, args []any)
}

func (d captureDriver) Query(ctx context.Context, query string, args, v any) error {
	a, _ := args.([]any)
	d.f(query, a)
	return d.Driver.Query(ctx, query, args, v)
}
