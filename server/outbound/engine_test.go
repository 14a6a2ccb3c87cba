package outbound

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/goleak"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// handler records what the engine hands it.
type handler struct {
	sent, replaced, failed, bounced []string
}

func (h *handler) Sent(_ context.Context, _ *entdb.Tx, _ chains.Ticker, os []*entdb.Outbound) error {
	for _, o := range os {
		h.sent = append(h.sent, o.Key)
	}
	return nil
}

func (h *handler) Replaced(_ context.Context, _ *entdb.Tx, old, next *entdb.Outbound) error {
	h.replaced = append(h.replaced, old.Key+">"+next.Key)
	return nil
}

func (h *handler) Failed(_ context.Context, _ *entdb.Tx, _ chains.Ticker, o *entdb.Outbound, cause error) error {
	if !errors.Is(cause, chains.ErrInvalidForward) {
		return fmt.Errorf("failed for %v, not a refusal", cause)
	}
	h.failed = append(h.failed, o.Key)
	return nil
}

func (h *handler) Bounced(_ context.Context, _ *entdb.Tx, _ chains.Ticker, o *entdb.Outbound) error {
	h.bounced = append(h.bounced, o.Key)
	return nil
}

// minimums is a network whose every output must carry at least min.
type minimums struct{ min decimal.Decimal }

func (m minimums) MinOutput(chains.Ticker, string) (decimal.Decimal, error) { return m.min, nil }

// backend counts signatures and sends, and can refuse either. It signs
// offline (chains.OfflineSigner) when offline is set.
type backend struct {
	chains.Backend
	signs, sends int
	signErr      error
	sendErrs     []error // returned by the next sends, in order
	offline      bool
	// failedInBlock: State reports these txids included and failed, as an
	// EVM or TRON node does for a reverted execution.
	failedInBlock map[string]bool
	// pooled: State reports these txids waiting in the node's pool, as an
	// EVM node does (present, no receipt: not executed, no confirmation).
	pooled map[string]bool
}

func (b *backend) State(ctx context.Context, tr chains.Transfer) (chains.TxState, error) {
	if b.pooled[tr.TxID] {
		return chains.TxState{Present: true}, nil
	}
	if b.failedInBlock[tr.TxID] {
		return chains.TxState{Present: true, Confirmations: 1, Executed: false}, nil
	}
	return b.Backend.State(ctx, tr)
}

func (b *backend) SignsOffline() bool { return b.offline }

func (b *backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	b.signs++
	if b.signErr != nil {
		return chains.Signed{}, b.signErr
	}
	return b.Backend.Sign(ctx, f)
}

func (b *backend) Send(ctx context.Context, s chains.Signed) error {
	b.sends++
	if len(b.sendErrs) > 0 {
		err := b.sendErrs[0]
		b.sendErrs = b.sendErrs[1:]
		return err
	}
	return b.Backend.Send(ctx, s)
}

type bench struct {
	db    *store.DB
	tk    chains.Ticker
	chain *devnet.Chain
	b     *backend
	h     *handler
	e     *Engine
	from  string
	to    string
}

func newBench(t *testing.T, db *store.DB, faults Faults) *bench {
	t.Helper()
	return newBenchOf(t, db, faults, "btc")
}

// newBenchOf is newBench on ticker (its devnet chain).
func newBenchOf(t *testing.T, db *store.DB, faults Faults, ticker string) *bench {
	t.Helper()
	reg := family.DefaultRegistry()
	tk, _ := reg.Lookup(ticker)
	chain := devnet.NewChain(tk, devnet.Options{})
	der, _ := chains.NewDeriver(make([]byte, 32), family.All())
	from, _ := der.Address(tk, 1)
	to, _ := der.Address(tk, 2)
	b := &backend{Backend: chain}
	h := &handler{}
	now := func() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }
	e := New(db, Config{Backends: map[string]chains.Backend{tk.Ticker: b}, Minimums: minimums{decimal.RequireFromString("0.00000294")}, Now: now, Faults: faults},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	e.Handle(PurposeForward, h)
	return &bench{db: db, tk: tk, chain: chain, b: b, h: h, e: e, from: from, to: to}
}

