package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
)

// address returns the suite seed's payment address i of tk.
func (c *chain) address(i uint32) string {
	c.t.Helper()
	d, err := chains.NewDeriver(chaintestSeed(), family.All())
	if err != nil {
		c.t.Fatal(err)
	}
	a, err := d.Address(c.tk, i)
	if err != nil {
		c.t.Fatal(err)
	}
	return a
}

func (c *chain) mine(n int) int64 {
	c.t.Helper()
	h, err := c.node.mine(n)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

func (c *chain) state(txid, to string) chains.TxState {
	c.t.Helper()
	s, err := c.b.State(c.t.Context(), chains.Transfer{TxID: txid, To: to})
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

func (c *chain) transfers(after, upTo int64) []chains.Transfer {
	c.t.Helper()
	ts, err := c.b.Transfers(c.t.Context(), after, upTo, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return ts
}

func (c *chain) mustPay(to string, v decimal.Decimal, fail bool) string {
	c.t.Helper()
	txid, err := c.pay(to, v, fail)
	if err != nil {
		c.t.Fatal(err)
	}
	return txid
}

// TestAnvilReorg replaces the blocks of a payment with anvil_reorg (the
// height stays, the blocks are new and empty): the payment is no longer
// Present nor reported, the replaced blocks have new hashes that link up,
// and the blocks below keep theirs.
func TestAnvilReorg(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"eth", "erc20/usdt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newChain(t, ticker(t, name))
			to := c.address(0)
			c.mine(2)
			txid := c.mustPay(to, decimal.RequireFromString("7"), false)
			top := c.mine(3) // the payment is at top-2
			ctx := t.Context()
			before, err := c.b.Blocks(ctx, 0, top)
			if err != nil {
				t.Fatal(err)
			}
			if ts := c.transfers(top-3, top); len(ts) != 1 || ts[0].TxID != txid || ts[0].Height != top-2 || ts[0].BlockHash != before[top-3].Hash {
				t.Fatalf("before the reorg: transfers %+v, want %s at %d", ts, txid, top-2)
			}
			if s := c.state(txid, to); !s.Present || !s.Executed || s.Confirmations != 3 {
				t.Fatalf("before the reorg: state %+v", s)
			}

			c.node.must(t, nil, "anvil_reorg", 3, []any{})
			if h, _ := c.node.height(); h != top {
				t.Fatalf("anvil_reorg moved the height from %d to %d", top, h)
			}
			if s := c.state(txid, to); s.Present || s.Confirmations != 0 || s.Executed {
				t.Errorf("after the reorg: state %+v, want not present", s)
			}
			if ts := c.transfers(c.base, top); len(ts) != 0 {
				t.Errorf("after the reorg: transfers %+v, want none", ts)
			}
			after, err := c.b.Blocks(ctx, 0, top)
			if err != nil {
				t.Fatal(err)
			}
			head, err := c.b.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if head.Height != top || head.Hash != after[top-1].Hash || head.Hash == before[top-1].Hash {
				t.Errorf("head %+v after the reorg; want height %d, hash %s (was %s)", head, top, after[top-1].Hash, before[top-1].Hash)
			}
			for i, b := range after {
				if i > 0 && b.Parent != after[i-1].Hash {
					t.Errorf("block %d: parent %s, want %s", b.Height, b.Parent, after[i-1].Hash)
				}
				if replaced := b.Height > top-3; replaced == (b.Hash == before[i].Hash) {
					t.Errorf("block %d (replaced: %v): hash %s, was %s", b.Height, replaced, b.Hash, before[i].Hash)
				}
			}
			c.mine(2)
			if s := c.state(txid, to); s.Present {
				t.Errorf("the dropped payment came back: %+v", s)
			}
		})
	}
}

// TestExecutionFailure: a native transfer whose execution reverts is
// reported and judged present but not executed; a reverted token transfer
// emits no log, so it is not reported, and its own state is not executed.
func TestExecutionFailure(t *testing.T) {
	t.Parallel()
	t.Run("eth", func(t *testing.T) {
		t.Parallel()
		c := newChain(t, ticker(t, "eth"))
		to := c.address(0)
		c.node.must(t, nil, "anvil_setCode", common.HexToAddress(to), revertCode)
		bad := c.mustPay(to, decimal.RequireFromString("1"), false)
		good := c.mustPay(c.address(1), decimal.RequireFromString("2"), false)
		top := c.mine(2)
		ts := c.transfers(0, top)
		if len(ts) != 2 || ts[0].TxID != bad || ts[1].TxID != good {
			t.Fatalf("transfers %+v, want %s then %s", ts, bad, good)
		}
		if s := c.state(bad, to); !s.Present || s.Executed || s.Confirmations != 2 {
			t.Errorf("reverted transfer: state %+v, want present, not executed, 2 confirmations", s)
		}
		if s := c.state(good, c.address(1)); !s.Present || !s.Executed || s.Confirmations != 2 {
			t.Errorf("good transfer: state %+v", s)
		}
		if got := c.node.balance(t, common.HexToAddress(to)); got.Sign() != 0 {
			t.Errorf("the reverted transfer moved %s wei", got)
		}
	})
	t.Run("erc20/usdt", func(t *testing.T) {
		t.Parallel()
		c := newChain(t, ticker(t, "erc20/usdt"))
		to := c.address(0)
		bad := c.mustPay(to, decimal.RequireFromString("1"), true)
		top := c.mine(1)
		if ts := c.transfers(c.base, top); len(ts) != 0 {
			t.Errorf("transfers %+v, want none", ts)
		}
		if s := c.state(bad, to); !s.Present || s.Executed || s.Confirmations != 1 {
			t.Errorf("reverted token transfer: state %+v, want present, not executed", s)
		}
		// A successful transfer to someone else is not an execution to `to`.
		other := c.mustPay(c.address(1), decimal.RequireFromString("1"), false)
		c.mine(1)
		if s := c.state(other, to); !s.Present || s.Executed {
			t.Errorf("transfer to another address, judged for %s: %+v", to, s)
		}
	})
}

