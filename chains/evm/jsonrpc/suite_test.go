package jsonrpc_test

import (
	"context"
	"fmt"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
)

// TestConformance runs chaintest on anvil for every EVM ticker of the
// registry on regtest; each scenario gets an anvil of its own.
func TestConformance(t *testing.T) {
	chaintest.RunRegistry(t, regtest(t), func(t *testing.T, tk chains.Ticker) chaintest.Driver {
		if tk.Family != chains.FamilyEVM {
			t.Skipf("%s is not an EVM ticker", tk.Ticker)
		}
		return newDriver(t, tk)
	})
}

// driver is a chaintest.Driver on anvil. The suite wants a chain that
// starts at height 0 with no blocks; anvil starts with a genesis block,
// and a token chain has the token's deployment above it. The driver
// therefore shows heights above base, the height at which the scenario
// started: block base+1 is block 1, with no parent, and the head at base
// is height 0 with no hash. State, NetworkFee, Sign and Send are the
// Backend's, unchanged.
type driver struct {
	*jsonrpc.Backend
	c    *chain
	base int64
	// reverting are addresses given reverting code for a native payment
	// meant to fail; the next Mine removes it.
	reverting []common.Address
}

var _ chaintest.OnChain = (*driver)(nil)

func newDriver(t *testing.T, tk chains.Ticker) *driver {
	c := newChain(t, tk)
	if _, err := c.b.Probe(t.Context()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	return &driver{Backend: c.b, c: c, base: c.base}
}

// Pay implements chaintest.Driver. A native payment meant to fail goes to
// an address that, until the next block is mined, has code that reverts
// (anvil_setCode): a plain transfer to an account without code cannot
// fail, but a transaction to a watched address whose execution reverts is
// exactly what the backend must never credit. A token payment meant to
// fail transfers from an account without tokens, so it reverts and emits
// no log.
func (d *driver) Pay(to string, v decimal.Decimal, fail bool) (string, error) {
	if fail && !d.c.tk.Token {
		addr := common.HexToAddress(to)
		if err := d.c.node.call(nil, "anvil_setCode", addr, revertCode); err != nil {
			return "", err
		}
		d.reverting = append(d.reverting, addr)
	}
	return d.c.pay(to, v, fail)
}

// Mine implements chaintest.Driver with anvil_mine.
func (d *driver) Mine(n int) (int64, error) {
	h, err := d.c.node.mine(n)
	if err != nil {
		return 0, err
	}
	for _, a := range d.reverting {
		if err := d.c.node.call(nil, "anvil_setCode", a, "0x"); err != nil {
			return 0, err
		}
	}
	d.reverting = nil
	return h - d.base, nil
}

// Reorg implements chaintest.Driver with anvil_rollback, which drops the
// newest blocks without replacing them and does not put their
// transactions back in the mempool. (anvil_reorg replaces them at once,
// keeping the height; TestAnvilReorg uses it.)
func (d *driver) Reorg(depth int) (int64, error) {
	if err := d.c.node.call(nil, "anvil_rollback", depth); err != nil {
		return 0, err
	}
	h, err := d.c.node.height()
	return h - d.base, err
}

// FundOperator implements chaintest.OnChain: 100 ether on the operator's
// gas address (anvil_setBalance, no transaction).
func (d *driver) FundOperator() error {
	op, err := d.c.keys.OperatorAddress(d.c.tk)
	if err != nil {
		return err
	}
	return d.c.node.call(nil, "anvil_setBalance", common.HexToAddress(op), hexutil.EncodeBig(ether(100)))
}

func ether(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// Head shows the tip above base.
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

// Blocks shows the blocks above base.
func (d *driver) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if after < 0 {
		return nil, fmt.Errorf("%w: after %d", jsonrpc.ErrInvalidRange, after)
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

// Transfers shows the transfers above base.
func (d *driver) Transfers(ctx context.Context, after, upTo int64, watched func(string) bool) ([]chains.Transfer, error) {
	if after < 0 {
		return nil, fmt.Errorf("%w: after %d", jsonrpc.ErrInvalidRange, after)
	}
	ts, err := d.Backend.Transfers(ctx, after+d.base, upTo+d.base, watched)
	for i := range ts {
		ts[i].Height -= d.base
	}
	return ts, err
}
