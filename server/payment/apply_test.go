package payment

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestConcurrentApplyIsIdempotent: two instances watching the same chain
// poll it at the same time, repeatedly, and apply the same observations
// directly too (bypassing the lease, as an instance that lost it in the
// middle of a poll would). The payment is recorded once, credited once,
// forwarded once, and each change is published once: the lease saves work,
// safety does not depend on it.
func TestConcurrentApplyIsIdempotent(t *testing.T) {
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
			reg := family.DefaultRegistry()
			tk, _ := reg.Lookup("eth")
			chain := devnet.NewChain(tk, devnet.Options{})
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
			rec := &recorder{}
			svc := func() *Service {
				return New(open(), Config{Registry: reg, Backends: map[string]chains.Backend{"eth": chain}, Reactors: everyService(rec), Now: now}, logger)
			}
			a, b := svc(), svc()

			key, err := db.Client.APIKey.Create().SetName("t").SetPrefix("ph_x").SetHash(strings.Repeat("c", 64)).SetProjectID(1).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			der, _ := chains.NewDeriver(make([]byte, 32), family.All())
			addrIn, _ := der.Address(tk, 0)
			dest, _ := der.Address(tk, 1)
			if _, err := db.Client.Address.Create().SetAPIKeyID(key.ID).SetProjectID(1).SetTicker("eth").SetFamily("evm").SetAddressIn(addrIn).
				SetDerivationIndex(0).SetCallbackURL("https://shop.example/hook").SetCallbackKey(strings.Repeat("d", 64)).
				SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(3).Save(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := chain.Pay(addrIn, decimal.RequireFromString("0.3"), false); err != nil {
				t.Fatal(err)
			}
			wa, _ := a.NewWatcher(tk, time.Second)
			wb, _ := b.NewWatcher(tk, time.Second)
			for range 4 {
				if _, err := chain.Mine(1); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				for _, w := range []*Watcher{wa, wb, wa, wb} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := w.PollOnce(ctx); err != nil {
							t.Error(err)
						}
					}()
				}
				// The payment (the forward's output to dest is a transfer too).
				trs, err := chain.Transfers(ctx, 0, chain.Height(), func(a string) bool { return a == addrIn })
				if err != nil || len(trs) != 1 {
					t.Fatalf("transfers %v %v", trs, err)
				}
				st, _ := chain.State(ctx, trs[0])
				for _, s := range []*Service{a, b} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := s.Apply(ctx, tk, chains.Observation{Transfer: trs[0], State: st}); err != nil {
							t.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			pays, err := db.Client.Payment.Query().All(ctx)
			if err != nil || len(pays) != 1 {
				t.Fatalf("%d payments, %v", len(pays), err)
			}
			if pays[0].Status != "completed" || pays[0].CreditedAt == nil {
				t.Fatalf("payment %+v", pays[0])
			}
			if got := strings.Join(rec.statuses(), ","); got != "detected:pending,depth:pending,confirmed:confirmed,distributed:completed" {
				t.Fatalf("changes published: %s", got)
			}
			if len(chain.Forwards()) != 1 {
				t.Fatalf("%d forwards", len(chain.Forwards()))
			}
		})
	}
}
