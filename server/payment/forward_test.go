package payment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// TestCrashBetweenBroadcastAndRecord: the process dies after the forwarding
// transaction was broadcast and before it was recorded. The restarted
// watcher reconciles the intent with the chain: the payment is completed
// with the broadcast's hash, one completed callback is stored, and the funds
// moved exactly once.
func TestCrashBetweenBroadcastAndRecord(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			reg := family.DefaultRegistry()
			tk, _ := reg.Lookup("btc")
			dn := devnet.New(reg, devnet.Options{})
			chain, _ := dn.Chain("btc")
			now := func() time.Time { return time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC) }
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			rec := &recorder{}
			svc := New(db, Config{Registry: reg, Backends: map[string]chains.Backend{"btc": chain}, Reactors: everyService(rec), Now: now}, logger)

			key, err := db.Client.APIKey.Create().SetName("t").SetPrefix("ph_x").SetHash(strings.Repeat("c", 64)).SetProjectID(1).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			der, _ := chains.NewDeriver(make([]byte, 32), family.All())
			addrIn, _ := der.Address(tk, 0)
			dest, _ := der.Address(tk, 1)
			if _, err := db.Client.Address.Create().SetAPIKeyID(key.ID).SetProjectID(1).SetTicker("btc").SetFamily("utxo").SetAddressIn(addrIn).
				SetDerivationIndex(0).SetCallbackURL("https://shop.example/hook").SetCallbackKey(strings.Repeat("d", 64)).
				SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(1).Save(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := chain.Pay(addrIn, decimal.RequireFromString("0.5"), false); err != nil {
				t.Fatal(err)
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}

			// The process dies right after the broadcast: Forward stops
			// there, as the process would (nothing after it runs).
			crash := errors.New("killed after broadcast")
			crashing(svc, outbound.Faults{AfterSend: func() error { return crash }})
			trs, err := chain.Transfers(ctx, 0, 1, func(string) bool { return true })
			if err != nil || len(trs) != 1 {
				t.Fatalf("transfers %v %v", trs, err)
			}
			st, _ := chain.State(ctx, trs[0])
			crashed := false
			crashing(svc, outbound.Faults{AfterSend: func() error { crashed = true; return crash }})
			// Apply credits the payment and forwards it, up to the crash.
			if err := svc.Apply(ctx, tk, chains.Observation{Transfer: trs[0], State: st}); err != nil {
				t.Fatal(err)
			}
			if !crashed {
				t.Fatal("the forward never reached the broadcast")
			}
			if n, err := db.Client.Forward.Query().Count(ctx); err != nil || n != 1 {
				t.Fatalf("%d forwarding intents recorded before the crash (%v)", n, err)
			}
			p, err := db.Client.Payment.Query().Only(ctx)
			if err != nil || p.Status != entpayment.StatusConfirmed {
				t.Fatalf("after the crash: %v %v", p, err)
			}
			if len(chain.Forwards()) != 1 {
				t.Fatalf("%d broadcasts before the restart", len(chain.Forwards()))
			}

			// Restart: a new service over the same database and chain. The
			// backend counts signatures and sends: reconciling must send the
			// recorded bytes again, never sign a second transaction.
			counting := &countingBackend{Backend: chain}
			restarted := New(db, Config{Registry: reg, Backends: map[string]chains.Backend{"btc": counting}, Reactors: everyService(rec), Now: now}, logger)
			w2, _ := restarted.NewWatcher(tk, time.Second)
			for range 3 {
				if err := w2.PollOnce(ctx); err != nil {
					t.Fatal(err)
				}
			}
			p, err = db.Client.Payment.Query().Only(ctx)
			if err != nil || p.Status != entpayment.StatusCompleted || p.TxidOut == "" {
				t.Fatalf("after reconciling: %+v %v", p, err)
			}
			fwds := chain.Forwards()
			if len(fwds) != 1 || counting.signs != 0 || counting.sends != 1 || counting.lastTxID != p.TxidOut {
				t.Fatalf("%d forwards, %d signatures and %d sends (of %s; recorded %s) after the restart: the recorded transaction was not sent again", len(fwds), counting.signs, counting.sends, counting.lastTxID, p.TxidOut)
			}
			// confirmed (before the crash) + completed (after reconciling)
			if got := strings.Join(rec.statuses(), ","); got != "confirmed:confirmed,distributed:completed" {
				t.Fatalf("changes published: %s, want confirmed then distributed once", got)
			}
			_ = store.SQLite
		})
	}
}

