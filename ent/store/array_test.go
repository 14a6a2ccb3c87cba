package store_test

import (
	"context"
	"database/sql/driver"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestArrayRoundTrips sends store.Array parameters to PostgreSQL and reads
// every element back: strings PostgreSQL's array syntax gives a meaning
// to (quotes, backslashes, commas, braces, spaces, NULL as text, the empty
// string), integers, booleans, NULL elements, times in any zone, decimals
// through their driver.Valuer, and an element type it does not write
// itself (lib/pq's encoder takes the whole array).
func TestArrayRoundTrips(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	ctx := context.Background()
	query := func(q string, arg any) []string {
		t.Helper()
		rows, err := db.SQL.QueryContext(ctx, q, arg)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s *string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			if s == nil {
				out = append(out, "<NULL>")
			} else {
				out = append(out, *s)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	same := func(what string, got, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %q, want %q", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s element %d: %q, want %q", what, i, got[i], want[i])
			}
		}
	}

	texts := []string{`plain`, `with "quotes"`, `back\slash`, `a,b`, `{braces}`, ` spaced `, `NULL`, ``, `ünïcødé ✓`, `\"`, `"`}
	args := make([]any, 0, len(texts)+1)
	for _, s := range texts {
		args = append(args, s)
	}
	args = append(args, nil)
	same("text", query(`SELECT v FROM unnest($1::text[]) AS v`, store.Array(args)), append(texts, "<NULL>"))

	same("bigint", query(`SELECT v::text FROM unnest($1::bigint[]) AS v`,
		store.Array([]any{int64(-9223372036854775808), 0, int32(7), uint32(4294967295), int64(9223372036854775807), nil})),
		[]string{"-9223372036854775808", "0", "7", "4294967295", "9223372036854775807", "<NULL>"})

	same("boolean", query(`SELECT v::text FROM unnest($1::boolean[]) AS v`, store.Array([]any{true, false, nil})),
		[]string{"true", "false", "<NULL>"})

	same("numeric", query(`SELECT v::text FROM unnest($1::numeric[]) AS v`,
		store.Array([]any{decimal.RequireFromString("-0.000000000000000001"), decimal.RequireFromString("123456789012345678901234567890")})),
		[]string{"-0.000000000000000001", "123456789012345678901234567890"})

	tokyo := time.FixedZone("JST", 9*3600)
	lmt := time.FixedZone("LMT", -(4*3600 + 56*60 + 2)) // an offset with seconds
	times := []time.Time{
		time.Date(2026, 11, 28, 4, 5, 6, 123456000, time.UTC),
		time.Date(2026, 11, 28, 13, 5, 6, 0, tokyo),
		time.Date(1883, 11, 18, 12, 3, 58, 0, lmt),
	}
	var got []time.Time
	rows, err := db.SQL.QueryContext(ctx, `SELECT v FROM unnest($1::timestamptz[]) AS v`, store.Array([]any{times[0], times[1], times[2]}))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var v time.Time
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	_ = rows.Close()
	if len(got) != len(times) {
		t.Fatalf("timestamptz: %d values, want %d", len(got), len(times))
	}
	for i := range times {
		if !got[i].Equal(times[i]) {
			t.Errorf("timestamptz element %d: %v, want %v", i, got[i], times[i])
		}
	}

	// A type it does not write: lib/pq's GenericArray encodes the array.
	same("fallback", query(`SELECT v::text FROM unnest($1::float8[]) AS v`, store.Array([]any{1.5, int64(2)})), []string{"1.5", "2"})

	// The literal is the same as lib/pq's for what both write.
	mixed := []any{int64(1), "a\"b", nil, true, "x,y"}
	mine, err := store.Array(mixed).(driver.Valuer).Value()
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := pq.GenericArray{A: mixed}.Value()
	if err != nil {
		t.Fatal(err)
	}
	if mine != theirs {
		t.Errorf("literal %q, lib/pq writes %q", mine, theirs)
	}
}
