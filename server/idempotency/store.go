package idempotency

import (
	"context"
	"fmt"
	"net/http"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entidem "github.com/payhook/payhook/ent/db/idempotencykey"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/interceptor"
)

// Defaults of Config.
const (
	// DefaultTTL is how long a key is honoured: 24 hours from its first
	// call.
	DefaultTTL = 24 * time.Hour
	// DefaultLease is how long a call in progress holds its key before
	// the key is taken as abandoned.
	DefaultLease = time.Minute
)

// ContentType is the content_type of a stored response: the response
// message in protobuf's binary encoding. The REST gateway renders a
// replayed message exactly as it rendered the first answer.
const ContentType = "application/protobuf"

// statusInProgress is the status of a row whose call runs; a completed
// call's row holds the HTTP status its success answers (200).
const statusInProgress = 0

// Config configures a Store.
type Config struct {
	// TTL is how long a key is honoured (DefaultTTL when 0).
	TTL time.Duration
	// Lease is how long a call in progress holds its key (DefaultLease
	// when 0).
	Lease time.Duration
	// Now is the clock (clock.UTC when nil).
	Now func() time.Time
}

// WithDefaults returns c with its zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	if c.TTL == 0 {
		c.TTL = DefaultTTL
	}
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.Now == nil {
		c.Now = clock.UTC
	}
	return c
}

// Store keeps Idempotency-Keys in the database; it implements
// interceptor.IdempotencyStore.
type Store struct {
	db  *entdb.Client
	cfg Config
}

// New returns the store of db.
func New(db *entdb.Client, cfg Config) *Store {
	return &Store{db: db, cfg: cfg.WithDefaults()}
}

// Lease implements interceptor.IdempotencyStore.
func (s *Store) Lease() time.Duration { return s.cfg.Lease }

// TTL is how long a key is honoured.
func (s *Store) TTL() time.Duration { return s.cfg.TTL }

// now is the store's clock, in UTC to the microsecond (what both
// databases keep), so what is written reads back equal.
func (s *Store) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// attempts bounds Begin's insert-or-read loop: each turn either claims the
// key, answers, or removes an expired or abandoned row that a concurrent
// call may have removed (or replaced) first.
const attempts = 4

// Begin implements interceptor.IdempotencyStore: it claims call's key by
// inserting its row, or reads the row that holds the key. A completed row
// of the same request is replayed; a row of another request is
// ErrMismatch; a row in progress is ErrInProgress until its lease ends,
// then ErrInterrupted until the key expires. A row older than the TTL
// is removed as if it had expired already.
func (s *Store) Begin(ctx context.Context, call interceptor.IdempotentCall) (interceptor.IdempotencyClaim, error) {
	now := s.now()
	for range attempts {
		row, err := s.db.IdempotencyKey.Create().
			SetAPIKeyID(call.APIKeyID).SetKey(call.Key).SetMethod(call.Method).SetRequestHash(call.RequestHash).
			SetStatus(statusInProgress).SetCreatedAt(now).
			Save(ctx)
		if err == nil {
			return interceptor.IdempotencyClaim{ID: row.ID}, nil
		}
		if !entdb.IsConstraintError(err) {
			return interceptor.IdempotencyClaim{}, fmt.Errorf("claim Idempotency-Key: %w", err)
		}
		old, err := s.db.IdempotencyKey.Query().
			Where(entidem.APIKeyID(call.APIKeyID), entidem.Key(call.Key)).
			Only(ctx)
		if entdb.IsNotFound(err) {
			continue // released or expired meanwhile: claim it
		}
		if err != nil {
			return interceptor.IdempotencyClaim{}, fmt.Errorf("read Idempotency-Key: %w", err)
		}
		switch {
		case !old.CreatedAt.After(now.Add(-s.cfg.TTL)):
			// Expired, whether the collector has run or not.
			if err := s.remove(ctx, old, false); err != nil {
				return interceptor.IdempotencyClaim{}, err
			}
		case old.Method != call.Method || old.RequestHash != call.RequestHash:
			return interceptor.IdempotencyClaim{}, ErrMismatch
		case old.Status != statusInProgress:
			return interceptor.IdempotencyClaim{ID: old.ID, Replayed: true, Response: old.Response}, nil
		case !old.CreatedAt.After(now.Add(-s.cfg.Lease)) && old.CommittedAt == nil:
			// Abandoned before it wrote anything: every transaction of a
			// claimed call marks its row inside itself (store.
			// WithIdempotencyClaim), so an unmarked row proves nothing
			// was committed. The key is given to this call, which runs;
			// the row is deleted only while still unmarked, so a
			// transaction of the old call committing now either marked
			// it first (this turn then finds it marked) or finds it gone
			// and is refused.
			if err := s.remove(ctx, old, true); err != nil {
				return interceptor.IdempotencyClaim{}, err
			}
		case !old.CreatedAt.After(now.Add(-s.cfg.Lease)):
			// Abandoned after it committed a write, its answer never
			// stored: running it again would do it twice.
			return interceptor.IdempotencyClaim{}, ErrInterrupted
		default:
			return interceptor.IdempotencyClaim{}, ErrInProgress
		}
	}
	// Concurrent calls keep replacing the row: one of them runs.
	return interceptor.IdempotencyClaim{}, ErrInProgress
}

