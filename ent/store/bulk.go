package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	entdb "github.com/payhook/payhook/ent/db"
)

// The hot paths' inserts (notifications, their events and attempt
// records, ledger lines) are written by hand rather than through ent's
// bulk builder, which cost about a fifth of payhook's CPU per delivery at
// the engine's ceiling and, for the ledger, a row read back per line: on
// PostgreSQL as INSERT ... SELECT FROM unnest (one array parameter per
// column, so the statement PostgreSQL parses and plans does not grow with
// the rows), on SQLite as multi-row VALUES. Callers name columns with the
// generated field constants, so a renamed field fails to compile, and
// their tests read every value back through ent.

// BulkChunk is the most rows per statement on SQLite (InsertRows): 23
// columns x 500 rows stays well below its sqliteMaxParams.
const BulkChunk = 500

// sqliteMaxParams is the most parameters one SQLite statement takes.
const sqliteMaxParams = 32766

// Column is a column of a hand-written insert: its name and, for
// PostgreSQL's unnest, the array element type its values are sent as
// (bigint, text, bytea, timestamptz, numeric, ...).
type Column struct{ Name, PGType string }

// InsertRows inserts rows (each len(cols) values) into table within tx and,
// when wantIDs, returns their new ids in row order. suffix follows the rows
// (an ON CONFLICT clause). PostgreSQL gets one statement taking one array
// per column, so the statement's size (and its parse and plan) does not
// grow with the rows; SQLite gets multi-row VALUES in chunks of BulkChunk.
// A nil value is NULL; a []byte is sent as bytes to a bytea column and as
// text to any other (a JSON document: ent writes JSON fields as bytes).
func InsertRows(ctx context.Context, tx *entdb.Tx, d Dialect, table string, cols []Column, rows [][]any, suffix string, wantIDs bool) ([]int64, error) {
	if len(cols) == 0 || len(cols)*BulkChunk > sqliteMaxParams {
		return nil, fmt.Errorf("insert into %s: %d columns: want 1 to %d", table, len(cols), sqliteMaxParams/BulkChunk)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	for _, r := range rows {
		if len(r) != len(cols) {
			return nil, fmt.Errorf("insert into %s: row has %d values for %d columns", table, len(r), len(cols))
		}
	}
	head := "INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") "
	chunk := BulkChunk
	if d == Postgres {
		chunk = max(len(rows), 1)
	}
	var ids []int64
	for start := 0; start < len(rows); start += chunk {
		part := rows[start:min(start+chunk, len(rows))]
		var source string
		var args []any
		if d == Postgres {
			source, args = unnestSource(cols, part)
		} else {
			source, args = valuesSource(len(cols), part)
		}
		q := head + source
		if suffix != "" {
			q += " " + suffix
		}
		if !wantIDs {
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return nil, fmt.Errorf("insert into %s: %w", table, err)
			}
			continue
		}
		got, err := queryIDs(ctx, tx, q+" RETURNING id", args)
		if err != nil {
			return nil, fmt.Errorf("insert into %s: %w", table, err)
		}
		if len(got) != len(part) {
			return nil, fmt.Errorf("insert into %s: %d ids returned for %d rows", table, len(got), len(part))
		}
		// One statement takes its ids in the order of its rows, but
		// RETURNING need not list them in that order.
		slices.Sort(got)
		ids = append(ids, got...)
	}
	return ids, nil
}

// Nullable turns a nil pointer into a NULL argument and a set one into its
// value.
func Nullable[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// valuesSource is "VALUES (?, ...), ..." for rows of width values.
func valuesSource(width int, rows [][]any) (string, []any) {
	var q strings.Builder
	q.Grow(8 + len(rows)*width*3)
	q.WriteString("VALUES ")
	args := make([]any, 0, len(rows)*width)
	for i, r := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?" + strings.Repeat(", ?", width-1) + ")")
		args = append(args, r...)
	}
	return q.String(), args
}

// unnestSource is "SELECT * FROM unnest($1::type[], ...)" with one array
// argument per column.
func unnestSource(cols []Column, rows [][]any) (string, []any) {
	var q strings.Builder
	q.WriteString("SELECT * FROM unnest(")
	args := make([]any, len(cols))
	for i, c := range cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("$" + strconv.Itoa(i+1) + "::" + c.PGType + "[]")
		values := make([]any, len(rows))
		for j, r := range rows {
			values[j] = r[i]
			if b, ok := r[i].([]byte); ok {
				if c.PGType == "bytea" {
					// In an array literal, bytes are text: send bytea's hex form.
					values[j] = `\x` + hex.EncodeToString(b)
				} else {
					values[j] = string(b) // a JSON document, say
				}
			}
		}
		args[i] = Array(values)
	}
	q.WriteString(")")
	return q.String(), args
}

func queryIDs(ctx context.Context, tx *entdb.Tx, query string, args []any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
