package store

import (
	"context"
	"fmt"

	entdb "github.com/payhook/payhook/ent/db"
)

// WithTx runs fn in a transaction of client: committed when fn returns nil,
// rolled back otherwise. A failed commit is rolled back too, since a commit
// hook may fail before the database commit happens. Under a call's
// Idempotency-Key claim (WithIdempotencyClaim) the transaction marks the
// claim's row before it commits, whatever it wrote (raw statements too).
func WithTx(ctx context.Context, client *entdb.Client, fn func(*entdb.Tx) error) error {
	tx, err := client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if c := claimOf(ctx); c != nil {
		if err := c.markTx(ctx, tx); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// PlanByIndex has the statements of tx that follow read rows by index
// wherever an index serves them (PostgreSQL: enable_seqscan off for the
// transaction; SQLite plans by index already). The hot paths (applying a
// block, forwarding, sending, claiming and recording deliveries) look rows
// up by lists of keys: without statistics — a freshly filled table that
// autovacuum has not analysed yet — PostgreSQL takes a list of a few
// hundred keys on a non-unique column for most of the table and scans it
// whole, once per batch, so the cost of a payment grows with the table.
// With sequential scans priced out, it uses the index every such statement
// has (server's cost test checks the rows read per payment stay flat);
// a statement without a usable index still scans. An UPDATE ... FROM
// unnest(ids, ...) also names its rows with "id = ANY(ids)": joined to the
// array alone, the planner hashes it and reads the whole primary-key
// index. asyncCommit, when set,
// also lets the transaction commit without waiting for its WAL flush (for
// records a crash may lose without losing a notification or a payment).
func PlanByIndex(ctx context.Context, tx *entdb.Tx, d Dialect, asyncCommit bool) error {
	if d != Postgres {
		return nil
	}
	q := "SELECT set_config('enable_seqscan', 'off', true)"
	if asyncCommit {
		q = "SELECT set_config('enable_seqscan', 'off', true), set_config('synchronous_commit', 'off', true)"
	}
	if _, err := tx.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("set the transaction's plan settings: %w", err)
	}
	return nil
}

// OneProcess has the statements of tx run by their own backend alone, with
// no parallel workers (PostgreSQL: max_parallel_workers_per_gather 0 for
// the transaction; SQLite has none). For a background scan of a large
// table: with workers it takes every core of a small machine for its
// duration, stalling the traffic that shares the machine (counting a
// million queued notifications: two workers held both cores of a 2-core
// machine for 190 ms); alone, it takes one core for longer (350 ms) and
// leaves the rest to the traffic.
func OneProcess(ctx context.Context, tx *entdb.Tx, d Dialect) error {
	if d != Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, "SELECT set_config('max_parallel_workers_per_gather', '0', true)"); err != nil {
		return fmt.Errorf("set the transaction's plan settings: %w", err)
	}
	return nil
}