// countingBackend counts forwarding calls.
type countingBackend struct {
	chains.Backend
	signs, sends int
	lastTxID     string
}

func (c *countingBackend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	c.signs++
	return c.Backend.Sign(ctx, f)
}

func (c *countingBackend) Send(ctx context.Context, s chains.Signed) error {
	c.sends++
	c.lastTxID = s.TxID
	return c.Backend.Send(ctx, s)
}

// TestCrashBetweenSigningAndSending: the process dies after the signed
// forward was recorded and before it was sent. The restarted watcher sends
// the recorded bytes (no second signature: a node would see a second,
// different transaction spending the same funds), and the payment completes
// with that transaction's hash.
func TestCrashBetweenSigningAndSending(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			svc := f.service(db, chain, rec)
			addrIn, _ := merchantAddress(t, f, 1, false)
			payEach(t, chain, []string{addrIn}, "0.5")
			trs, err := chain.Transfers(ctx, 0, chain.Height(), nil)
			if err != nil || len(trs) != 1 {
				t.Fatalf("transfers %v %v", trs, err)
			}
			st, _ := chain.State(ctx, trs[0])
			crashing(svc, outbound.Faults{AfterRecord: func() error { return errCrash }})
			if err := svc.Apply(ctx, f.tk, chains.Observation{Transfer: trs[0], State: st}); err != nil {
				t.Fatal(err)
			}
			if len(chain.Forwards()) != 0 {
				t.Fatal("sent before the crash")
			}
			fw, err := db.Client.Forward.Query().Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if o := outboundOf(t, db, fw); o.SignedTx == nil || o.Txid == "" || o.State != entoutbound.StateSigned {
				t.Fatalf("recorded transaction %+v; want its signed bytes recorded", o)
			}
			fw.TxidOut = outboundOf(t, db, fw).Txid

			counting := &countingBackend{Backend: chain}
			restarted := f.service(db, counting, rec)
			w, _ := restarted.NewWatcher(f.tk, time.Second)
			for range 2 {
				poll(t, w)
			}
			p, err := db.Client.Payment.Query().Only(ctx)
			if err != nil || p.Status != entpayment.StatusCompleted || p.TxidOut != fw.TxidOut {
				t.Fatalf("after the restart: %+v %v; want completed with %s", p, err, fw.TxidOut)
			}
			if counting.signs != 0 || counting.sends != 1 || len(chain.Forwards()) != 1 {
				t.Fatalf("%d signatures, %d sends, %d forwards on chain after the restart", counting.signs, counting.sends, len(chain.Forwards()))
			}
		})
	}
}

// neverLandsBackend answers the first send with chains.ErrNeverLands (the
// recorded transaction expired unsent).
type neverLandsBackend struct {
	countingBackend
	refused bool
}

func (b *neverLandsBackend) Send(ctx context.Context, s chains.Signed) error {
	if !b.refused {
		b.refused = true
		b.sends++
		return fmt.Errorf("expired: %w", chains.ErrNeverLands)
	}
	return b.countingBackend.Send(ctx, s)
}

