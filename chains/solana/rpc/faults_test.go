package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/solana/rpc"
	"github.com/payhook/payhook/chains/solana/solanatest"
	"github.com/payhook/payhook/internal/clock"
)

// ticker returns the registry's sol or sol/usdc on regtest.
func ticker(t *testing.T, name string) chains.Ticker {
	t.Helper()
	tk, err := solanaRegistry(t).Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// addr returns the suite's i-th address of tk.
func addr(t *testing.T, tk chains.Ticker, i uint32) string {
	t.Helper()
	d, err := chains.NewDeriver(seed(), family.All())
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Address(tk, i)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fixture is a fake chain with a credited payment to address 0 and a
// signed, unsent forward of it.
type fixture struct {
	tk      chains.Ticker
	fake    *solanatest.Server
	b       *rpc.Backend
	d       *solanatest.Driver
	payment chains.Transfer
	signed  chains.Signed
	forward chains.Forward
}

func newFixture(t *testing.T, name string, cfg func(*rpc.Config)) *fixture {
	t.Helper()
	tk := ticker(t, name)
	fake, b, keys := newFake(t, tk, solanatest.Options{ConfirmedDepth: 1})
	if cfg != nil {
		c := rpc.Config{Ticker: tk, URL: fake.URL(), Keys: keys}
		if tk.Token {
			c.Mint = fake.Mint()
		}
		cfg(&c)
		var err error
		if b, err = rpc.New(c); err != nil {
			t.Fatal(err)
		}
	}
	d := solanatest.NewDriver(fake, b, tk, keys)
	ctx := t.Context()
	from := addr(t, tk, 0)
	value := tk.MinTransaction.Mul(decimal.NewFromInt(3))
	txid, err := d.Pay(from, value, false)
	if err != nil {
		t.Fatal(err)
	}
	mine(t, d, 5)
	trs, err := b.Transfers(ctx, 0, 5, nil)
	if err != nil || len(trs) != 1 || trs[0].TxID != txid {
		t.Fatalf("Transfers = %+v, %v; want the payment %s", trs, err, txid)
	}
	if err := d.FundOperator(); err != nil {
		t.Fatal(err)
	}
	f := chains.Forward{ID: "fixture", From: from, FromIndex: 0, Inputs: trs,
		Outputs: []chains.Output{{Address: addr(t, tk, 1), Amount: tk.MinTransaction}}, NetworkFee: tk.NetworkFeeEstimate}
	s, err := d.Sign(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{tk: tk, fake: fake, b: b, d: d, payment: trs[0], signed: s, forward: f}
}

// operations are the Backend calls that read the node (Send apart).
func (fx *fixture) operations() map[string]func(ctx context.Context) error {
	b := fx.b
	return map[string]func(ctx context.Context) error{
		"Head":       func(ctx context.Context) error { _, err := b.Head(ctx); return err },
		"Blocks":     func(ctx context.Context) error { _, err := b.Blocks(ctx, 0, 5); return err },
		"Transfers":  func(ctx context.Context) error { _, err := b.Transfers(ctx, 0, 5, nil); return err },
		"State":      func(ctx context.Context) error { _, err := b.State(ctx, fx.payment); return err },
		"NetworkFee": func(ctx context.Context) error { _, err := b.NetworkFee(ctx); return err },
		"Sign":       func(ctx context.Context) error { _, err := b.Sign(ctx, fx.forward); return err },
		"Probe":      func(ctx context.Context) error { _, err := b.Probe(ctx); return err },
	}
}

// methods lists the JSON-RPC methods the fake knows of.
var methods = []string{
	"getSlot", "getBlockHeight", "getBlocks", "getBlock", "getFirstAvailableBlock",
	"getSignaturesForAddress", "getTransaction", "getSignatureStatuses",
	"getLatestBlockhash", "getFeeForMessage", "getMultipleAccounts", "getAccountInfo",
	"getTokenAccountBalance", "getMinimumBalanceForRentExemption", "sendTransaction",
	"getGenesisHash", "getVersion",
}

// TestNodeFaults: whatever one method of the node does wrong (down, not
// JSON, wrong shape, null, an error, no answer), every operation that
// calls it fails with an error wrapping chains.ErrNode, without a panic,
// and the others are unaffected. Send of a forward not yet sent fails the
// same way when a method it needs misbehaves, and the forward is sent
// once the node answers again.
func TestNodeFaults(t *testing.T) {
	t.Parallel()
	faults := map[string]solanatest.Fault{
		"down": solanatest.FaultDown, "garbage": solanatest.FaultGarbage, "wrong shape": solanatest.FaultWrongShape,
		"null": solanatest.FaultNull, "error": solanatest.FaultError, "slow": solanatest.FaultSlow,
	}
	for _, name := range []string{"sol", "sol/usdc"} {
		for fname, fault := range faults {
			t.Run(name+"/"+fname, func(t *testing.T) {
				t.Parallel()
				fx := newFixture(t, name, func(c *rpc.Config) { c.Timeout = 100 * time.Millisecond })
				ctx := t.Context()
				ops := fx.operations()
				// Which methods each operation calls, from a run without
				// faults.
				uses := map[string]map[string]bool{}
				for op, run := range ops {
					before := calls(fx.fake)
					if err := run(ctx); err != nil {
						t.Fatalf("%s without faults: %v", op, err)
					}
					uses[op] = diff(before, calls(fx.fake))
				}
				for _, m := range methods {
					fx.fake.SetFault(m, fault)
					for op, run := range ops {
						err := run(ctx)
						switch {
						case uses[op][m] && err == nil:
							t.Errorf("%s with %s %s: no error", op, m, fname)
						case err != nil && !errors.Is(err, chains.ErrNode):
							t.Errorf("%s with %s %s: %v, want an error wrapping chains.ErrNode", op, m, fname, err)
						}
					}
					if m == "getSignatureStatuses" || m == "getBlockHeight" || m == "sendTransaction" {
						if err := fx.b.Send(ctx, fx.signed); !errors.Is(err, chains.ErrNode) {
							t.Errorf("Send with %s %s: %v, want an error wrapping chains.ErrNode", m, fname, err)
						}
					}
					fx.fake.SetFault(m, solanatest.FaultNone)
				}
				if err := fx.b.Send(ctx, fx.signed); err != nil {
					t.Fatalf("Send once the node is well: %v", err)
				}
				mine(t, fx.d, 1)
				if n := fx.fake.Included(fx.signed.TxID); n != 1 {
					t.Errorf("the forward is in %d slots, want 1", n)
				}
			})
		}
	}
}

func calls(s *solanatest.Server) map[string]int {
	out := map[string]int{}
	for _, m := range methods {
		out[m] = s.Calls(m)
	}
	return out
}

func diff(before, after map[string]int) map[string]bool {
	out := map[string]bool{}
	for m, n := range after {
		if n > before[m] {
			out[m] = true
		}
	}
	return out
}

// TestNodeDown: a node that is gone (closed server, nothing listening)
// gives errors wrapping chains.ErrNode from every operation, and the
// errors do not quote the URL's credentials.
func TestNodeDown(t *testing.T) {
	t.Parallel()
	fx := newFixture(t, "sol", func(c *rpc.Config) {
		c.URL = strings.Replace(c.URL, "http://", "http://user:s3cret-pass@", 1) + "/?api-key=s3cret-key"
	})
	fx.fake.Close()
	ctx := t.Context()
	ops := fx.operations()
	ops["Send"] = func(ctx context.Context) error { return fx.b.Send(ctx, fx.signed) }
	for op, run := range ops {
		err := run(ctx)
		if !errors.Is(err, chains.ErrNode) {
			t.Errorf("%s on a closed node: %v, want an error wrapping chains.ErrNode", op, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "s3cret") {
			t.Errorf("%s: error %q quotes a credential", op, msg)
		}
	}
}

// TestSlowNodeTimeout: a node that never answers is given up on after
// Config.Timeout, even when the caller's context has no deadline.
func TestSlowNodeTimeout(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "sol")
	fake := solanatest.New(solanatest.Options{})
	t.Cleanup(fake.Close)
	fake.SetFault("", solanatest.FaultSlow)
	b, err := rpc.New(rpc.Config{Ticker: tk, URL: fake.URL(), Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := clock.Now()
	_, err = b.Head(context.Background())
	if !errors.Is(err, chains.ErrNode) {
		t.Fatalf("Head on a silent node: %v, want an error wrapping chains.ErrNode", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Head gave up after %v; the timeout is 50ms", took)
	}
}

// TestHTTPErrorsWithoutJSON: an HTTP error status without a JSON-RPC body
// (a proxy in front of the node) is a node error naming the status.
func TestHTTPErrorsWithoutJSON(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusBadGateway, http.StatusUnauthorized} {
		srv := newHandlerServer(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", status) })
		b, err := rpc.New(rpc.Config{Ticker: ticker(t, "sol"), URL: srv})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Head(t.Context())
		if !errors.Is(err, chains.ErrNode) || !strings.Contains(err.Error(), "HTTP status") {
			t.Errorf("HTTP %d: %v", status, err)
		}
	}
}
