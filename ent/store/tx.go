package store

import (
	"context"
	"fmt"

	"github.com/lib/pq"

	entdb "github.com/payhook/payhook/ent/db"
)

// WithTx runs fn in a transaction of client: committed when fn returns nil,
// rolled back otherwise. A failed commit is rolled back too, since a commit
// hook may fail before the database commit happens.
func WithTx(ctx context.Context, client *entdb.Client, fn func(*entdb.Tx) error) error {
	tx, err := client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Array wraps the values of one column as a PostgreSQL array parameter
// (for INSERT ... SELECT FROM unnest($1::type[], ...), which PostgreSQL
// parses once for any number of rows). A nil element is NULL.
func Array(values []any) any {
	return pq.GenericArray{A: values}
}
