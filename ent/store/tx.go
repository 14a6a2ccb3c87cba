package store

import (
	"context"
	"fmt"

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