// TestProbe checks the node's chain id against the ticker's network.
func TestProbe(t *testing.T) {
	t.Parallel()
	an := nodetest.StartAnvil(t)
	keys := testKeys(t)
	eth := ticker(t, "eth")
	mainnet := eth
	mainnet.Net = chains.Mainnet
	tests := []struct {
		name    string
		cfg     jsonrpc.Config
		wantErr error
	}{
		{"regtest accepts anvil", jsonrpc.Config{Ticker: eth, URL: an.URL}, nil},
		{"regtest with anvil's chain id", jsonrpc.Config{Ticker: eth, URL: an.URL + "?chain_id=31337"}, nil},
		{"regtest with another chain id", jsonrpc.Config{Ticker: eth, URL: an.URL, ChainID: 1337}, chains.ErrWrongNetwork},
		{"mainnet refuses anvil", jsonrpc.Config{Ticker: mainnet, URL: an.URL, Keys: keys}, chains.ErrWrongNetwork},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := jsonrpc.New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			info, err := b.Probe(t.Context())
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Probe: %+v, %v; want %v", info, err, tt.wantErr)
			}
			if err == nil && (info.Network != strconv.Itoa(nodetest.AnvilChainID) || info.Version == "" || info.Height != 0) {
				t.Errorf("Probe: %+v", info)
			}
			if tt.cfg.Keys == nil {
				return
			}
			// Sign asks the chain id too, and refuses the wrong network.
			from, err := keys.Secp256k1(tt.cfg.Ticker, 0)
			if err != nil {
				t.Fatal(err)
			}
			addr, err := chains.PubKeyAddress(tt.cfg.Ticker, from.PubKey())
			if err != nil {
				t.Fatal(err)
			}
			f := chains.Forward{ID: "f", From: addr, Outputs: []chains.Output{{Address: addr, Amount: decimal.RequireFromString("1")}}}
			if _, err := b.Sign(t.Context(), f); !errors.Is(err, chains.ErrWrongNetwork) {
				t.Errorf("Sign on the wrong network: %v", err)
			}
		})
	}
}

