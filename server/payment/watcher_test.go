package payment

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/chainblock"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/outbound"
)

// TestReorganisationUnderOpenPayments reorganises the devnet under a
// credited, a pending and an older pending payment, to the same height (so
// only the block hashes tell), then pays again on the new chain. The
// payments in the dropped blocks are re-evaluated: the pending one is
// dropped without a confirmed callback, the credited one is noted and never
// credited or forwarded twice; the payment below the fork is untouched and
// confirmed later; the new payment goes through. Nothing is lost or sent
// twice.
func TestReorganisationUnderOpenPayments(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "eth")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			w, err := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			old := f.addresses(1, 5)[0]
			credited := f.addresses(1, 1)[0]
			pending := f.addresses(1, 3)[0]
			later := f.addresses(1, 1)[0]
			pay := func(to string) string {
				txid, err := chain.Pay(to, decimal.RequireFromString("0.5"), false)
				if err != nil {
					t.Fatal(err)
				}
				return txid
			}
			mine := func(n int) {
				if _, err := chain.Mine(n); err != nil {
					t.Fatal(err)
				}
			}

			txOld := pay(old)
			mine(1)
			poll(t, w)
			txCredited, txPending := pay(credited), pay(pending)
			mine(1)
			poll(t, w)
			mine(1)
			poll(t, w) // height 3: old pending(3), pending pending(2), credited completed

			// Blocks 2 and 3 are replaced by two empty blocks: same height.
			if _, err := chain.Reorg(2); err != nil {
				t.Fatal(err)
			}
			mine(2)
			poll(t, w)
			poll(t, w) // a second poll changes nothing

			txLater := pay(later)
			mine(3) // height 6: old reaches 5 confirmations
			poll(t, w)
			mine(1)
			poll(t, w)

			got := rec.byPayment()
			want := map[string]string{
				txOld:      "detected:pending:1,depth:pending:2,depth:pending:3,confirmed:confirmed:6,distributed:completed:6",
				txCredited: "confirmed:confirmed:1,distributed:completed:1",
				txPending:  "detected:pending:1,depth:pending:2",
				txLater:    "confirmed:confirmed:3,distributed:completed:3", // first seen at depth 3
			}
			for txid, w := range want {
				if g := strings.Join(got[txid], ","); g != w {
					t.Errorf("changes of %s: %s, want %s", txid[:10], g, w)
				}
			}
			status := map[string]*entdb.Payment{}
			ps, err := db.Client.Payment.Query().All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ps {
				status[p.TxidIn] = p
			}
			if p := status[txCredited]; p.Status != entpayment.StatusCompleted || p.CreditedAt == nil || !strings.Contains(p.Note, "reorganisation") {
				t.Errorf("credited payment after the reorganisation: %s %q", p.Status, p.Note)
			}
			if p := status[txPending]; p.Status != entpayment.StatusDropped || p.CreditedAt != nil {
				t.Errorf("pending payment after the reorganisation: %s", p.Status)
			}
			if p := status[txOld]; p.Status != entpayment.StatusCompleted {
				t.Errorf("payment below the fork: %s", p.Status)
			}
			if n := len(chain.Forwards()); n != 3 {
				t.Errorf("%d forwards, want 3 (old, credited, later)", n)
			}
			head, _ := chain.Head(ctx)
			top, err := db.Client.ChainBlock.Query().Where(chainblock.Ticker("eth")).Order(entdb.Desc(chainblock.FieldHeight)).First(ctx)
			if err != nil || top.Height != head.Height || top.Hash != head.Hash {
				t.Errorf("stored tip %+v (%v), chain tip %+v", top, err, head)
			}
		})
	}
}

// TestIdlePollTouchesNoPayment: 10,000 TRON payments are credited and wait
// for their distribution depth. A poll without a new block runs one
// statement (the addresses created since the last, for the mempool); a cold watcher's poll (another process) and a poll
// after an empty block touch no payment row: nothing crossed a threshold.
// When the distribution depth is reached, all are forwarded.
func TestIdlePollTouchesNoPayment(t *testing.T) {
	t.Parallel()
	n := 10_000
	if testing.Short() {
		n = 500
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db, stmts := countingDB(t, d)
			f := newFixture(t, db, "trc20/usdt")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			svc := f.service(db, chain, rec)
			w, err := svc.NewWatcher(f.tk, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			payEach(t, chain, f.addresses(n, 1), "10")
			stmts.reset()
			start := clock.Now()
			poll(t, w)
			all, pays, commits, _ := stmts.reset()
			t.Logf("%s: a block of %d payments applied in %v: %d statements, %d commits", d, n, time.Since(start).Round(time.Millisecond), all, commits)
			if got := len(rec.statuses()); got != n {
				t.Fatalf("%d changes, want %d confirmed", got, n)
			}
			if commits > n/BatchSize+3 {
				t.Errorf("%d commits for one block of %d payments", commits, n)
			}
			_ = pays

			poll(t, w)
			if all, _, _, log := stmts.reset(); all != 1 || !strings.Contains(strings.ReplaceAll(log[0], "`", `"`), `FROM "addresses"`) {
				// The one read: addresses created since the last (the
				// mempool is read for them, mempool.go).
				t.Errorf("a poll without a new block ran %d statements, want the one read of new addresses: %v", all, log)
			}

			cold, err := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			w.Stop() // hands the lease over
			poll(t, cold)
			t.Cleanup(cold.Stop)
			if all, pays, _, log := stmts.reset(); pays != 0 {
				t.Errorf("a cold poll without a new block ran %d statements on payments: %v", pays, log)
			} else {
				t.Logf("%s: cold poll without a new block: %d statements, none on payments", d, all)
			}

			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, cold)
			if all, pays, _, log := stmts.reset(); pays != 0 {
				t.Errorf("a poll after an empty block ran %d statements on payments: %v", pays, log)
			} else {
				t.Logf("%s: poll after an empty block: %d statements, none on payments", d, all)
			}

			if _, err := chain.Mine(18); err != nil { // depth 20, solidified
				t.Fatal(err)
			}
			poll(t, cold)
			done, err := db.Client.Payment.Query().Where(entpayment.StatusEQ(entpayment.StatusCompleted)).Count(context.Background())
			if err != nil || done != n || len(chain.Forwards()) != n {
				t.Fatalf("%d completed, %d forwards (%v), want %d", done, len(chain.Forwards()), err, n)
			}
		})
	}
}