// plan records one transaction of key paying amount.
func (bn *bench) plan(t *testing.T, key, amount string) (*entdb.Outbound, error) {
	t.Helper()
	var o *entdb.Outbound
	err := store.WithTx(context.Background(), bn.db.Client, func(tx *entdb.Tx) error {
		var err error
		o, err = bn.e.Plan(context.Background(), tx, Intent{Key: key, Ticker: bn.tk, Purpose: PurposeForward, ProjectID: 1, From: bn.from, FromIndex: 1,
			Inputs:  []chains.Transfer{{TxID: "in-" + key, To: bn.from, Value: decimal.RequireFromString("1")}},
			Outputs: []chains.Output{{Address: bn.to, Amount: decimal.RequireFromString(amount)}}, NetworkFee: decimal.RequireFromString("0.00001")})
		return err
	})
	return o, err
}

// mustPlan is plan, failing the test on an error.
func (bn *bench) mustPlan(t *testing.T, key, amount string) *entdb.Outbound {
	t.Helper()
	o, err := bn.plan(t, key, amount)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (bn *bench) state(t *testing.T, key string) *entdb.Outbound {
	t.Helper()
	o, err := bn.db.Client.Outbound.Query().Where(entoutbound.Key(key)).Only(context.Background())
	if err != nil {
		t.Fatalf("outbound %s: %v", key, err)
	}
	return o
}

// TestPlanRefusesWhatTheNetworkCannotCarry: an output below the network's
// minimum is refused at planning, naming it; nothing is recorded. Outputs to
// one destination are summed before the check and in the transaction.
func TestPlanRefusesWhatTheNetworkCannotCarry(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		bn := newBench(t, db, Faults{})
		_, err := bn.plan(t, "dust", "0.00000293")
		var below *BelowMinimumError
		if !errors.As(err, &below) || !below.Minimum.Equal(decimal.RequireFromString("0.00000294")) || below.Address != bn.to {
			t.Fatalf("planning dust: %v; want a BelowMinimumError naming the limit", err)
		}
		if n, _ := db.Client.Outbound.Query().Count(context.Background()); n != 0 {
			t.Fatalf("%d transactions recorded", n)
		}
		outs := merge([]chains.Output{{Address: "a", Amount: decimal.RequireFromString("0.000002")}, {Address: "b", Amount: decimal.RequireFromString("0.1")},
			{Address: "a", Amount: decimal.RequireFromString("0.000002")}, {Address: "c", Amount: decimal.Zero}})
		if len(outs) != 2 || outs[0].Address != "a" || !outs[0].Amount.Equal(decimal.RequireFromString("0.000004")) || outs[1].Address != "b" {
			t.Fatalf("merged outputs %+v", outs)
		}
		if err := bn.e.Check(bn.tk, []chains.Output{{Address: bn.to, Amount: decimal.RequireFromString("0.000002")}, {Address: bn.to, Amount: decimal.RequireFromString("0.000002")}}); err != nil {
			t.Fatalf("two outputs to one destination that together clear the minimum: %v", err)
		}
	})
}

// TestSendSignsOnceAndResumesRecordedBytes: a crash after the bytes are
// recorded leaves the transaction signed; Resume sends those bytes, never
// a second signature, then marks it sent and hands it to the handler once.
func TestSendSignsOnceAndResumesRecordedBytes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		crash := errors.New("killed")
		bn := newBench(t, db, Faults{AfterRecord: func() error { return crash }})
		o := bn.mustPlan(t, "k1", "0.5")
		if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); !errors.Is(err, crash) {
			t.Fatalf("send: %v", err)
		}
		signed := bn.state(t, "k1")
		if signed.State != entoutbound.StateSigned || !hasBytes(signed) || signed.Txid == "" || bn.b.sends != 0 {
			t.Fatalf("after the crash: %+v, %d sends", signed, bn.b.sends)
		}
		restarted := newBench(t, db, Faults{})
		restarted.b.Backend, restarted.chain = bn.chain, bn.chain
		open, err := restarted.e.Resume(ctx, bn.tk)
		if err != nil || open {
			t.Fatalf("resume: %v (open %v)", err, open)
		}
		sent := restarted.state(t, "k1")
		if restarted.b.signs != 0 || restarted.b.sends != 1 || sent.State != entoutbound.StateSent || sent.Txid != signed.Txid ||
			!bytes.Equal(*sent.SignedTx, *signed.SignedTx) || sent.Sends != 1 || sent.SentAt == nil || len(restarted.h.sent) != 1 {
			t.Fatalf("after resuming: %+v; %d signatures, %d sends, handler %v", sent, restarted.b.signs, restarted.b.sends, restarted.h.sent)
		}
		if open, err := restarted.e.Resume(ctx, bn.tk); err != nil || open || restarted.b.sends != 1 || len(restarted.h.sent) != 1 {
			t.Fatalf("a second resume: %v (open %v), %d sends, handler %v", err, open, restarted.b.sends, restarted.h.sent)
		}
	})
}

