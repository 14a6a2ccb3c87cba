package payment

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/payhook/payhook/ent/store"
)

// leaseClass is the first key of payhook's watcher advisory locks
// (pg_try_advisory_lock(int, int)): "ph" in ASCII, so they do not collide
// with locks other code takes with one bigint key.
const leaseClass = 0x7068

// lease decides which instance polls a ticker: one watcher per ticker across
// all instances. On PostgreSQL it is a session advisory lock per ticker,
// held on one connection the service keeps for the purpose; the lock goes
// when that connection does (the instance died, or the database restarted),
// and another instance takes it at its next poll. On SQLite, which one
// process uses, it is always held.
//
// The lease saves work, it does not make applying safe: two instances that
// both believe they hold it (a connection lost in the middle of a poll)
// apply the same observations, which changes nothing the second time.
type lease struct {
	db *store.DB

	mu   sync.Mutex
	conn *sql.Conn       // PostgreSQL: the connection holding the locks
	held map[string]bool // tickers whose lock this instance holds
}

// isHeld reports whether this instance holds ticker's lease now.
func (l *lease) isHeld(ticker string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held[ticker]
}

func newLease(db *store.DB) *lease { return &lease{db: db, held: map[string]bool{}} }

// hold reports whether this instance holds ticker's lease, taking it when it
// is free. fresh is true when the lease was taken by this call: the previous
// holder may have stopped in the middle of a poll, so the caller forgets
// what it cached and finishes what may have been left open.
func (l *lease) hold(ctx context.Context, ticker string) (held, fresh bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db.Dialect != store.Postgres {
		fresh = !l.held[ticker]
		l.held[ticker] = true
		return true, fresh, nil
	}
	if l.conn != nil && len(l.held) > 0 {
		// The locks live as long as the session: check it is still there.
		if err := l.conn.PingContext(ctx); err != nil {
			l.dropLocked()
		}
	}
	if l.held[ticker] {
		return true, false, nil
	}
	if l.conn == nil {
		c, err := l.db.SQL.Conn(ctx)
		if err != nil {
			return false, false, fmt.Errorf("watcher lease of %s: connect: %w", ticker, err)
		}
		l.conn = c
	}
	var ok bool
	if err := l.conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1, $2)", leaseClass, leaseKey(ticker)).Scan(&ok); err != nil {
		l.dropLocked()
		return false, false, fmt.Errorf("watcher lease of %s: %w", ticker, err)
	}
	if !ok {
		if len(l.held) == 0 {
			l.dropLocked() // hold no connection while this instance only waits
		}
		return false, false, nil
	}
	l.held[ticker] = true
	return true, true, nil
}

// release gives ticker's lease up (a stopping watcher), so another instance
// takes it at once rather than when this one's connection closes.
func (l *lease) release(ticker string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held[ticker] {
		return
	}
	delete(l.held, ticker)
	if l.conn == nil {
		return
	}
	// Unlocked explicitly, and answered, before the connection goes: closing
	// the session releases its locks too, but only once the server has
	// noticed, so another instance polling right after could still find
	// the lease taken.
	if _, err := l.conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock($1, $2)", leaseClass, leaseKey(ticker)); err != nil || len(l.held) == 0 {
		l.dropLocked() // hold no connection while holding no lease
	}
}

// dropLocked closes the lease connection, which releases every lock it
// held; l.mu must be held.
func (l *lease) dropLocked() {
	if l.conn != nil {
		// Raw closes the driver connection rather than returning it to the
		// pool: a pooled session would keep the locks.
		_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = l.conn.Close()
		l.conn = nil
	}
	clear(l.held)
}

// leaseKey is ticker's lock key. Two tickers sharing a key only means one
// instance polls both.
func leaseKey(ticker string) int32 {
	h := fnv.New32a()
	h.Write([]byte(ticker))
	return int32(h.Sum32())
}