// TestForwardThatNeverLandsIsReplaced: when the node proves the recorded
// forward can never move funds, its transaction is replaced by a new one
// with the same content (never signed twice itself), which is signed and
// sent once; the forward moves to it.
func TestForwardThatNeverLandsIsReplaced(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			b := &neverLandsBackend{countingBackend: countingBackend{Backend: chain}}
			svc := f.service(db, b, &recorder{})
			w, _ := svc.NewWatcher(f.tk, time.Second)
			addrIn, _ := merchantAddress(t, f, 1, false)
			payEach(t, chain, []string{addrIn}, "0.5")
			poll(t, w) // credits; the send is refused; the poll's reconciliation signs anew
			if _, err := svc.out.Resume(ctx, f.tk); err != nil {
				t.Fatal(err)
			}
			fw, err := db.Client.Forward.Query().Only(ctx)
			if err != nil || fw.Status != entforward.StatusDone {
				t.Fatalf("forward %+v, %v", fw, err)
			}
			p, err := db.Client.Payment.Query().Only(ctx)
			if err != nil || p.Status != entpayment.StatusCompleted || b.signs != 2 || len(chain.Forwards()) != 1 {
				t.Fatalf("payment %+v (%v), %d signatures, %d forwards on chain", p, err, b.signs, len(chain.Forwards()))
			}
			os, err := db.Client.Outbound.Query().Order(entdb.Asc(entoutbound.FieldID)).All(ctx)
			if err != nil || len(os) != 2 || os[0].State != entoutbound.StateReplaced || os[1].State != entoutbound.StateSent ||
				os[1].ReplacesID == nil || *os[1].ReplacesID != os[0].ID || os[1].Key != os[0].Key+"#2" ||
				*fw.OutboundID != os[1].ID || p.TxidOut != os[1].Txid {
				t.Fatalf("transactions %+v (%v); want the first replaced by a second that was sent, carrying the forward", os, err)
			}
		})
	}
}

// droppingBackend is a node whose first acceptance of a transaction is
// lost (dropped from its mempool), and which shows sent transactions in a
// block only from the second send on.
type droppingBackend struct {
	chains.Backend
	sends map[string]int
}

func (b *droppingBackend) Send(ctx context.Context, s chains.Signed) error {
	b.sends[s.TxID]++
	return b.Backend.Send(ctx, s)
}

func (b *droppingBackend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	if n, ok := b.sends[t.TxID]; ok {
		return chains.TxState{Present: n > 1, Confirmations: map[bool]int64{true: 1}[n > 1], Executed: n > 1}, nil
	}
	return b.Backend.State(ctx, t)
}

// TestDroppedForwardIsSentAgain: a forward the node accepted and then
// dropped is sent again (the same bytes) at the next poll, until a block
// executes it; then it is recorded landed and followed no more.
func TestDroppedForwardIsSentAgain(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			b := &droppingBackend{Backend: chain, sends: map[string]int{}}
			svc := f.service(db, b, &recorder{})
			svc.startNearHead = map[string]bool{"btc": true} // a node: sent forwards are followed
			w, _ := svc.NewWatcher(f.tk, time.Second)
			poll(t, w) // records the cursor
			addrIn, _ := merchantAddress(t, f, 1, false)
			payEach(t, chain, []string{addrIn}, "0.5")
			poll(t, w) // credits, forwards (sent once; the node drops it)
			fw, err := db.Client.Forward.Query().Only(ctx)
			if err != nil || fw.Status != entforward.StatusDone || outboundOf(t, db, fw).State != entoutbound.StateSent || b.sends[fw.TxidOut] != 1 {
				t.Fatalf("after the forward: %+v %v, %d sends", fw, err, b.sends[fw.TxidOut])
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w) // not in a block: sent again
			if b.sends[fw.TxidOut] != 2 {
				t.Fatalf("%d sends after the node dropped it, want 2", b.sends[fw.TxidOut])
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w) // in a block now: landed
			if o := outboundOf(t, db, fw); o.State != entoutbound.StateLanded || o.LandedAt == nil {
				t.Fatalf("the forward in a block was not recorded landed: %+v", o)
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w)
			if b.sends[fw.TxidOut] != 2 || len(chain.Forwards()) != 1 {
				t.Errorf("%d sends, %d forwards after it landed", b.sends[fw.TxidOut], len(chain.Forwards()))
			}
		})
	}
}

