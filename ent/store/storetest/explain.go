package storetest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// Querier runs a query: a *sql.DB, or a transaction with its own settings.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Explain returns PostgreSQL's plan of query with args (EXPLAIN, one line
// per plan line), run by q, and logs it.
func Explain(t testing.TB, q Querier, query string, args ...any) string {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), "EXPLAIN "+query, args...)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%s", query, plan.String())
	return plan.String()
}
