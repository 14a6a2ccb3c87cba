package bitcoind_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/utxo/bitcoind"
)

// regtestLTC returns the registry with ltc on regtest, and its ticker.
func regtestLTC(t testing.TB) (*chains.Registry, chains.Ticker) {
	t.Helper()
	reg, err := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := reg.Lookup("ltc")
	return reg, tk
}

// TestConformanceLitecoind runs the chaintest suite against a real
// litecoind in regtest: a fresh node per scenario.
func TestConformanceLitecoind(t *testing.T) {
	reg, _ := regtestLTC(t)
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	chaintest.RunRegistry(t, reg, func(t *testing.T, tk chains.Ticker) chaintest.Driver {
		if tk.Ticker != "ltc" {
			t.Skipf("%s: the litecoind suite covers ltc only", tk.Ticker)
		}
		return newDriver(t, tk, keys)
	})
}

// driver drives a litecoind for chaintest. It presents heights relative to
// the height at which it was made (the node needs 101 blocks before its
// wallet can pay), mines with generateblock so that transactions a
// reorganisation dropped are never included again (bitcoind would put them
// back from its mempool), and reads all-transfers (watched nil) as
// transfers to the addresses it paid, since a real block also pays change
// and coinbase outputs.
type driver struct {
	*bitcoind.Backend
	n    *nodetest.Litecoind
	base int64
	gone map[string]bool
	paid map[string]bool
	ctx  context.Context
}

var (
	_ chaintest.Driver  = (*driver)(nil)
	_ chaintest.OnChain = (*driver)(nil)
)

func newDriver(t *testing.T, tk chains.Ticker, keys *chains.Keys) *driver {
	n := nodetest.StartLitecoind(t, 110) // ten spendable coinbases: payments between blocks spend separate coins
	b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: n.URL, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{Backend: b, n: n, gone: map[string]bool{}, paid: map[string]bool{}, ctx: t.Context()}
	h, err := b.Head(d.ctx)
	if err != nil {
		t.Fatal(err)
	}
	d.base = h.Height
	return d
}

func (d *driver) Head(ctx context.Context) (chains.Head, error) {
	h, err := d.Backend.Head(ctx)
	if err != nil {
		return h, err
	}
	h.Height -= d.base
	h.Solidified -= d.base
	if h.Height == 0 {
		h.Hash = ""
	}
	return h, nil
}

func (d *driver) Transfers(ctx context.Context, after, upTo int64, watched func(string) bool) ([]chains.Transfer, error) {
	if after < 0 {
		return nil, fmt.Errorf("%w: negative height", chains.ErrNode)
	}
	if watched == nil {
		watched = func(a string) bool { return d.paid[a] }
	}
	ts, err := d.Backend.Transfers(ctx, after+d.base, upTo+d.base, watched)
	for i := range ts {
		ts[i].Height -= d.base
	}
	return ts, err
}

func (d *driver) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if after < 0 {
		return nil, fmt.Errorf("%w: negative height", chains.ErrNode)
	}
	bs, err := d.Backend.Blocks(ctx, after+d.base, upTo+d.base)
	for i := range bs {
		bs[i].Height -= d.base
		if bs[i].Height == 1 {
			bs[i].Parent = ""
		}
	}
	return bs, err
}

func (d *driver) Pay(to string, v decimal.Decimal, fail bool) (string, error) {
	if fail {
		return "", fmt.Errorf("a UTXO transfer in a block cannot fail")
	}
	var txid string
	if err := d.n.Call(&txid, "sendtoaddress", to, json.Number(v.String())); err != nil {
		return "", err
	}
	d.paid[to] = true
	return txid, nil
}

func (d *driver) Mine(n int) (int64, error) {
	var pool []string
	if err := d.n.Call(&pool, "getrawmempool"); err != nil {
		return 0, err
	}
	txs := []string{}
	for _, id := range pool {
		if !d.gone[id] {
			txs = append(txs, id)
		}
	}
	for i := range n {
		// A new coinbase address each block: a block mined again at a
		// height a reorganisation dropped never gets the dropped hash.
		var a string
		if err := d.n.Call(&a, "getnewaddress"); err != nil {
			return 0, err
		}
		include := []string{}
		if i == 0 {
			include = txs
		}
		if err := d.n.Call(nil, "generateblock", a, include); err != nil {
			return 0, fmt.Errorf("generateblock: %w", err)
		}
	}
	h, err := d.Head(d.ctx)
	return h.Height, err
}

func (d *driver) Reorg(depth int) (int64, error) {
	h, err := d.Backend.Head(d.ctx)
	if err != nil {
		return 0, err
	}
	if depth < 1 || int64(depth) > h.Height-d.base {
		return 0, fmt.Errorf("reorg %d at height %d", depth, h.Height-d.base)
	}
	first := h.Height - int64(depth) + 1
	for height := first; height <= h.Height; height++ {
		var hash string
		if err := d.n.Call(&hash, "getblockhash", height); err != nil {
			return 0, err
		}
		var blk struct {
			Tx []string `json:"tx"`
		}
		if err := d.n.Call(&blk, "getblock", hash, 1); err != nil {
			return 0, err
		}
		for _, id := range blk.Tx[1:] { // not the coinbase
			d.gone[id] = true
		}
	}
	var hash string
	if err := d.n.Call(&hash, "getblockhash", first); err != nil {
		return 0, err
	}
	if err := d.n.Call(nil, "invalidateblock", hash); err != nil {
		return 0, err
	}
	return first - 1 - d.base, nil
}

// FundOperator implements chaintest.OnChain: a native coin's forward pays
// its own fee.
func (d *driver) FundOperator() error { return nil }