// TestLeaseOnePollerPerTicker: of two instances on one PostgreSQL
// database, one polls; the other's polls do nothing until the first stops,
// then it takes over where the first stopped, and finishes the forward the
// first left open.
func TestLeaseOnePollerPerTicker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres)
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
	f := newFixture(t, db, "btc")
	chain := devnet.NewChain(f.tk, devnet.Options{})
	rec := &recorder{}
	heads := &headCounter{Backend: chain}
	a, b := f.service(open(), chain, rec), f.service(open(), heads, rec)
	wa, _ := a.NewWatcher(f.tk, time.Hour)
	wb, _ := b.NewWatcher(f.tk, time.Hour)
	t.Cleanup(wa.Stop)
	t.Cleanup(wb.Stop)
	addrs := f.addresses(2, 1)
	count := func() int {
		n, err := db.Client.Payment.Query().Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	poll(t, wa) // a takes the lease
	for range 3 {
		poll(t, wb)
	}
	if heads.n != 1 {
		t.Errorf("the instance without the lease read the node's head %d times in 3 polls, want once (to learn it follows)", heads.n)
	}
	heads.n = 0
	if _, err := chain.Pay(addrs[0], decimal.RequireFromString("0.5"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Mine(1); err != nil {
		t.Fatal(err)
	}
	poll(t, wb)
	if n := count(); n != 0 {
		t.Fatalf("the instance without the lease recorded %d payments", n)
	}
	// a dies after broadcasting the forward, before recording it.
	crashing(a, outbound.Faults{AfterSend: func() error { return errors.New("killed") }})
	poll(t, wa)
	if n := count(); n != 1 || len(chain.Forwards()) != 1 {
		t.Fatalf("%d payments, %d forwards after the lease holder's poll", n, len(chain.Forwards()))
	}
	wa.Stop()

	if _, err := chain.Pay(addrs[1], decimal.RequireFromString("0.5"), false); err != nil {
		t.Fatal(err)
	}
	if _, err := chain.Mine(1); err != nil {
		t.Fatal(err)
	}
	poll(t, wb) // takes over: the new block, and the open forward
	ps, err := db.Client.Payment.Query().All(ctx)
	if err != nil || len(ps) != 2 {
		t.Fatalf("%d payments (%v)", len(ps), err)
	}
	for _, p := range ps {
		if p.Status != entpayment.StatusCompleted {
			t.Errorf("payment %s: %s after the takeover", p.TxidIn[:10], p.Status)
		}
	}
	if len(chain.Forwards()) != 2 {
		t.Errorf("%d forwards, want 2", len(chain.Forwards()))
	}
	if got := strings.Join(rec.statuses(), ","); got != "confirmed:confirmed,confirmed:confirmed,distributed:completed,distributed:completed" &&
		got != "confirmed:confirmed,distributed:completed,confirmed:confirmed,distributed:completed" {
		t.Errorf("changes %s", got)
	}
}

// TestWakeAndWaitHeight: a started watcher with a long interval applies a
// new block when woken; WaitHeight returns once it has, without sleeping.
func TestWakeAndWaitHeight(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "ltc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			w, _ := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			for i, a := range f.addresses(3, 2) {
				if _, err := chain.Pay(a, decimal.RequireFromString("0.5"), false); err != nil {
					t.Fatal(err)
				}
				h, err := chain.Mine(1)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.WaitHeight(ctx, h); err != nil {
					t.Fatal(err)
				}
				if got := len(rec.statuses()); got != 1+3*i {
					// each earlier payment: confirmed + distributed once the
					// next block gives it 2 confirmations
					t.Fatalf("after block %d: %d changes: %v", h, got, rec.statuses())
				}
			}
		})
	}
}

