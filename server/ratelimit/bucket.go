package ratelimit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/ratebucket"
	"github.com/payhook/payhook/ent/store"
)

// Limit is a token bucket's shape: it holds Burst tokens at most and is
// refilled with Rate tokens a second. A Limit whose rate or burst is not
// positive limits nothing.
type Limit struct {
	// Rate is the refill, in tokens (requests) per second.
	Rate float64
	// Burst is the bucket's size.
	Burst int
}

// On reports whether l limits anything.
func (l Limit) On() bool { return l.Rate > 0 && l.Burst > 0 }

// normal is l with its burst cut so that the bucket fills within
// MaxRefill (at least one token).
func (l Limit) normal() Limit {
	if most := int(l.Rate * MaxRefill.Seconds()); l.Burst > most {
		l.Burst = max(most, 1)
	}
	return l
}

// Result is what one take found.
type Result struct {
	// Allowed is whether a token was taken.
	Allowed bool
	// Limit is the bucket's size (RateLimit-Limit).
	Limit int
	// Remaining is how many whole tokens are left (RateLimit-Remaining).
	Remaining int
	// RetryAfter is how long until the bucket holds a token again: 0 when
	// Allowed.
	RetryAfter time.Duration
	// Reset is how long until the bucket is full again
	// (RateLimit-Reset).
	Reset time.Duration
}

// result builds the Result of a bucket that holds tokens after the take.
func result(allowed bool, l Limit, tokens float64) Result {
	tokens = max(tokens, 0)
	r := Result{Allowed: allowed, Limit: l.Burst, Remaining: int(math.Floor(tokens + 1e-9))}
	r.Reset = seconds(math.Max(float64(l.Burst)-tokens, 0) / l.Rate)
	if !allowed {
		r.Remaining = 0
		r.RetryAfter = seconds(math.Max(1-tokens, 0) / l.Rate)
	}
	return r
}

func seconds(s float64) time.Duration { return time.Duration(math.Ceil(s * float64(time.Second))) }

// PruneBatch is the most bucket rows one instance deletes a minute.
const PruneBatch = 10000

// pruneEvery is how often an instance prunes; maxDenied bounds the
// refusals it remembers.
const (
	pruneEvery = time.Minute
	maxDenied  = 100000
)

// Buckets takes tokens from the buckets in the database.
type Buckets struct {
	db     *store.DB
	now    func() time.Time
	logger *slog.Logger
	take   string // the take's statement, in the database's dialect
	read   string // the bucket's tokens now, for a refusal

	mu        sync.Mutex
	denied    map[string]denial
	nextPrune time.Time
}

// denial is a refusal remembered until the bucket holds a token again.
type denial struct {
	until time.Time
	limit Limit
}

// NewBuckets returns the buckets of db on the clock now.
func NewBuckets(db *store.DB, now func() time.Time, logger *slog.Logger) *Buckets {
	b := &Buckets{db: db, now: now, logger: logger, denied: map[string]denial{}}
	b.take, b.read = statements(db.Dialect)
	return b
}

// statements returns the take and the read in dialect d. Both refill the
// bucket by rate times the seconds since updated_at (none when the clock
// reads earlier than updated_at, as another instance's may), up to the
// burst. The take then takes a token when there is one; when there is
// none it changes nothing and returns no row. A bucket that does not exist
// is inserted full, less the token taken.
//
// Parameters: key, burst, now, rate.
func statements(d store.Dialect) (take, read string) {
	key, burst, now, rate := "?1", "?2", "?3", "?4"
	// SQLite keeps times as text (store's _time_format); unixepoch reads
	// them to the millisecond.
	elapsed := "MAX(0.0, unixepoch(?3, 'subsec') - unixepoch(rate_buckets.updated_at, 'subsec'))"
	least, later := "MIN", "CASE WHEN unixepoch(?3, 'subsec') > unixepoch(rate_buckets.updated_at, 'subsec') THEN ?3 ELSE rate_buckets.updated_at END"
	if d == store.Postgres {
		key, burst, now, rate = "$1", "$2::float8", "$3::timestamptz", "$4::float8"
		elapsed = "GREATEST(0.0, EXTRACT(EPOCH FROM ($3::timestamptz - rate_buckets.updated_at))::float8)"
		least, later = "LEAST", "GREATEST(rate_buckets.updated_at, $3::timestamptz)"
	}
	refilled := least + "(" + burst + ", rate_buckets.tokens + " + rate + " * " + elapsed + ")"
	// A token due now is a token, whatever the last bit of the float
	// arithmetic says (a Retry-After of whole seconds is often exact).
	whole := "0.999999999"
	take = `INSERT INTO rate_buckets ("key", tokens, updated_at) VALUES (` + key + `, ` + burst + ` - 1, ` + now + `)
ON CONFLICT ("key") DO UPDATE SET tokens = ` + refilled + ` - 1, updated_at = ` + later + `
WHERE ` + refilled + ` >= ` + whole + `
RETURNING tokens`
	read = `SELECT ` + refilled + ` FROM rate_buckets WHERE "key" = ` + key
	return take, read
}