// remove deletes row old (only while it is still in progress and
// unmarked, when abandoned is set): the row's id is the claim, so a
// concurrent Begin that removed it first and inserted its own is not
// disturbed.
func (s *Store) remove(ctx context.Context, old *entdb.IdempotencyKey, abandoned bool) error {
	q := s.db.IdempotencyKey.Delete().Where(entidem.ID(old.ID))
	if abandoned {
		q = q.Where(entidem.Status(statusInProgress), entidem.CommittedAtIsNil())
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("remove Idempotency-Key %d: %w", old.ID, err)
	}
	return nil
}

// Complete implements interceptor.IdempotencyStore: it stores response in
// the claim's row, if the claim is still the caller's.
func (s *Store) Complete(ctx context.Context, claim interceptor.IdempotencyClaim, response []byte) error {
	if response == nil {
		response = []byte{}
	}
	n, err := s.db.IdempotencyKey.Update().
		Where(entidem.ID(claim.ID), entidem.Status(statusInProgress)).
		SetStatus(http.StatusOK).SetResponse(response).SetContentType(ContentType).
		Save(ctx)
	if err != nil {
		return fmt.Errorf("store the response of Idempotency-Key %d: %w", claim.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("claim %d: %w", claim.ID, errLost)
	}
	return nil
}

// Release implements interceptor.IdempotencyStore: it deletes the claim's
// row, so that a retry runs the call again. A call that failed left nothing
// lasting behind (payhook's handlers write what a call does in one
// transaction, rolled back on failure; what else they may write, such as a
// row lock's touch, is harmless to repeat), so its marks do not hold the
// key: they answer only whether a call cut off by a crash committed.
func (s *Store) Release(ctx context.Context, claim interceptor.IdempotencyClaim) error {
	if _, err := s.db.IdempotencyKey.Delete().
		Where(entidem.ID(claim.ID), entidem.Status(statusInProgress)).
		Exec(ctx); err != nil {
		return fmt.Errorf("release Idempotency-Key %d: %w", claim.ID, err)
	}
	return nil
}

// Bind implements interceptor.IdempotencyStore: ctx runs the claimed call,
// whose every write marks the claim's row (store.WithIdempotencyClaim).
func (s *Store) Bind(ctx context.Context, claim interceptor.IdempotencyClaim) (context.Context, func()) {
	return store.WithIdempotencyClaim(ctx, claim.ID, s.cfg.Now)
}

// Expire deletes the keys older than the TTL and returns how many.
func (s *Store) Expire(ctx context.Context) (int, error) {
	n, err := s.db.IdempotencyKey.Delete().
		Where(entidem.CreatedAtLTE(s.now().Add(-s.cfg.TTL))).
		Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("expire Idempotency-Keys: %w", err)
	}
	return n, nil
}
