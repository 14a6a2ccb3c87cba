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
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entnotification "github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
)

// TestConcurrentApplyIsIdempotent: two instances watching the same chain
// apply the same observations at the same time, repeatedly. The payment is
// recorded once, credited once, forwarded once, and each status causes one
// callback. This is why payhook needs no leader per ticker.
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
			reg := chains.DefaultRegistry()
			tk, _ := reg.Lookup("eth")
			chain := devnet.NewChain(tk, devnet.Options{})
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
			svc := func() *Service {
				dbi := open()
				n, err := notifier.New(dbi, noSign{}, notifier.Config{Egress: egress.Config{Timeout: time.Second}}, logger)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(n.Stop)
				return New(dbi, n, reg, price.Default(), map[string]chains.Backend{"eth": chain}, now, logger)
			}
			a, b := svc(), svc()

			key, err := db.Client.APIKey.Create().SetName("t").SetPrefix("ph_x").SetHash(strings.Repeat("c", 64)).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			der, _ := chains.NewDeriver(make([]byte, 32))
			addrIn, _ := der.Address(tk, 0)
			dest, _ := der.Address(tk, 1)
			if _, err := db.Client.Address.Create().SetAPIKeyID(key.ID).SetTicker("eth").SetFamily("evm").SetAddressIn(addrIn).
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
				wg.Wait()
			}
			pays, err := db.Client.Payment.Query().All(ctx)
			if err != nil || len(pays) != 1 {
				t.Fatalf("%d payments, %v", len(pays), err)
			}
			if pays[0].Status != "completed" || pays[0].CreditedAt == nil {
				t.Fatalf("payment %+v", pays[0])
			}
			var statuses []string
			ns, err := db.Client.Notification.Query().Order(entdb.Asc(entnotification.FieldID)).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range ns {
				statuses = append(statuses, n.PaymentStatus)
			}
			if got := strings.Join(statuses, ","); got != "pending,pending,confirmed,completed" {
				t.Fatalf("callbacks stored: %s", got)
			}
			if len(chain.Forwards()) != 1 {
				t.Fatalf("%d forwards", len(chain.Forwards()))
			}
		})
	}
}