// Take takes one token of the bucket key of shape l and reports what it
// found. A limit that is not On allows everything without a bucket.
func (b *Buckets) Take(ctx context.Context, key string, l Limit) (Result, error) {
	if !l.On() {
		return Result{Allowed: true}, nil
	}
	l = l.normal()
	now := b.now()
	if r, ok := b.remembered(key, l, now); ok {
		return r, nil
	}
	b.prune(ctx, now)
	var tokens float64
	err := b.db.SQL.QueryRowContext(ctx, b.take, key, float64(l.Burst), now, l.Rate).Scan(&tokens)
	if err == nil {
		return result(true, l, tokens), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Result{}, fmt.Errorf("take a token of %s: %w", key, err)
	}
	// No token: how long until there is one.
	if err := b.db.SQL.QueryRowContext(ctx, b.read, key, float64(l.Burst), now, l.Rate).Scan(&tokens); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Result{}, fmt.Errorf("read the bucket of %s: %w", key, err)
	}
	r := result(false, l, tokens)
	b.remember(key, l, now.Add(r.RetryAfter))
	return r, nil
}

// remembered answers a take of key from a refusal remembered for the same
// limit, while no token can have come back.
func (b *Buckets) remembered(key string, l Limit, now time.Time) (Result, bool) {
	b.mu.Lock()
	d, ok := b.denied[key]
	b.mu.Unlock()
	if !ok || d.limit != l || !now.Before(d.until) {
		return Result{}, false
	}
	wait := d.until.Sub(now)
	return Result{Limit: l.Burst, RetryAfter: wait, Reset: wait + seconds(float64(l.Burst-1)/l.Rate)}, true
}

func (b *Buckets) remember(key string, l Limit, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.denied) >= maxDenied {
		now := b.now()
		for k, d := range b.denied {
			if !now.Before(d.until) {
				delete(b.denied, k)
			}
		}
		if len(b.denied) >= maxDenied {
			clear(b.denied) // each bucket is still in the database
		}
	}
	b.denied[key] = denial{until: until, limit: l}
}

// prune deletes, once a minute, up to PruneBatch buckets untouched for
// MaxRefill: they are full, as a missing bucket is. A failure is logged and
// the take goes on.
func (b *Buckets) prune(ctx context.Context, now time.Time) {
	b.mu.Lock()
	due := !now.Before(b.nextPrune)
	if due {
		b.nextPrune = now.Add(pruneEvery)
	}
	b.mu.Unlock()
	if !due {
		return
	}
	c := b.db.Client.RateBucket
	ids, err := c.Query().Where(ratebucket.UpdatedAtLT(now.Add(-MaxRefill))).Limit(PruneBatch).IDs(ctx)
	if err == nil && len(ids) > 0 {
		_, err = c.Delete().Where(ratebucket.IDIn(ids...)).Exec(ctx)
	}
	if err != nil {
		b.logger.WarnContext(ctx, "prune rate buckets", "error", err)
	}
}

// TakeUpTo takes up to n tokens of the bucket key of shape l at once (the
// whole tokens it holds, at most n) and returns how many it took and, when
// it took none, how long until the bucket holds one. It is for a consumer
// that takes tokens ahead for a batch (the dispatcher's throttled
// endpoints); a request's own limit takes one with Take. The bucket is
// read and written in one transaction, its row locked on PostgreSQL
// (SQLite's transactions take the write lock at BEGIN), so instances
// sharing a bucket never take the same token. A limit that is not On
// grants all n.
func (b *Buckets) TakeUpTo(ctx context.Context, key string, l Limit, n int) (int, time.Duration, error) {
	if !l.On() {
		return n, 0, nil
	}
	if n <= 0 {
		return 0, 0, nil
	}
	l = l.normal()
	now := b.now()
	if r, ok := b.remembered(key, l, now); ok {
		return 0, r.RetryAfter, nil
	}
	b.prune(ctx, now)
	var took int
	var retry time.Duration
	take := func(tx *entdb.Tx) error {
		took, retry = 0, 0
		q := tx.RateBucket.Query().Where(ratebucket.Key(key))
		if b.db.Dialect == store.Postgres {
			q.ForUpdate()
		}
		row, err := q.Only(ctx)
		tokens, at := float64(l.Burst), now
		switch {
		case entdb.IsNotFound(err):
		case err != nil:
			return err
		default:
			tokens, at = row.Tokens, row.UpdatedAt
			if now.After(at) { // another instance's clock may read ahead
				tokens = math.Min(float64(l.Burst), tokens+l.Rate*now.Sub(at).Seconds())
				at = now
			}
		}
		took = min(n, int(math.Floor(tokens+1e-9)))
		if took <= 0 {
			took = 0
			retry = seconds(math.Max(1-tokens, 0) / l.Rate)
			return nil // nothing changes
		}
		tokens -= float64(took)
		if row == nil {
			return tx.RateBucket.Create().SetKey(key).SetTokens(tokens).SetUpdatedAt(at).Exec(ctx)
		}
		return tx.RateBucket.UpdateOne(row).SetTokens(tokens).SetUpdatedAt(at).Exec(ctx)
	}
	err := store.WithTx(ctx, b.db.Client, take)
	if entdb.IsConstraintError(err) {
		// Another instance created the bucket meanwhile: it exists now.
		err = store.WithTx(ctx, b.db.Client, take)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("take tokens of %s: %w", key, err)
	}
	if took == 0 {
		b.remember(key, l, now.Add(retry))
	}
	return took, retry, nil
}
