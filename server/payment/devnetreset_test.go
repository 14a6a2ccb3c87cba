package payment

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/chainblock"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// lockedBuffer is a log destination safe for the watcher's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDevnetRestartIsAReset: a --dev server restarted on its database
// finds a new simulated chain (the devnet lives in memory, with a random
// seed): its first poll logs the reset at info, with no error or warning
// about a reorganisation, and follows the new chain. A reorganisation of
// the devnet during the run is still one.
func TestDevnetRestartIsAReset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		d      store.Dialect
		ticker string
	}{{store.SQLite, "btc"}, {store.SQLite, "eth"}, {store.Postgres, "btc"}, {store.Postgres, "trx"}} {
		t.Run(string(c.d)+"/"+c.ticker, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, c.d)
			f := newFixture(t, db, c.ticker)
			watcher := func(chain chains.Backend, logs *lockedBuffer) *Watcher {
				now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
				svc := New(db, Config{Registry: f.reg, Backends: map[string]chains.Backend{f.tk.Ticker: chain}, Reactors: everyService(&recorder{}), Now: now},
					slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
				w, err := svc.NewWatcher(f.tk, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(w.Stop)
				return w
			}
			addr := f.addresses(1, 1)[0]

			// The first run: a payment, five blocks.
			first := devnet.NewChain(f.tk, devnet.Options{})
			w1 := watcher(first, &lockedBuffer{})
			if _, err := first.Pay(addr, decimal.RequireFromString("5"), false); err != nil {
				t.Fatal(err)
			}
			for range 30 { // past TRON's distribution depth: forwarded
				if _, err := first.Mine(1); err != nil {
					t.Fatal(err)
				}
				poll(t, w1)
			}
			w1.Stop()
			if n := len(first.Forwards()); n != 1 {
				t.Fatalf("%d forwards in the first run, want 1", n)
			}

			// The restart: a new devnet.
			for _, mined := range []int{0, 2, 30, 45} { // shorter, as long as and longer than the stored chain
				second := devnet.NewChain(f.tk, devnet.Options{})
				if mined > 0 {
					if _, err := second.Mine(mined); err != nil {
						t.Fatal(err)
					}
				}
				var logs lockedBuffer
				w2 := watcher(second, &logs)
				poll(t, w2)
				got := logs.String()
				if strings.Contains(got, "level=ERROR") || strings.Contains(got, "level=WARN") || !strings.Contains(got, `level=INFO msg="devnet reset`) {
					t.Fatalf("restart on a devnet of %d blocks logged:\n%s", mined, got)
				}
				head, _ := second.Head(ctx)
				top, err := db.Client.ChainBlock.Query().Where(chainblock.Ticker(c.ticker)).Order(entdb.Desc(chainblock.FieldHeight)).First(ctx)
				if head.Height > 0 && (err != nil || top.Height != head.Height || top.Hash != head.Hash) {
					t.Fatalf("after the reset: stored tip %+v (%v), chain tip %+v", top, err, head)
				}
				// During the run, a reorganisation is one.
				if _, err := second.Mine(3); err != nil {
					t.Fatal(err)
				}
				poll(t, w2)
				if _, err := second.Reorg(2); err != nil {
					t.Fatal(err)
				}
				if _, err := second.Mine(3); err != nil {
					t.Fatal(err)
				}
				poll(t, w2)
				if got := logs.String(); !strings.Contains(got, `level=WARN msg="chain reorganisation: rolling back"`) || strings.Count(got, "devnet reset") != 1 {
					t.Fatalf("a reorganisation during the run logged:\n%s", got)
				}
				w2.Stop()
			}
		})
	}
}