// TestAccountChainSendsInTurn: on an account chain each transaction is
// signed only once the one before it is sent (its nonce is then counted):
// with three planned, a failed send of the first leaves the others
// unsigned; the next Send signs and sends all three in order, one at a
// time.
func TestAccountChainSendsInTurn(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBenchOf(t, db, Faults{}, "eth")
		var ids []int64
		for _, k := range []string{"a", "b", "c"} {
			ids = append(ids, bn.mustPlan(t, k, "0.5").ID)
		}
		bn.b.sendErrs = []error{chains.ErrNode}
		if open, err := bn.e.Send(ctx, bn.tk, ids); !open || err == nil {
			t.Fatalf("a failed first send: open %v, %v", open, err)
		}
		if bn.b.signs != 1 || bn.b.sends != 1 || bn.state(t, "b").State != entoutbound.StatePlanned {
			t.Fatalf("after the failed send: %d signatures, %d sends, b %s; want the others left unsigned", bn.b.signs, bn.b.sends, bn.state(t, "b").State)
		}
		if open, err := bn.e.Send(ctx, bn.tk, ids); open || err != nil {
			t.Fatalf("the second turn: open %v, %v", open, err)
		}
		if bn.b.signs != 3 || bn.b.sends != 4 || len(bn.h.sent) != 3 {
			t.Fatalf("after the second turn: %d signatures, %d sends, %d handled", bn.b.signs, bn.b.sends, len(bn.h.sent))
		}
		for _, k := range []string{"a", "b", "c"} {
			if st := bn.state(t, k).State; st != entoutbound.StateSent {
				t.Errorf("%s is %s", k, st)
			}
		}
	})
}

// TestPooledIsNotBounced: a sent transaction still in the node's pool
// (present, not executed, no confirmation) is neither failed nor sent
// again: Follow waits for a block.
func TestPooledIsNotBounced(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		o := bn.mustPlan(t, "k", "0.5")
		if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); err != nil {
			t.Fatal(err)
		}
		bn.b.pooled = map[string]bool{bn.state(t, "k").Txid: true}
		if err := bn.e.Follow(ctx, bn.tk); err != nil {
			t.Fatal(err)
		}
		if got := bn.state(t, "k"); got.State != entoutbound.StateSent || len(bn.h.bounced) != 0 || bn.b.sends != 1 {
			t.Fatalf("a pooled transaction after Follow: %s, bounced %v, %d sends", got.State, bn.h.bounced, bn.b.sends)
		}
	})
}

// TestFailedInBlockIsBouncedOnce: a sent transaction that a block
// includes and fails is marked failed and handed to its handler's Bounced
// in the same database transaction, once: a later Follow, or another
// instance's, finds nothing to do, and nothing is sent again.
func TestFailedInBlockIsBouncedOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		o := bn.mustPlan(t, "k", "0.5")
		if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); err != nil {
			t.Fatal(err)
		}
		sent := bn.state(t, "k")
		bn.b.failedInBlock = map[string]bool{sent.Txid: true}
		other := newBench(t, db, Faults{})
		other.b.Backend, other.b.failedInBlock = bn.chain, bn.b.failedInBlock
		for _, e := range []*bench{bn, other, bn} {
			if err := e.e.Follow(ctx, bn.tk); err != nil {
				t.Fatal(err)
			}
		}
		got := bn.state(t, "k")
		if got.State != entoutbound.StateFailed || got.LastError == "" || got.LandedAt != nil {
			t.Fatalf("after the failed execution: %+v", got)
		}
		if len(bn.h.bounced)+len(other.h.bounced) != 1 || len(bn.h.bounced) != 1 {
			t.Fatalf("bounced: this instance %v, the other %v; want once, by the first to follow", bn.h.bounced, other.h.bounced)
		}
		if bn.b.sends != 1 || other.b.sends != 0 {
			t.Fatalf("%d and %d sends after the failure, want the one send", bn.b.sends, other.b.sends)
		}
	})
}

