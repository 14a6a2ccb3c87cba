package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"entgo.io/ent"

	entdb "github.com/payhook/payhook/ent/db"
	entidem "github.com/payhook/payhook/ent/db/idempotencykey"
)

// ErrClaimLost reports a write made for a call whose Idempotency-Key claim
// is no longer its own (the call ran so long that its key was taken as
// abandoned and given to a retry): the write is refused, so that the call
// and its retry never both take effect.
var ErrClaimLost = errors.New("the call's Idempotency-Key was taken over by a retry: its write is refused")

// idempotencyClaim is the Idempotency-Key claim of the call a context
// runs: the id of its idempotency_keys row, which every transaction the
// call commits marks (committed_at) inside itself.
type idempotencyClaim struct {
	id  int64
	now func() time.Time

	mu     sync.Mutex
	closed bool
	// direct is set once a write outside a transaction marked the row.
	direct bool
}

type claimKey struct{}

// WithIdempotencyClaim returns ctx carrying the claim of idempotency_keys
// row id, and the function that ends it (call it when the call's handler
// returns: writes after it, by work the call left running, mark nothing).
// While it lasts, every write under ctx marks the row first:
//
//   - in a transaction (WithTx, or any ent mutation of a Tx), the row's
//     committed_at is set in that transaction, so the mark commits exactly
//     when the write does;
//   - outside one, the row is marked before the write, on its own (a crash
//     between the two leaves a mark for nothing, the safe side).
//
// A row that is gone, or no longer in progress, refuses the write
// (ErrClaimLost). So an unmarked row in progress proves the call committed
// nothing through ent or WithTx, and idempotency.Store may give its key to
// a retry. (Statements on the raw pool outside a transaction, such as the
// rate limiter's token buckets, are not marked: nothing of a call's effect
// is written that way.) A direct write while the same call holds a
// transaction that marked the row would wait for that transaction's lock;
// no handler writes that way (on SQLite it would wait for the database
// lock in any case).
func WithIdempotencyClaim(ctx context.Context, id int64, now func() time.Time) (context.Context, func()) {
	c := &idempotencyClaim{id: id, now: now}
	return context.WithValue(ctx, claimKey{}, c), func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
	}
}

func claimOf(ctx context.Context) *idempotencyClaim {
	c, _ := ctx.Value(claimKey{}).(*idempotencyClaim)
	return c
}

// markTx marks the claim's row in tx. Each write of a transaction marks it
// again (ent makes a new Tx value per mutation, so a transaction cannot be
// told from another here): one more UPDATE of one row, in calls made with
// an Idempotency-Key only.
func (c *idempotencyClaim) markTx(ctx context.Context, tx *entdb.Tx) error {
	if c.isClosed() {
		return nil
	}
	return c.mark(ctx, tx.IdempotencyKey)
}

func (c *idempotencyClaim) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// markDirect marks the claim's row on its own, once.
func (c *idempotencyClaim) markDirect(ctx context.Context, client *entdb.IdempotencyKeyClient) error {
	c.mu.Lock()
	if c.closed || c.direct {
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if err := c.mark(ctx, client); err != nil {
		return err
	}
	c.mu.Lock()
	c.direct = true
	c.mu.Unlock()
	return nil
}

// mark sets committed_at of the row while it is in progress. The update
// takes the row's lock: a retry that would take the key over (deleting
// the row while it is unmarked) waits for this transaction and then finds
// it marked; one that took it first leaves nothing to update.
func (c *idempotencyClaim) mark(ctx context.Context, client *entdb.IdempotencyKeyClient) error {
	n, err := client.Update().
		Where(entidem.ID(c.id), entidem.Status(0)).
		SetCommittedAt(c.now().UTC().Truncate(time.Microsecond)).
		Save(ctx)
	if err != nil {
		return fmt.Errorf("mark Idempotency-Key %d: %w", c.id, err)
	}
	if n == 0 {
		if c.isClosed() {
			// The handler returned (and its answer was stored) while
			// this write of work it left running was marking: nothing
			// of the call is being fenced any more.
			return nil
		}
		return fmt.Errorf("Idempotency-Key %d: %w", c.id, ErrClaimLost)
	}
	return nil
}

// installIdempotencyMarks registers the hook that marks a claimed call's
// row before each of its writes (WithIdempotencyClaim).
func installIdempotencyMarks(c *entdb.Client) {
	c.Use(func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			claim := claimOf(ctx)
			if claim == nil || m.Type() == entdb.TypeIdempotencyKey {
				return next.Mutate(ctx, m)
			}
			if txm, ok := m.(interface{ Tx() (*entdb.Tx, error) }); ok {
				if tx, err := txm.Tx(); err == nil {
					if err := claim.markTx(ctx, tx); err != nil {
						return nil, err
					}
					return next.Mutate(ctx, m)
				}
			}
			cm, ok := m.(interface{ Client() *entdb.Client })
			if !ok {
				return nil, fmt.Errorf("mutation %s: no client to mark the call's Idempotency-Key with", m.Type())
			}
			if err := claim.markDirect(ctx, cm.Client().IdempotencyKey); err != nil {
				return nil, err
			}
			return next.Mutate(ctx, m)
		})
	})
}
