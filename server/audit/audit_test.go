package audit_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestListAndCSV: entries list newest first, a page at a time, one
// project's only; the CSV export streams them all (flushed per page),
// cuts over-long values and defuses cells a spreadsheet would evaluate;
// an entry without a project or action is refused.
func TestListAndCSV(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		var ids []int64
		for _, name := range []string{"a", "b"} {
			p, err := project.Create(ctx, db.Client, project.Params{Name: name}, t0)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		for i := range 7 {
			e := audit.Entry{ProjectID: ids[0], ActorKind: audit.User, ActorID: 1, Actor: "ann@shop.example",
				Action: "settings.branding", Target: "t" + string(rune('0'+i)), IP: "192.0.2.1", UserAgent: strings.Repeat("x", 400), At: t0.Add(time.Duration(i) * time.Minute)}
			if i == 6 {
				e.ActorKind, e.Actor, e.Target = audit.APIKey, "=HYPERLINK(\"http://evil\")", "@SUM(1)"
			}
			if err := audit.Record(ctx, db.Client, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := audit.Record(ctx, db.Client, audit.Entry{ProjectID: ids[1], ActorKind: audit.User, Action: "user.disable", At: t0}); err != nil {
			t.Fatal(err)
		}
		if err := audit.Record(ctx, db.Client, audit.Entry{ProjectID: ids[0], ActorKind: audit.User, At: t0}); err == nil {
			t.Error("an entry without an action was recorded")
		}
		page, next, err := audit.List(ctx, db.Client, ids[0], 0, 4)
		if err != nil || len(page) != 4 || next == 0 || page[0].Target != "@SUM(1)" || page[3].Target != "t3" || len(page[0].UserAgent) != audit.MaxUserAgent {
			t.Fatalf("first page %v next %d %v", page, next, err)
		}
		page, next, err = audit.List(ctx, db.Client, ids[0], next, 4)
		if err != nil || len(page) != 3 || next != 0 || page[2].Target != "t0" {
			t.Fatalf("second page %v next %d %v", page, next, err)
		}
		var b bytes.Buffer
		flushes := 0
		if err := audit.WriteCSV(ctx, db.Client, ids[0], &b, func() { flushes++ }); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		if err != nil || len(rows) != 8 || strings.Join(rows[0], ",") != strings.Join(audit.CSVHeader, ",") || flushes != 1 {
			t.Fatalf("csv %v (%d flushes) %v", rows, flushes, err)
		}
		if r := rows[1]; r[2] != "api_key" || r[4] != `'=HYPERLINK("http://evil")` || r[6] != "'@SUM(1)" || r[1] != "2026-11-28T12:06:00Z" {
			t.Errorf("newest row %q", r)
		}
		if r := rows[7]; r[5] != "settings.branding" || r[6] != "t0" || r[7] != "192.0.2.1" {
			t.Errorf("oldest row %q", r)
		}
	})
}

// TestOperatorEntry: an entry of the operator (a payhook command) is
// stored and exported with actor kind operator, actor id 0, its cli:
// actor, no address and the CLI's user agent.
func TestOperatorEntry(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		p, err := project.Create(ctx, db.Client, project.Params{Name: "shop"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := audit.Record(ctx, db.Client, audit.Entry{ProjectID: p.ID, ActorKind: audit.Operator, Actor: "cli:root",
			Action: "settings.wallet_set", Target: "btc", UserAgent: "payhook-cli", At: t0}); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := audit.WriteCSV(ctx, db.Client, p.ID, &b, nil); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&b).ReadAll()
		want := []string{"operator", "0", "cli:root", "settings.wallet_set", "btc", "", "payhook-cli"}
		if err != nil || len(rows) != 2 || strings.Join(rows[1][2:], ",") != strings.Join(want, ",") {
			t.Fatalf("csv %q %v, want a row ending %q", rows, err, want)
		}
	})
}