// TestRecordFirstWins: of two instances that signed one transaction at
// once, the first to record its bytes wins; the second is handed the
// first's bytes (and sends those).
func TestRecordFirstWins(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		o := bn.mustPlan(t, "k", "0.5")
		first := chains.Signed{TxID: "first", Raw: []byte("first bytes")}
		if _, err := bn.e.record(ctx, []*entdb.Outbound{o}, map[int64]chains.Signed{o.ID: first}); err != nil {
			t.Fatal(err)
		}
		got, err := bn.e.record(ctx, []*entdb.Outbound{o}, map[int64]chains.Signed{o.ID: {TxID: "second", Raw: []byte("second bytes")}})
		if err != nil || len(got) != 1 || got[0].Txid != "first" || !bytes.Equal(*got[0].SignedTx, first.Raw) {
			t.Fatalf("second record: %+v, %v; want the first's bytes", got, err)
		}
	})
}

// TestNeverLandsIsReplaced: bytes the network can never accept are not
// signed again: the transaction is replaced by a new one (key#2) with the
// same content, the handler is told, and Resume signs and sends that one.
func TestNeverLandsIsReplaced(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		bn.b.sendErrs = []error{fmt.Errorf("blockhash expired: %w", chains.ErrNeverLands)}
		o := bn.mustPlan(t, "k", "0.5")
		open, err := bn.e.Send(ctx, bn.tk, []int64{o.ID})
		if err != nil || !open {
			t.Fatalf("send: %v (open %v); want the replacement left open", err, open)
		}
		if old := bn.state(t, "k"); old.State != entoutbound.StateReplaced || len(bn.h.replaced) != 1 || bn.h.replaced[0] != "k>k#2" {
			t.Fatalf("replaced: %+v, handler %v", old, bn.h.replaced)
		}
		if _, err := bn.e.Resume(ctx, bn.tk); err != nil {
			t.Fatal(err)
		}
		next := bn.state(t, "k#2")
		if next.State != entoutbound.StateSent || next.ReplacesID == nil || *next.ReplacesID != o.ID || len(next.Outputs) != 1 ||
			!next.Outputs[0].Amount.Equal(decimal.RequireFromString("0.5")) || bn.b.signs != 2 || len(bn.h.sent) != 1 || bn.h.sent[0] != "k#2" {
			t.Fatalf("the replacement: %+v; %d signatures, handler %v", next, bn.b.signs, bn.h.sent)
		}
		if got := nextKey("k#2"); got != "k#3" {
			t.Fatalf("nextKey(k#2) = %s", got)
		}
	})
}

// TestRefusedAtSigningFails: a transaction the backend refuses to sign as
// planned fails, once, and its handler takes its funds back; a transient
// signing error leaves it planned, its error kept for the operator.
func TestRefusedAtSigningFails(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		o := bn.mustPlan(t, "k", "0.5")
		bn.b.signErr = errors.New("node unreachable")
		if open, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); err == nil || !open {
			t.Fatalf("send with the node down: %v (open %v)", err, open)
		}
		if got := bn.state(t, "k"); got.State != entoutbound.StatePlanned || got.LastError == "" {
			t.Fatalf("after a transient error: %+v", got)
		}
		bn.b.signErr = fmt.Errorf("%w: watch-only", chains.ErrInvalidForward)
		if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); err != nil {
			t.Fatal(err)
		}
		if got := bn.state(t, "k"); got.State != entoutbound.StateFailed || len(bn.h.failed) != 1 {
			t.Fatalf("after a refusal: %+v, handler %v", got, bn.h.failed)
		}
		if open, err := bn.e.Resume(ctx, bn.tk); err != nil || open || len(bn.h.failed) != 1 || bn.b.sends != 0 {
			t.Fatalf("resume after the failure: %v (open %v), handler %v, %d sends", err, open, bn.h.failed, bn.b.sends)
		}
	})
}

