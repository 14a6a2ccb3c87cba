package devnet_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"go.uber.org/goleak"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/devnet"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/internal/startstop"
)

// TestMain fails the run if a goroutine (the devnet's mining loop or any
// other) outlives the tests; goleak retries while a goroutine that Stop has
// waited for is still returning.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var seed = []byte("devnet tests")

// TestConformance runs the chaintest suite against the simulator.
func TestConformance(t *testing.T) {
	t.Parallel()
	chaintest.Run(t, func(t *testing.T, tk chains.Ticker) chaintest.Driver {
		return devnet.NewChain(tk, devnet.Options{Seed: seed})
	})
}

// TestConformanceOtherDepths runs the suite with non-default TRON and
// Solana depths (a solidified lag beyond the TRX distribution depth, and
// mainnet-like finality), so it does not merely pin the defaults.
func TestConformanceOtherDepths(t *testing.T) {
	t.Parallel()
	opts := devnet.Options{TronSolidLag: 27, SolanaConfirmedDepth: 4, SolanaFinalizedDepth: 32}
	chaintest.Run(t, func(t *testing.T, tk chains.Ticker) chaintest.Driver {
		return devnet.NewChain(tk, opts)
	})
}

func ticker(t *testing.T, name string) chains.Ticker {
	t.Helper()
	tk, err := family.DefaultRegistry().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func address(t *testing.T, tk chains.Ticker, i uint32) string {
	t.Helper()
	d, err := chains.NewDeriver([]byte("0123456789abcdef0123456789abcdef"), family.All())
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Address(tk, i)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestPayValidation(t *testing.T) {
	t.Parallel()
	one := decimal.NewFromInt(1)
	tests := []struct {
		name    string
		ticker  string
		to      string // "" for a valid address
		value   decimal.Decimal
		fail    bool
		wantErr []error
	}{
		{"valid btc", "btc", "", one, false, nil},
		{"valid failed eth", "eth", "", one, true, nil},
		{"valid failed trc20", "trc20/usdt", "", one, true, nil},
		{"invalid address", "btc", "bc1qnotanaddress", one, false, []error{devnet.ErrInvalidPayment, chains.ErrInvalidAddress}},
		{"another network's address", "eth", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", one, false, []error{devnet.ErrInvalidPayment, chains.ErrInvalidAddress}},
		{"zero value", "btc", "", decimal.Zero, false, []error{devnet.ErrInvalidPayment}},
		{"negative value", "sol", "", one.Neg(), false, []error{devnet.ErrInvalidPayment}},
		{"below the smallest unit", "btc", "", decimal.New(1, -9), false, []error{devnet.ErrInvalidPayment}},
		{"failure on utxo", "btc", "", one, true, []error{devnet.ErrInvalidPayment}},
		{"failure on solana", "sol/usdc", "", one, true, []error{devnet.ErrInvalidPayment}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := ticker(t, tt.ticker)
			to := tt.to
			if to == "" {
				to = address(t, tk, 0)
			}
			c := devnet.NewChain(tk, devnet.Options{})
			txid, err := c.Pay(to, tt.value, tt.fail)
			if tt.wantErr == nil {
				if err != nil || txid == "" {
					t.Fatalf("Pay: %q, %v", txid, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Pay: %q, no error", txid)
			}
			for _, w := range tt.wantErr {
				if !errors.Is(err, w) {
					t.Errorf("Pay: %v, want it to wrap %v", err, w)
				}
			}
			t.Log(err) // the message, for the reader
		})
	}
}

func TestMineAndReorgBounds(t *testing.T) {
	t.Parallel()
	c := devnet.NewChain(ticker(t, "btc"), devnet.Options{})
	for _, n := range []int{0, -1, devnet.MaxMine + 1} {
		if _, err := c.Mine(n); !errors.Is(err, devnet.ErrInvalidCount) {
			t.Errorf("Mine(%d): %v, want ErrInvalidCount", n, err)
		}
	}
	if h, err := c.Mine(devnet.MaxMine); err != nil || h != devnet.MaxMine {
		t.Fatalf("Mine(%d): %d, %v", devnet.MaxMine, h, err)
	}
	for _, n := range []int{0, -1, devnet.MaxMine + 1} {
		if _, err := c.Reorg(n); !errors.Is(err, devnet.ErrInvalidCount) {
			t.Errorf("Reorg(%d): %v, want ErrInvalidCount", n, err)
		}
	}
	if c.Height() != devnet.MaxMine {
		t.Errorf("a failed Reorg changed the height to %d", c.Height())
	}
	if h, err := c.Reorg(devnet.MaxMine); err != nil || h != 0 {
		t.Errorf("Reorg of the whole chain: %d, %v", h, err)
	}
	if _, err := c.Reorg(1); !errors.Is(err, devnet.ErrInvalidCount) {
		t.Errorf("Reorg of an empty chain: %v", err)
	}
}

func TestTransfersRange(t *testing.T) {
	t.Parallel()
	c := devnet.NewChain(ticker(t, "eth"), devnet.Options{})
	ctx := t.Context()
	mine(t, c, 5)
	for _, r := range [][2]int64{{-1, 3}, {3, 2}, {0, 6}} {
		if _, err := c.Transfers(ctx, r[0], r[1], nil); !errors.Is(err, devnet.ErrInvalidRange) {
			t.Errorf("Transfers(%d, %d): %v, want ErrInvalidRange", r[0], r[1], err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Head(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("Head with a cancelled context: %v", err)
	}
}

// TestFailedExecutionIsReported pins the documented choice: a failed EVM or
// TRON execution, token or native, is reported by Transfers and judged by
// State (Executed false), and does not take a log index.
func TestFailedExecutionIsReported(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"eth", "erc20/usdt", "trx", "trc20/usdt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tk := ticker(t, name)
			c := devnet.NewChain(tk, devnet.Options{})
			ctx := t.Context()
			a := address(t, tk, 0)
			ok1, _ := c.Pay(a, decimal.NewFromInt(1), false)
			bad, _ := c.Pay(a, decimal.NewFromInt(2), true)
			ok2, _ := c.Pay(a, decimal.NewFromInt(3), false)
			mine(t, c, 2)
			ts, err := c.Transfers(ctx, 0, 2, nil)
			if err != nil || len(ts) != 3 {
				t.Fatalf("Transfers: %+v, %v", ts, err)
			}
			wantIndex := map[string]int64{ok1: 0, bad: 0, ok2: 0}
			if tk.Token {
				wantIndex[ok2] = 1 // the failed transfer emitted no log
			}
			for _, tr := range ts {
				if tr.Index != wantIndex[tr.TxID] {
					t.Errorf("%s: index %d, want %d", tr.TxID, tr.Index, wantIndex[tr.TxID])
				}
				s, err := c.State(ctx, tr)
				if err != nil {
					t.Fatal(err)
				}
				// Off TRON every included block is solidified; on TRON two
				// blocks are far above the solidified head.
				want := chains.TxState{Present: true, Confirmations: 2, Executed: tr.TxID != bad, Solidified: tk.Family != chains.FamilyTron}
				if s != want {
					t.Errorf("%s: state %+v, want %+v", tr.TxID, s, want)
				}
			}
		})
	}
}

func TestTronSolidLag(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "trc20/usdt")
	for _, lag := range []int64{0, 5} {
		c := devnet.NewChain(tk, devnet.Options{TronSolidLag: lag})
		want := lag
		if lag == 0 {
			want = devnet.DefaultTronSolidLag
		}
		ctx := t.Context()
		txid, _ := c.Pay(address(t, tk, 0), decimal.NewFromInt(5), false)
		for h := int64(1); h <= want+3; h++ {
			mine(t, c, 1)
			head, _ := c.Head(ctx)
			if head.Height != h || head.Solidified != max(0, h-want) {
				t.Errorf("lag %d: head %+v at height %d, want solidified %d", want, head, h, max(0, h-want))
			}
			s, _ := c.State(ctx, chains.Transfer{TxID: txid})
			if s.Solidified != (h > want) {
				t.Errorf("lag %d: height %d: solidified %v", want, h, s.Solidified)
			}
		}
	}
	head, _ := devnet.NewChain(ticker(t, "btc"), devnet.Options{}).Head(t.Context())
	if head != (chains.Head{}) {
		t.Errorf("fresh btc head %+v", head)
	}
}

func TestSolanaCommitmentProgression(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts devnet.Options
		want []chains.Commitment // by depth, from 0 (waiting for a slot)
	}{
		{"defaults", devnet.Options{}, []chains.Commitment{
			chains.CommitmentNone, chains.CommitmentProcessed, chains.CommitmentConfirmed,
			chains.CommitmentFinalized, chains.CommitmentFinalized,
		}},
		{"slower", devnet.Options{SolanaConfirmedDepth: 3, SolanaFinalizedDepth: 5}, []chains.Commitment{
			chains.CommitmentNone, chains.CommitmentProcessed, chains.CommitmentProcessed, chains.CommitmentConfirmed,
			chains.CommitmentConfirmed, chains.CommitmentFinalized,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk := ticker(t, "sol")
			c := devnet.NewChain(tk, tt.opts)
			ctx := t.Context()
			txid, _ := c.Pay(address(t, tk, 0), decimal.NewFromInt(1), false)
			for depth, want := range tt.want {
				if depth > 0 {
					mine(t, c, 1)
				}
				s, err := c.State(ctx, chains.Transfer{TxID: txid})
				if err != nil {
					t.Fatal(err)
				}
				if s.Commitment != want || s.Confirmations != int64(depth) || !s.Present || !s.Executed || (depth > 0 && !s.Solidified) {
					t.Errorf("depth %d: %+v, want commitment %s", depth, s, want)
				}
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	bad := []devnet.Options{
		{TronSolidLag: -1},
		{SolanaConfirmedDepth: -1},
		{SolanaConfirmedDepth: 5, SolanaFinalizedDepth: 4},
		{SolanaFinalizedDepth: 1}, // below the default confirmed depth
	}
	for _, o := range bad {
		if err := o.Validate(); !errors.Is(err, devnet.ErrInvalidOptions) {
			t.Errorf("Validate(%+v): %v", o, err)
		}
	}
	if err := (devnet.Options{}).Validate(); err != nil {
		t.Errorf("zero Options: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("NewChain with invalid options did not panic")
		}
	}()
	devnet.NewChain(ticker(t, "sol"), bad[2])
}

func TestHashes(t *testing.T) {
	t.Parallel()
	formats := map[chains.FamilyName]*regexp.Regexp{
		chains.FamilyUTXO:   regexp.MustCompile(`^[0-9a-f]{64}$`),
		chains.FamilyTron:   regexp.MustCompile(`^[0-9a-f]{64}$`),
		chains.FamilyEVM:    regexp.MustCompile(`^0x[0-9a-f]{64}$`),
		chains.FamilySolana: regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{86,88}$`),
	}
	reg := family.DefaultRegistry()
	a := devnet.New(reg, devnet.Options{Seed: seed})
	b := devnet.New(reg, devnet.Options{Seed: seed})
	r := devnet.New(reg, devnet.Options{})
	seen := map[string]bool{}
	for _, tk := range reg.All() {
		to := address(t, tk, 0)
		ca, _ := a.Chain(tk.Ticker)
		cb, _ := b.Chain(strings.ToUpper(tk.Ticker))
		cr, _ := r.Chain(tk.Ticker)
		for range 3 {
			ha, err := ca.Pay(to, decimal.NewFromInt(1), false)
			if err != nil {
				t.Fatal(err)
			}
			hb, _ := cb.Pay(to, decimal.NewFromInt(1), false)
			hr, _ := cr.Pay(to, decimal.NewFromInt(1), false)
			if ha != hb {
				t.Errorf("%s: same seed, hashes %s and %s", tk.Ticker, ha, hb)
			}
			if ha == hr {
				t.Errorf("%s: a random seed repeated hash %s", tk.Ticker, ha)
			}
			if !formats[tk.Family].MatchString(ha) {
				t.Errorf("%s: hash %q", tk.Ticker, ha)
			}
			if seen[ha] {
				t.Errorf("%s: hash %s repeated", tk.Ticker, ha)
			}
			seen[ha] = true
		}
	}
	if _, ok := a.Chain("nope"); ok {
		t.Error("Chain of an unknown ticker")
	}
	if n := len(a.Chains()); n != len(reg.All()) {
		t.Errorf("%d chains for %d tickers", n, len(reg.All()))
	}
}

func TestSendRecordsOnce(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "trc20/usdt")
	c := devnet.NewChain(tk, devnet.Options{})
	ctx := t.Context()
	f := chains.Forward{ID: "f1", From: address(t, tk, 0), Outputs: []chains.Output{{Address: address(t, tk, 1), Amount: decimal.NewFromInt(9)}}}
	s, err := c.Sign(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Sign(ctx, f); again.TxID != s.TxID {
		t.Errorf("Sign of one ID twice: %q then %q", s.TxID, again.TxID)
	}
	if len(c.Forwards()) != 0 {
		t.Error("Sign recorded a forward")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := c.Send(ctx, s); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f.Outputs[0].Amount = decimal.NewFromInt(1) // must not alter the record
	fs := c.Forwards()
	if len(fs) != 1 || fs[0].ID != "f1" || !fs[0].Outputs[0].Amount.Equal(decimal.NewFromInt(9)) {
		t.Errorf("Forwards: %+v", fs)
	}
	if _, err := c.Sign(ctx, chains.Forward{ID: "f2", From: f.From}); !errors.Is(err, devnet.ErrInvalidForward) {
		t.Errorf("Sign without outputs: %v", err)
	}
	if err := c.Send(ctx, chains.Signed{TxID: "x", Raw: []byte("garbage")}); !errors.Is(err, devnet.ErrInvalidForward) {
		t.Errorf("Send of garbage: %v", err)
	}
	if fee, err := c.NetworkFee(ctx); err != nil || !fee.Equal(tk.NetworkFeeEstimate) {
		t.Errorf("NetworkFee: %s, %v; want %s", fee, err, tk.NetworkFeeEstimate)
	}
}

func TestBlockTimeUsesClock(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	now := t0
	c := devnet.NewChain(ticker(t, "btc"), devnet.Options{Clock: func() time.Time { now = now.Add(time.Minute); return now }})
	mine(t, c, 2)
	if got, ok := c.BlockTime(2); !ok || !got.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("BlockTime(2): %v, %v", got, ok)
	}
	if _, ok := c.BlockTime(3); ok {
		t.Error("BlockTime beyond the tip")
	}
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	d := devnet.New(family.DefaultRegistry(), devnet.Options{})
	if err := d.Start(t.Context(), 0); !errors.Is(err, devnet.ErrInvalidBlockTime) {
		t.Errorf("Start with no block time: %v", err)
	}
	if err := d.Start(t.Context(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := d.Start(t.Context(), time.Millisecond); !errors.Is(err, startstop.ErrStarted) {
		t.Errorf("second Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, c := range d.Chains() {
		if _, err := c.WaitHeight(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	d.Stop()
	d.Stop() // idempotent; TestMain checks that the goroutine is gone
	btc, _ := d.Chain("btc")
	h := btc.Height()
	if _, err := btc.Mine(1); err != nil || btc.Height() != h+1 {
		t.Errorf("manual Mine after Stop: height %d, %v", btc.Height(), err)
	}
	if err := d.Start(t.Context(), time.Millisecond); !errors.Is(err, startstop.ErrStarted) {
		t.Errorf("Start after Stop: %v", err)
	}
}

func TestStartEndsWithContext(t *testing.T) {
	t.Parallel()
	d := devnet.New(family.DefaultRegistry(), devnet.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	if err := d.Start(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	sol, _ := d.Chain("sol")
	wait, cancelWait := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancelWait()
	if _, err := sol.WaitHeight(wait, 2); err != nil {
		t.Fatal(err)
	}
	cancel()
	d.Stop() // returns once the goroutine, already ending, has exited
	d2 := devnet.New(family.DefaultRegistry(), devnet.Options{})
	d2.Stop() // never started: returns at once
	if err := d2.Start(t.Context(), time.Millisecond); !errors.Is(err, startstop.ErrStarted) {
		t.Errorf("Start after Stop: %v", err)
	}
}

func TestWaitHeightDeadline(t *testing.T) {
	t.Parallel()
	c := devnet.NewChain(ticker(t, "ltc"), devnet.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if h, err := c.WaitHeight(ctx, 1); !errors.Is(err, context.Canceled) || h != 0 {
		t.Errorf("WaitHeight on a cancelled context: %d, %v", h, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.WaitHeight(t.Context(), 2)
		done <- err
	}()
	mine(t, c, 2)
	if err := <-done; err != nil {
		t.Errorf("WaitHeight: %v", err)
	}
}

// mine mines n blocks on c, failing the test when c refuses: a refused
// Mine would leave the test checking the chain as it was.
func mine(t *testing.T, c *devnet.Chain, n int) {
	t.Helper()
	if _, err := c.Mine(n); err != nil {
		t.Fatalf("mine %d: %v", n, err)
	}
}

// TestSpendFromSeveralAddresses: a UTXO transaction spends outputs of
// several addresses (From and Keys); each address's balance loses its own
// inputs; an output back to one of them (a payout's change) is a transfer
// of the next block; an input on an address neither From nor in Keys, or
// on another account of an account chain, is refused.
func TestSpendFromSeveralAddresses(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "ltc")
	c := devnet.NewChain(tk, devnet.Options{})
	ctx := t.Context()
	a, b, dest := address(t, tk, 0), address(t, tk, 1), address(t, tk, 2)
	ta, _ := c.Pay(a, decimal.RequireFromString("1"), false)
	tb, _ := c.Pay(b, decimal.RequireFromString("2"), false)
	if _, err := c.Mine(1); err != nil {
		t.Fatal(err)
	}
	f := chains.Forward{ID: "payout", From: a, FromIndex: 0, Keys: map[string]uint32{b: 1},
		Inputs:     []chains.Transfer{{TxID: ta, To: a, Value: decimal.RequireFromString("1")}, {TxID: tb, To: b, Value: decimal.RequireFromString("2")}},
		Outputs:    []chains.Output{{Address: dest, Amount: decimal.RequireFromString("2.5")}, {Address: a, Amount: decimal.RequireFromString("0.4")}},
		NetworkFee: decimal.RequireFromString("0.1")}
	s, err := c.Sign(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := c.Balance(b); !got.IsZero() {
		t.Errorf("balance of the second input address: %s, want 0", got)
	}
	if got := c.Balance(a); !got.IsZero() {
		t.Errorf("balance of From before the change is mined: %s, want 0", got)
	}
	h, err := c.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Balance(a); !got.Equal(decimal.RequireFromString("0.4")) {
		t.Errorf("balance of From with its change: %s, want 0.4", got)
	}
	trs, err := c.Transfers(ctx, h-1, h, func(addr string) bool { return addr == a || addr == b })
	if err != nil || len(trs) != 1 || trs[0].To != a || !trs[0].Value.Equal(decimal.RequireFromString("0.4")) {
		t.Errorf("transfers of the change block: %+v, %v", trs, err)
	}
	if fee, err := c.FeeFor(ctx, 2, 2); err != nil || !fee.Equal(tk.NetworkFeeEstimate) {
		t.Errorf("FeeFor: %s, %v", fee, err)
	}
	if _, err := c.FeeFor(ctx, 0, 1); !errors.Is(err, devnet.ErrInvalidCount) {
		t.Errorf("FeeFor of no inputs: %v", err)
	}

	stranger := f
	stranger.ID, stranger.Keys = "stranger", nil
	if _, err := c.Sign(ctx, stranger); !errors.Is(err, devnet.ErrInvalidForward) {
		t.Errorf("an input on an address neither From nor in Keys: %v", err)
	}
	eth := ticker(t, "eth")
	e := devnet.NewChain(eth, devnet.Options{})
	ea, eb := address(t, eth, 0), address(t, eth, 1)
	ef := chains.Forward{ID: "e", From: ea, Keys: map[string]uint32{eb: 1},
		Inputs:  []chains.Transfer{{TxID: "0x01", To: eb, Value: decimal.NewFromInt(1)}},
		Outputs: []chains.Output{{Address: ea, Amount: decimal.NewFromInt(1)}}}
	if _, err := e.Sign(ctx, ef); !errors.Is(err, devnet.ErrInvalidForward) {
		t.Errorf("an account-chain input on another account: %v", err)
	}
}
