package payment

import (
	"context"
	"sync"

	entdb "github.com/payhook/payhook/ent/db"
)

// recorder is a Reactor that keeps the changes of committed transactions
// only, as a reactor storing notifications would.
type recorder struct {
	mu      sync.Mutex
	changes []Change
	// committed, when set, is told how many changes have committed after
	// each commit.
	committed func(total int)
}

func (r *recorder) React(_ context.Context, tx *entdb.Tx, cs []Change) error {
	tx.OnCommit(func(next entdb.Committer) entdb.Committer {
		return entdb.CommitFunc(func(ctx context.Context, tx *entdb.Tx) error {
			if err := next.Commit(ctx, tx); err != nil {
				return err
			}
			r.mu.Lock()
			r.changes = append(r.changes, cs...)
			total := len(r.changes)
			r.mu.Unlock()
			if r.committed != nil {
				r.committed(total)
			}
			return nil
		})
	})
	return nil
}

// statuses lists the committed changes as kind:status.
func (r *recorder) statuses() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.changes))
	for i, c := range r.changes {
		out[i] = string(c.Kind) + ":" + string(c.Status)
	}
	return out
}

// everyService routes the changes of every service's addresses to rec.
func everyService(rec Reactor) Reactors {
	return Reactors{"address": rec, "custom": rec, "checkout": rec, "deposit": rec, "subscription": rec}
}