// planAll records, in one database transaction, a transaction per key,
// each paying amount.
func (bn *bench) planAll(t *testing.T, amount string, keys ...string) []*entdb.Outbound {
	t.Helper()
	var os []*entdb.Outbound
	err := store.WithTx(context.Background(), bn.db.Client, func(tx *entdb.Tx) error {
		ins := make([]Intent, len(keys))
		for i, key := range keys {
			ins[i] = Intent{Key: key, Ticker: bn.tk, Purpose: PurposeForward, ProjectID: 1, From: bn.from, FromIndex: 1,
				Inputs:  []chains.Transfer{{TxID: "in-" + key, To: bn.from, Value: decimal.RequireFromString("1")}},
				Outputs: []chains.Output{{Address: bn.to, Amount: decimal.RequireFromString(amount)}}, NetworkFee: decimal.RequireFromString("0.00001")}
		}
		var err error
		os, err = bn.e.PlanAll(context.Background(), tx, ins)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return os
}

// TestOfflineSignerRecordsBytesAtPlanning: a backend that signs offline
// has its transactions signed as they are planned, their bytes recorded by
// the planning transaction; SendPlanned sends those bytes without signing
// again, marks each sent once and hands it to the handler once. A
// signature that fails at planning leaves the transaction planned, and
// Send signs it.
func TestOfflineSignerRecordsBytesAtPlanning(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		bn := newBench(t, db, Faults{})
		bn.b.offline = true
		os := bn.planAll(t, "0.5", "a", "b")
		for _, key := range []string{"a", "b"} {
			if got := bn.state(t, key); got.State != entoutbound.StateSigned || !hasBytes(got) || got.Txid == "" {
				t.Fatalf("%s after planning: %+v; want its signed bytes recorded", key, got)
			}
		}
		if bn.b.signs != 2 || bn.b.sends != 0 {
			t.Fatalf("planning signed %d and sent %d; want 2 and 0", bn.b.signs, bn.b.sends)
		}
		if open, err := bn.e.SendPlanned(ctx, bn.tk, os); err != nil || open {
			t.Fatalf("send: %v (open %v)", err, open)
		}
		for _, key := range []string{"a", "b"} {
			if got := bn.state(t, key); got.State != entoutbound.StateSent || got.Sends != 1 || got.SentAt == nil {
				t.Fatalf("%s after sending: %+v", key, got)
			}
		}
		if bn.b.signs != 2 || bn.b.sends != 2 || len(bn.h.sent) != 2 || len(bn.chain.Forwards()) != 2 {
			t.Fatalf("%d signatures, %d sends, handler %v, %d on chain; want 2, 2, [a b], 2", bn.b.signs, bn.b.sends, bn.h.sent, len(bn.chain.Forwards()))
		}
		// Sending the same rows again (a second caller, a retry) marks
		// nothing twice.
		if open, err := bn.e.SendPlanned(ctx, bn.tk, os); err != nil || open || len(bn.h.sent) != 2 || bn.b.sends != 2 {
			t.Fatalf("second send: %v (open %v), handler %v, %d sends", err, open, bn.h.sent, bn.b.sends)
		}

		bn.b.signErr = errors.New("keystore locked")
		c := bn.planAll(t, "0.5", "c")
		if got := bn.state(t, "c"); got.State != entoutbound.StatePlanned || hasBytes(got) {
			t.Fatalf("after a failed signature at planning: %+v; want planned, no bytes", got)
		}
		bn.b.signErr = nil
		if open, err := bn.e.SendPlanned(ctx, bn.tk, c); err != nil || open {
			t.Fatalf("send c: %v (open %v)", err, open)
		}
		if got := bn.state(t, "c"); got.State != entoutbound.StateSent || !hasBytes(got) || bn.b.signs != 4 || len(bn.h.sent) != 3 {
			t.Fatalf("c after sending: %+v; %d signatures, handler %v", got, bn.b.signs, bn.h.sent)
		}
	})
}

// TestTwoInstancesMarkSentOnce: two instances sending the same signed
// transactions at once both broadcast them (the same bytes, harmless), but
// each is marked sent, and handed to a handler, once.
func TestTwoInstancesMarkSentOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		one := newBench(t, db, Faults{})
		one.b.offline = true
		keys := make([]string, 50)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%02d", i)
		}
		os := one.planAll(t, "0.5", keys...)
		two := newBench(t, db, Faults{})
		two.b.Backend, two.chain = one.chain, one.chain
		// Each instance holds its own copies of the rows, as two
		// processes would.
		copies := make([]*entdb.Outbound, len(os))
		for i, o := range os {
			c := *o
			copies[i] = &c
		}
		errs := make(chan error, 2)
		go func() { _, err := one.e.SendPlanned(ctx, one.tk, os); errs <- err }()
		go func() { _, err := two.e.SendPlanned(ctx, two.tk, copies); errs <- err }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]int{}
		for _, k := range append(one.h.sent, two.h.sent...) {
			seen[k]++
		}
		for _, k := range keys {
			if seen[k] != 1 {
				t.Errorf("%s handed to a handler %d times; want once", k, seen[k])
			}
			if got := one.state(t, k); got.State != entoutbound.StateSent || got.Sends != 1 {
				t.Errorf("%s: %+v; want sent, marked once", k, got)
			}
		}
	})
}