// revertingBackend is an EVM node on which every forward sent is included
// in the next block and fails its execution (a reverted transaction).
type revertingBackend struct {
	chains.Backend
	sent map[string]bool
}

func (b *revertingBackend) Send(ctx context.Context, s chains.Signed) error {
	b.sent[s.TxID] = true
	return b.Backend.Send(ctx, s)
}

func (b *revertingBackend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	if b.sent[t.TxID] {
		return chains.TxState{Present: true, Confirmations: 1, Executed: false}, nil
	}
	return b.Backend.State(ctx, t)
}

// TestForwardFailedInBlockIsHeld: a forward that a block includes and
// fails (its funds never left the payment address) is taken back once the
// chain is followed: its transaction is recorded failed, the payment is
// held for the operator, and the journal moves its forwarded value from
// forwarded to held (the fee stays), so the operator's held funds list it
// and nothing claims it reached the merchant. It is never sent again.
func TestForwardFailedInBlockIsHeld(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "eth")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			b := &revertingBackend{Backend: chain, sent: map[string]bool{}}
			svc := f.service(db, b, &recorder{})
			svc.startNearHead = map[string]bool{"eth": true} // a node: sent forwards are followed
			w, _ := svc.NewWatcher(f.tk, time.Second)
			poll(t, w) // records the cursor
			addrIn, _ := merchantAddress(t, f, 1, false)
			payEach(t, chain, []string{addrIn}, "0.5")
			poll(t, w) // credits and forwards
			fw, err := db.Client.Forward.Query().Only(ctx)
			if err != nil || fw.Status != entforward.StatusDone || outboundOf(t, db, fw).State != entoutbound.StateSent {
				t.Fatalf("after the forward: %+v %v", fw, err)
			}
			balances := func() map[ledger.Account]decimal.Decimal {
				bs, err := ledger.Balances(ctx, db.Client)
				if err != nil {
					t.Fatal(err)
				}
				out := map[ledger.Account]decimal.Decimal{}
				for _, b := range bs {
					out[b.Account] = ledger.Coins(f.tk, b.Units)
				}
				return out
			}
			before := balances()
			if !before[ledger.Forwarded].Equal(fw.ValueForwardedCoin) || !before[ledger.Held].IsZero() {
				t.Fatalf("journal after the send: %v", before)
			}
			if _, err := chain.Mine(1); err != nil {
				t.Fatal(err)
			}
			poll(t, w) // followed: included and failed
			poll(t, w) // again: nothing more
			if o := outboundOf(t, db, fw); o.State != entoutbound.StateFailed || o.LandedAt != nil {
				t.Fatalf("the failed forward's transaction: %+v", o)
			}
			p, err := db.Client.Payment.Query().Only(ctx)
			if err != nil || p.HoldReason != entpayment.HoldReasonOperatorHold || !strings.Contains(p.Note, "failed in its block") {
				t.Fatalf("payment after the failed forward: %+v, %v", p, err)
			}
			after := balances()
			if !after[ledger.Forwarded].IsZero() || !after[ledger.Held].Equal(fw.ValueForwardedCoin) || !after[ledger.Fee].Equal(before[ledger.Fee]) {
				t.Fatalf("journal after the failed forward: %v; want the forwarded value held, the fee as it was", after)
			}
			held, err := ledger.HeldSummary(ctx, db.Client)
			if err != nil || len(held) != 1 {
				t.Fatalf("held funds %+v, %v; want the bounced payment listed", held, err)
			}
			if len(chain.Forwards()) != 1 || len(b.sent) != 1 {
				t.Fatalf("%d forwards on chain, %d transactions sent; want the one", len(chain.Forwards()), len(b.sent))
			}
		})
	}
}