// TestMeasureBlock measures one block of PAYHOOK_MEASURE payments (2,000
// if set to 1) on PostgreSQL. It is skipped unless the variable is set.
func TestMeasureBlock(t *testing.T) {
	v := os.Getenv("PAYHOOK_MEASURE")
	if v == "" {
		t.Skip("set PAYHOOK_MEASURE to measure")
	}
	n := 2000
	if m, err := decimal.NewFromString(v); err == nil && m.IntPart() > 1 {
		n = int(m.IntPart())
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			db, stmts := countingDB(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			w, _ := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			t.Cleanup(w.Stop)
			poll(t, w)
			payEach(t, chain, f.addresses(n, 1), "0.01")
			stmts.reset()
			start := clock.Now()
			poll(t, w)
			el := time.Since(start)
			all, pays, commits, _ := stmts.reset()
			t.Logf("%s: %d payments (confirmed and forwarded) in one block: %v, %.0f changes/s, %d statements (%d on payments), %d commits",
				d, n, el.Round(time.Millisecond), float64(len(rec.statuses()))/el.Seconds(), all, pays, commits)
			start = clock.Now()
			poll(t, w)
			all, _, _, _ = stmts.reset()
			t.Logf("%s: idle poll: %v, %d statements", d, time.Since(start), all)
		})
	}
}

// TestAdoptOpenPaymentsOfAnOlderWatcher: a database written by the watcher
// that kept no block hashes (a cursor, open payments, no chain_blocks or
// watched_transfers rows). The first poll adopts the open payments, so the
// pending one still reaches its threshold and is forwarded once.
func TestAdoptOpenPaymentsOfAnOlderWatcher(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			w, _ := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			payEach(t, chain, f.addresses(1, 3), "0.5")
			poll(t, w)
			w.Stop()
			// What the older watcher left: the payment and the cursor only.
			if _, err := db.Client.ChainBlock.Delete().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Client.WatchedTransfer.Delete().Exec(ctx); err != nil {
				t.Fatal(err)
			}
			upgraded, _ := f.service(db, chain, rec).NewWatcher(f.tk, time.Hour)
			t.Cleanup(upgraded.Stop)
			if _, err := chain.Mine(2); err != nil {
				t.Fatal(err)
			}
			poll(t, upgraded)
			poll(t, upgraded)
			if got := strings.Join(rec.statuses(), ","); got != "detected:pending,confirmed:confirmed,distributed:completed" {
				t.Fatalf("changes %s", got)
			}
			if len(chain.Forwards()) != 1 {
				t.Fatalf("%d forwards", len(chain.Forwards()))
			}
		})
	}
}

// headCounter counts Head calls.
type headCounter struct {
	chains.Backend
	n int
}

func (h *headCounter) Head(ctx context.Context) (chains.Head, error) {
	h.n++
	return h.Backend.Head(ctx)
}

// gatedSends is a devnet chain whose first Send waits for gate.
type gatedSends struct {
	*devnet.Chain
	once sync.Once
	gate func() error
}

func (g *gatedSends) Send(ctx context.Context, s chains.Signed) error {
	var err error
	g.once.Do(func() { err = g.gate() })
	if err != nil {
		return err
	}
	return g.Chain.Send(ctx, s)
}

// TestForwardRunsWhileTheNextBatchApplies: a block of three batches of
// payments. The forward of the first batch is still sending when the
// second batch is applied (its first broadcast waits for the second
// batch's changes: a watcher that took turns would never get there), and a
// batch with a second payment to an address of the batch being forwarded
// applies after that forward. Every payment is confirmed, forwarded and
// completed exactly once.
func TestForwardRunsWhileTheNextBatchApplies(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			over, once := make(chan struct{}), sync.Once{}
			rec := &recorder{committed: func(total int) {
				if total > BatchSize {
					once.Do(func() { close(over) })
				}
			}}
			gated := &gatedSends{Chain: chain, gate: func() error {
				select {
				case <-over:
					return nil
				case <-time.After(30 * time.Second):
					t.Error("the second batch was not applied while the first batch's forward was sending")
					return errors.New("gate timed out")
				}
			}}
			w, err := f.service(db, gated, rec).NewWatcher(f.tk, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			poll(t, w)
			addrs := f.addresses(3*BatchSize-1, 1)
			// The last payment is a second one to the first batch's first address.
			payEach(t, chain, append(addrs, addrs[0]), "0.01")
			poll(t, w)
			total := len(addrs) + 1
			done, err := db.Client.Payment.Query().Where(entpayment.StatusEQ(entpayment.StatusCompleted)).Count(ctx)
			if err != nil || done != total || len(chain.Forwards()) != total {
				t.Fatalf("%d completed, %d forwards (%v); want %d each", done, len(chain.Forwards()), err, total)
			}
			for txid, seen := range rec.byPayment() {
				var statuses []string
				for _, s := range seen {
					statuses = append(statuses, strings.Split(s, ":")[1])
				}
				if strings.Join(statuses, ",") != "confirmed,completed" {
					t.Fatalf("payment %s reported %v, want confirmed then completed, once each", txid, seen)
				}
			}
		})
	}
}