// TestPlannedRowsReadBackAsReturned: PlanAll writes its rows by hand
// (store.InsertRows), so what it returns must be what ent reads back, field
// by field, on both dialects, for a transaction signed at planning (bytes,
// txid, signed) and one left planned.
func TestPlannedRowsReadBackAsReturned(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		for _, offline := range []bool{true, false} {
			bn := newBench(t, db, Faults{})
			bn.b.offline = offline
			key := fmt.Sprintf("readback-%v", offline)
			o, err := bn.plan(t, key, "0.5")
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Client.Outbound.Get(context.Background(), o.ID)
			if err != nil {
				t.Fatal(err)
			}
			if offline != (o.State == entoutbound.StateSigned) || offline != (o.SignedTx != nil) || offline != (o.Txid != "") {
				t.Fatalf("offline %v: returned state %s, txid %q, signed bytes %v", offline, o.State, o.Txid, o.SignedTx != nil)
			}
			same := got.Key == o.Key && got.Ticker == o.Ticker && got.Purpose == o.Purpose && got.ProjectID == o.ProjectID &&
				got.FromAddress == o.FromAddress && got.FromIndex == o.FromIndex && fmt.Sprint(got.Inputs) == fmt.Sprint(o.Inputs) &&
				fmt.Sprint(got.Outputs) == fmt.Sprint(o.Outputs) && got.NetworkFee.Equal(o.NetworkFee) && got.State == o.State &&
				bytes.Equal(deref(got.SignedTx), deref(o.SignedTx)) &&
				got.Txid == o.Txid && got.Sends == o.Sends && got.LastError == o.LastError && got.ReplacesID == nil &&
				got.SentAt == nil && got.LandedAt == nil && got.CreatedAt.Equal(o.CreatedAt) && got.UpdatedAt.Equal(o.UpdatedAt)
			if !same {
				t.Errorf("offline %v: read back %+v\nreturned %+v", offline, got, o)
			}
			// (ent reads a NULL bytes field as a pointer to nil bytes.)
			var null bool
			if err := db.SQL.QueryRowContext(context.Background(), "SELECT signed_tx IS NULL FROM outbounds WHERE id = "+fmt.Sprint(o.ID)).Scan(&null); err != nil {
				t.Fatal(err)
			}
			if null == offline {
				t.Errorf("offline %v: signed_tx IS NULL is %v", offline, null)
			}
		}
	})
}

func deref(b *[]byte) []byte {
	if b == nil {
		return nil
	}
	return *b
}

// TestLeftUntilResumed: a send that leaves a transaction open (a crash
// after its bytes are recorded) marks its ticker Left, so the watcher
// resumes it at its next poll whoever planned it; a Resume that finishes
// everything clears the mark, and one that leaves something open keeps it.
func TestLeftUntilResumed(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		crashes := 2
		bn := newBench(t, db, Faults{AfterRecord: func() error {
			if crashes > 0 {
				crashes--
				return errors.New("killed")
			}
			return nil
		}})
		if bn.e.Left(bn.tk) {
			t.Fatal("a fresh engine reports transactions left")
		}
		o := bn.mustPlan(t, "k1", "0.5")
		if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); err == nil {
			t.Fatal("the crash was not reported")
		}
		if !bn.e.Left(bn.tk) {
			t.Fatal("a send that left its transaction signed does not mark the ticker")
		}
		if open, err := bn.e.Resume(ctx, bn.tk); err == nil || !open || !bn.e.Left(bn.tk) {
			t.Fatalf("a resume that crashes again: %v (open %v), left %v", err, open, bn.e.Left(bn.tk))
		}
		if open, err := bn.e.Resume(ctx, bn.tk); err != nil || open || bn.e.Left(bn.tk) {
			t.Fatalf("a resume that finishes it: %v (open %v), left %v", err, open, bn.e.Left(bn.tk))
		}
	})
}
