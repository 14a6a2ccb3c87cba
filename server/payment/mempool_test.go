package payment

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestMempoolSightings: a payment waiting for its block is detected by the
// watching instance's next poll (Detected answers it) and is nothing else:
// no payment row, no change published, nothing credited. Once mined it is
// a payment and no longer a sighting. An address created after the last
// block is watched in the mempool at once. On PostgreSQL, a second
// instance whose watcher does not hold the lease reads the mempool itself
// when asked, and answers the same.
func TestMempoolSightings(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := storetest.DSN(t, d)
			open := func() *store.DB {
				db, err := store.Open(ctx, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
			db := open()
			if _, err := store.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, db, "ltc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			w, err := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w)
			addr := f.addresses(1, 1)[0] // after the last block
			txid, err := chain.Pay(addr, decimal.RequireFromString("0.5"), false)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Detected(ctx, addr); len(got) != 0 {
				t.Fatalf("detected before a poll read the mempool: %+v", got)
			}
			poll(t, w)
			got := w.Detected(ctx, addr)
			if len(got) != 1 || got[0].TxID != txid || !got[0].Value.Equal(decimal.RequireFromString("0.5")) {
				t.Fatalf("detected %+v, want %s", got, txid)
			}
			if n := len(rec.statuses()); n != 0 {
				t.Fatalf("a mempool sighting published %d changes", n)
			}
			if n, err := db.Client.Payment.Query().Count(ctx); err != nil || n != 0 {
				t.Fatalf("a mempool sighting stored %d payments (%v)", n, err)
			}
			if d == store.Postgres {
				peer, err := f.service(open(), chain, &recorder{}).NewWatcher(f.tk, 0)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(peer.Stop)
				poll(t, peer) // a follower: the lease is w's
				if got := peer.Detected(ctx, addr); len(got) != 1 || got[0].TxID != txid {
					t.Fatalf("another instance detected %+v, want %s", got, txid)
				}
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w)
			if got := w.Detected(ctx, addr); len(got) != 0 {
				t.Fatalf("still detected once mined: %+v", got)
			}
			if st := rec.statuses(); len(st) == 0 {
				t.Fatal("mined: no change published")
			}
		})
	}
}
