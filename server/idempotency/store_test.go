package idempotency_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/idempotency"
	"github.com/payhook/payhook/server/interceptor"
)

func call(apiKey int64, key, hash string) interceptor.IdempotentCall {
	return interceptor.IdempotentCall{APIKeyID: apiKey, Key: key, Method: "/payhook.v1.CheckoutService/RequestCheckout", RequestHash: strings.Repeat(hash, 64)}
}

func begin(t *testing.T, s *idempotency.Store, c interceptor.IdempotentCall) interceptor.IdempotencyClaim {
	t.Helper()
	claim, err := s.Begin(context.Background(), c)
	if err != nil {
		t.Fatalf("begin %+v: %v", c, err)
	}
	return claim
}

// TestStore: a key is claimed once; its completed response is replayed to
// the same request, the other request is ErrMismatch (409, conflict); a
// claim in progress is ErrInProgress (409, aborted) until its lease ends,
// when the next call takes the key over and the abandoned call's late
// completion stores nothing; a released claim is claimed again; keys are
// per API key; a key expires after the TTL, for Begin at once and for
// Expire, which deletes it.
func TestStore(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
		s := idempotency.New(db.Client, idempotency.Config{Now: clk.Now})
		if s.TTL() != 24*time.Hour || s.Lease() != time.Minute {
			t.Fatalf("defaults: TTL %s, lease %s", s.TTL(), s.Lease())
		}

		// Claimed, completed, replayed.
		first := begin(t, s, call(1, "order-1", "a"))
		if first.Replayed || first.ID == 0 {
			t.Fatalf("first claim %+v", first)
		}
		if _, err := s.Begin(ctx, call(1, "order-1", "a")); !errors.Is(err, idempotency.ErrInProgress) || kind.Of(err) != kind.Aborted {
			t.Fatalf("while in progress: %v", err)
		}
		if err := s.Complete(ctx, first, []byte("response one")); err != nil {
			t.Fatal(err)
		}
		clk.Advance(23 * time.Hour)
		again := begin(t, s, call(1, "order-1", "a"))
		if !again.Replayed || string(again.Response) != "response one" || again.ID != first.ID {
			t.Fatalf("replay %+v", again)
		}
		row, err := db.Client.IdempotencyKey.Get(ctx, first.ID)
		if err != nil || row.Status != 200 || row.ContentType != idempotency.ContentType || row.APIKeyID != 1 || row.Key != "order-1" {
			t.Fatalf("stored row %+v %v", row, err)
		}
		// Another request with the key; the same key of another API key.
		if _, err := s.Begin(ctx, call(1, "order-1", "b")); !errors.Is(err, idempotency.ErrMismatch) || kind.Of(err) != kind.Conflict {
			t.Fatalf("another request: %v", err)
		}
		other := call(1, "order-1", "a")
		other.Method = "/payhook.v1.DepositService/RequestDeposit"
		if _, err := s.Begin(ctx, other); !errors.Is(err, idempotency.ErrMismatch) {
			t.Fatalf("another method: %v", err)
		}
		if c := begin(t, s, call(2, "order-1", "b")); c.Replayed || c.ID == first.ID {
			t.Fatalf("another API key's key: %+v", c)
		}

		// Expired after the TTL: the next call runs afresh, and Expire
		// deletes what is older.
		clk.Advance(time.Hour)
		fresh := begin(t, s, call(1, "order-1", "b"))
		if fresh.Replayed || fresh.ID == first.ID {
			t.Fatalf("after 24 hours: %+v", fresh)
		}
		if n, err := s.Expire(ctx); err != nil || n != 0 {
			// API key 2's key is 1 hour old; the fresh one new.
			t.Fatalf("expire: %d %v", n, err)
		}
		clk.Advance(23*time.Hour + time.Second)
		if n, err := s.Expire(ctx); err != nil || n != 1 {
			t.Fatalf("expire after API key 2's key's 24 hours: %d %v", n, err)
		}
		if n, _ := db.Client.IdempotencyKey.Query().Count(ctx); n != 1 {
			t.Fatalf("%d keys left, want the fresh one", n)
		}

		// Released: claimed again at once.
		r := begin(t, s, call(3, "order-2", "a"))
		if err := s.Release(ctx, r); err != nil {
			t.Fatal(err)
		}
		if c := begin(t, s, call(3, "order-2", "a")); c.Replayed || c.ID == r.ID {
			t.Fatalf("after a release: %+v", c)
		}

		// Abandoned: a claim in progress past its lease is never run again
		// (its call may have committed): ErrInterrupted until it expires.
		begin(t, s, call(4, "order-3", "a"))
		clk.Advance(59 * time.Second)
		if _, err := s.Begin(ctx, call(4, "order-3", "a")); !errors.Is(err, idempotency.ErrInProgress) {
			t.Fatalf("within the lease: %v", err)
		}
		clk.Advance(time.Second)
		if _, err := s.Begin(ctx, call(4, "order-3", "a")); !errors.Is(err, idempotency.ErrInterrupted) {
			t.Fatalf("after the lease: %v; want ErrInterrupted", err)
		}
		clk.Advance(23 * time.Hour)
		if _, err := s.Begin(ctx, call(4, "order-3", "a")); !errors.Is(err, idempotency.ErrInterrupted) {
			t.Fatalf("within the TTL: %v; want ErrInterrupted", err)
		}
		clk.Advance(time.Hour)
		retry := begin(t, s, call(4, "order-3", "a"))
		if retry.Replayed {
			t.Fatalf("after the TTL: %+v; want a fresh claim", retry)
		}
		if err := s.Complete(ctx, retry, []byte("retried")); err != nil {
			t.Fatal(err)
		}
		if c := begin(t, s, call(4, "order-3", "a")); !c.Replayed || string(c.Response) != "retried" {
			t.Fatalf("after the retry: %+v", c)
		}
		// A completed call is never taken over, however old (within the
		// TTL).
		clk.Advance(time.Hour)
		if c := begin(t, s, call(4, "order-3", "a")); !c.Replayed {
			t.Fatalf("a completed call an hour on: %+v", c)
		}
		// An empty response (a message with no fields set) is stored and
		// replayed empty.
		e := begin(t, s, call(5, "empty", "a"))
		if err := s.Complete(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		if c := begin(t, s, call(5, "empty", "a")); !c.Replayed || len(c.Response) != 0 {
			t.Fatalf("empty response: %+v", c)
		}
	})
}

// TestStoreConcurrent: of calls that race for one key, exactly one claims
// it; every other is told it is in progress.
func TestStoreConcurrent(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		s := idempotency.New(db.Client, idempotency.Config{})
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		claims := make(chan interceptor.IdempotencyClaim, n)
		for range n {
			wg.Go(func() {
				c, err := s.Begin(context.Background(), call(1, "race", "a"))
				if err != nil {
					errs <- err
					return
				}
				claims <- c
			})
		}
		wg.Wait()
		close(errs)
		close(claims)
		if len(claims) != 1 {
			t.Fatalf("%d claims of one key", len(claims))
		}
		for err := range errs {
			if !errors.Is(err, idempotency.ErrInProgress) {
				t.Fatalf("a racing call: %v", err)
			}
		}
	})
}

// TestCollector: a started collector stops (no goroutine outlives it), and
// so does one never started.
func TestCollector(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	s := idempotency.New(db.Client, idempotency.Config{})
	c := idempotency.NewCollector(s, time.Millisecond, discard())
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	c.Stop()
	idempotency.NewCollector(s, 0, discard()).Stop()
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