func testKeys(t testing.TB) *chains.Keys {
	t.Helper()
	k, err := chains.NewKeys(chaintestSeed())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// rawTxs decodes Signed.Raw.
func rawTxs(t testing.TB, s chains.Signed) []hexutil.Bytes {
	t.Helper()
	var raws []hexutil.Bytes
	if err := json.Unmarshal(s.Raw, &raws); err != nil {
		t.Fatal(err)
	}
	return raws
}

// TestSign covers the forwards Sign refuses and what a signed forward
// pays, natively and in tokens.
func TestSign(t *testing.T) {
	t.Parallel()
	t.Run("native", func(t *testing.T) {
		t.Parallel()
		c := newChain(t, ticker(t, "eth"))
		ctx := t.Context()
		from, to1, to2 := c.address(0), c.address(1), c.address(2)
		c.mustPay(from, decimal.RequireFromString("1"), false)
		c.mine(1)

		watchOnly := c.backend(t, jsonrpc.Config{Ticker: c.tk, URL: c.url})
		odd := decimal.RequireFromString("0.123456789012345678")
		f := chains.Forward{ID: "native-1", From: from, Outputs: []chains.Output{{Address: to1, Amount: odd}, {Address: to2, Amount: decimal.RequireFromString("0.5")}}}
		if _, err := watchOnly.Sign(ctx, f); !errors.Is(err, jsonrpc.ErrWatchOnly) {
			t.Errorf("watch-only Sign: %v", err)
		}
		wrongIndex := f
		wrongIndex.FromIndex = 1
		tooMuch := f
		tooMuch.Outputs = []chains.Output{{Address: to1, Amount: decimal.RequireFromString("1")}} // leaves nothing for gas
		for name, bad := range map[string]chains.Forward{"wrong index": wrongIndex, "too much": tooMuch} {
			if _, err := c.b.Sign(ctx, bad); !errors.Is(err, chains.ErrInvalidForward) {
				t.Errorf("Sign with %s: %v, want ErrInvalidForward", name, err)
			}
		}

		s, err := c.b.Sign(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rawTxs(t, s)); n != 2 {
			t.Fatalf("%d transactions for 2 outputs", n)
		}
		for range 2 {
			if err := c.b.Send(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		c.mine(1)
		if err := c.b.Send(ctx, s); err != nil {
			t.Errorf("Send after mining: %v", err)
		}
		for _, o := range f.Outputs {
			if got, want := c.node.balance(t, common.HexToAddress(o.Address)), units(c.tk, o.Amount); got.Cmp(want) != 0 {
				t.Errorf("%s received %s wei, want %s", o.Address, got, want)
			}
		}
		if st := c.state(s.TxID, to1); !st.Present || !st.Executed {
			t.Errorf("forward %s: state %+v", s.TxID, st)
		}
		// Two forwards signed before either was sent share a nonce: once the
		// first is mined the second fails, and is not declared dead (the
		// node cannot tell "replaced" from "mined and pruned").
		c.mustPay(from, decimal.RequireFromString("1"), false)
		c.mine(1)
		g1 := chains.Forward{ID: "native-2", From: from, Outputs: []chains.Output{{Address: to1, Amount: decimal.RequireFromString("0.1")}}}
		g2 := chains.Forward{ID: "native-3", From: from, Outputs: []chains.Output{{Address: to2, Amount: decimal.RequireFromString("0.2")}}}
		s1, err := c.b.Sign(ctx, g1)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := c.b.Sign(ctx, g2)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.b.Send(ctx, s1); err != nil {
			t.Fatal(err)
		}
		c.mine(1)
		if err := c.b.Send(ctx, s2); err == nil || errors.Is(err, chains.ErrNeverLands) {
			t.Errorf("Send of a forward whose nonce was used: %v, want an error that is not chains.ErrNeverLands", err)
		}
		if err := c.b.Send(ctx, s1); err != nil {
			t.Errorf("Send of the mined forward again: %v", err)
		}
		for name, raw := range map[string][]byte{"not JSON": []byte("x"), "empty": []byte("[]"), "not a transaction": []byte(`["0x1234"]`)} {
			if err := c.b.Send(ctx, chains.Signed{Raw: raw}); !errors.Is(err, chains.ErrInvalidForward) {
				t.Errorf("Send of %s: %v", name, err)
			}
		}
	})

	t.Run("token", func(t *testing.T) {
		t.Parallel()
		c := newChain(t, ticker(t, "erc20/usdt"))
		ctx := t.Context()
		from, to1 := c.address(0), c.address(1)
		c.mustPay(from, decimal.RequireFromString("10"), false)
		c.mine(1)
		f := chains.Forward{ID: "token-1", From: from, Outputs: []chains.Output{{Address: to1, Amount: decimal.RequireFromString("4.000001")}}}

		tooMuch := f
		tooMuch.Outputs = []chains.Output{{Address: to1, Amount: decimal.RequireFromString("10.000001")}}
		if _, err := c.b.Sign(ctx, tooMuch); !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("Sign beyond the token balance: %v", err)
		}
		if _, err := c.b.Sign(ctx, f); !errors.Is(err, jsonrpc.ErrOperatorFunds) {
			t.Errorf("Sign with an unfunded operator: %v", err)
		}

		op, err := c.keys.OperatorAddress(c.tk)
		if err != nil {
			t.Fatal(err)
		}
		c.node.must(t, nil, "anvil_setBalance", common.HexToAddress(op), hexutil.EncodeBig(ether(1)))
		s, err := c.b.Sign(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rawTxs(t, s)); n != 2 {
			t.Fatalf("%d transactions, want the top-up and the transfer", n)
		}
		if err := c.b.Send(ctx, s); !errors.Is(err, chains.ErrNode) {
			t.Fatalf("Send before the top-up is in a block: %v, want ErrNode", err)
		}
		c.mine(1)
		if err := c.b.Send(ctx, s); err != nil {
			t.Fatal(err)
		}
		c.mine(1)
		if got, want := c.node.tokenBalance(t, c.token, common.HexToAddress(to1)), units(c.tk, f.Outputs[0].Amount); got.Cmp(want) != 0 {
			t.Errorf("%s received %s, want %s", to1, got, want)
		}

		// What the top-up left on From pays the next forward's gas: no
		// second top-up.
		f2 := chains.Forward{ID: "token-2", From: from, Outputs: []chains.Output{{Address: to1, Amount: decimal.RequireFromString("0.000001")}}}
		c.node.must(t, nil, "anvil_setBalance", common.HexToAddress(from), hexutil.EncodeBig(ether(1)))
		s2, err := c.b.Sign(ctx, f2)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(rawTxs(t, s2)); n != 1 {
			t.Errorf("%d transactions, want the transfer alone", n)
		}
		if err := c.b.Send(ctx, s2); err != nil {
			t.Fatal(err)
		}
	})
}

// chaintestSeed is the seed of chaintest's addresses.
func chaintestSeed() []byte { return chaintest.Seed }
