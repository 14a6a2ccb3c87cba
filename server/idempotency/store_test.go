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

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
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

		// Abandoned after a write: a claim in progress past its lease
		// whose call committed something is never run again:
		// ErrInterrupted until it expires.
		abandoned := begin(t, s, call(4, "order-3", "a"))
		actx, unbind := s.Bind(ctx, abandoned)
		if err := writeQuote(actx, db, "btc"); err != nil {
			t.Fatal(err)
		}
		unbind()
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
		// Abandoned before any write: nothing was committed, so past the
		// lease the key is given to the retry, which runs; the old call's
		// late write is refused and its late completion stores nothing.
		// Within the lease the retry is told the call is in progress.
		lost := begin(t, s, call(6, "order-4", "a"))
		lctx, lunbind := s.Bind(ctx, lost)
		defer lunbind()
		clk.Advance(30 * time.Second)
		if _, err := s.Begin(ctx, call(6, "order-4", "a")); !errors.Is(err, idempotency.ErrInProgress) {
			t.Fatalf("an unmarked claim within the lease: %v", err)
		}
		clk.Advance(30 * time.Second)
		takeover := begin(t, s, call(6, "order-4", "a"))
		if takeover.Replayed || takeover.ID == lost.ID {
			t.Fatalf("an unmarked claim after the lease: %+v; want a fresh claim", takeover)
		}
		if err := writeQuote(lctx, db, "ltc"); !errors.Is(err, store.ErrClaimLost) {
			t.Fatalf("the abandoned call's late write: %v; want ErrClaimLost", err)
		}
		if n, _ := db.Client.PriceQuote.Query().Count(ctx); n != 1 {
			t.Fatalf("%d price quotes; the refused write left one", n)
		}
		if err := s.Complete(ctx, lost, []byte("late")); err == nil {
			t.Fatal("the abandoned call's late completion was stored")
		}
		// A call that failed is released even if it wrote (a lock's
		// touch, say; what it did rolled back): its retry runs.
		failed := begin(t, s, call(7, "order-5", "a"))
		fctx, funbind := s.Bind(ctx, failed)
		// A write outside a transaction marks the row before it.
		if err := db.Client.PriceQuote.Create().SetCoin("doge").SetCurrency("USD").SetPrice(decimal.NewFromInt(1)).
			SetFetchedAt(quoteTime).Exec(fctx); err != nil {
			t.Fatal(err)
		}
		if row, _ := db.Client.IdempotencyKey.Get(ctx, failed.ID); row == nil || row.CommittedAt == nil {
			t.Fatal("a direct write did not mark the claim")
		}
		funbind()
		if err := s.Release(ctx, failed); err != nil {
			t.Fatal(err)
		}
		if c := begin(t, s, call(7, "order-5", "a")); c.Replayed || c.ID == failed.ID {
			t.Fatalf("the retry of a failed call: %+v; want a fresh claim", c)
		}
		// A late write of work the handler left running, after its
		// answer was stored, is not refused.
		done := begin(t, s, call(9, "order-7", "a"))
		dctx, dunbind := s.Bind(ctx, done)
		dunbind()
		if err := s.Complete(ctx, done, []byte("ok")); err != nil {
			t.Fatal(err)
		}
		if err := writeQuote(dctx, db, "sol"); err != nil {
			t.Fatalf("a write after the call completed: %v", err)
		}
		// Writes after the handler returned (unbind) mark nothing.
		closed := begin(t, s, call(8, "order-6", "a"))
		cctx, cunbind := s.Bind(ctx, closed)
		cunbind()
		if err := writeQuote(cctx, db, "eth"); err != nil {
			t.Fatal(err)
		}
		if row, _ := db.Client.IdempotencyKey.Get(ctx, closed.ID); row.CommittedAt != nil {
			t.Fatal("a write after unbind marked the claim")
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

// writeQuote writes a price quote of coin in a transaction under ctx.
func writeQuote(ctx context.Context, db *store.DB, coin string) error {
	return store.WithTx(ctx, db.Client, func(tx *entdb.Tx) error {
		return tx.PriceQuote.Create().SetCoin(coin).SetCurrency("USD").SetPrice(decimal.NewFromInt(1)).
			SetFetchedAt(quoteTime).Exec(ctx)
	})
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestStoreTakeoverRace: a retry of an abandoned key racing the old
// call's transaction, which has marked the row and not yet committed, is
// told the call was interrupted once that transaction commits, however the
// two interleave (on PostgreSQL the retry's claim waits for the
// transaction's row lock; a delete of the unmarked row that came first
// would have made the mark refuse the write): the call never runs twice.
func TestStoreTakeoverRace(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
		s := idempotency.New(db.Client, idempotency.Config{Now: clk.Now})
		old := begin(t, s, call(1, "slow", "a"))
		octx, unbind := s.Bind(ctx, old)
		defer unbind()
		tx, err := db.Client.Tx(octx)
		if err != nil {
			t.Fatal(err)
		}
		// The write marks the row inside the open transaction.
		if err := tx.PriceQuote.Create().SetCoin("btc").SetCurrency("USD").SetPrice(decimal.NewFromInt(1)).
			SetFetchedAt(quoteTime).Exec(octx); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Minute)
		got := make(chan error, 1)
		go func() {
			_, err := s.Begin(ctx, call(1, "slow", "a"))
			got <- err
		}()
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-got; !errors.Is(err, idempotency.ErrInterrupted) {
			t.Fatalf("the retry racing the old call's commit: %v; want ErrInterrupted", err)
		}
		if n, _ := db.Client.PriceQuote.Query().Count(ctx); n != 1 {
			t.Fatalf("%d writes", n)
		}
	})
}

// quoteTime is when the test's price quotes were fetched (any fixed time).
var quoteTime = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
