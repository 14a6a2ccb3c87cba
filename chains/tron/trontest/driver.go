package trontest

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
)

// OperatorFunds is what Driver.FundOperator gives the operator: 100,000 TRX.
const OperatorFunds = 100_000_000_000

// Driver is a chains.Backend talking to a Node, with the Node's Pay, Mine
// and Reorg: a chaintest.Driver and chaintest.OnChain.
type Driver struct {
	chains.Backend
	// Node is the node the backend talks to.
	Node     *Node
	ticker   chains.Ticker
	contract string
	keys     *chains.Keys
}

var (
	_ chaintest.Driver  = (*Driver)(nil)
	_ chaintest.OnChain = (*Driver)(nil)
)

// NewDriver returns a Driver of ticker tk: b is the backend under test,
// talking to node; contract is the token contract payments go through
// ("" for trx); keys are the signing keys b uses (FundOperator funds
// their operator address).
func NewDriver(node *Node, tk chains.Ticker, contract string, keys *chains.Keys, b chains.Backend) *Driver {
	return &Driver{Backend: b, Node: node, ticker: tk, contract: contract, keys: keys}
}

// Mempool implements chains.MempoolReader when the backend does (the
// suite checks it); otherwise it reports nothing.
func (d *Driver) Mempool(ctx context.Context, watched func(string) bool) ([]chains.Transfer, error) {
	if m, ok := d.Backend.(chains.MempoolReader); ok {
		return m.Mempool(ctx, watched)
	}
	return nil, nil
}

// Pay implements chaintest.Driver: the faucet pays v to `to`; with fail the
// transaction is included and its execution fails.
func (d *Driver) Pay(to string, v decimal.Decimal, fail bool) (string, error) {
	units := v.Shift(d.ticker.Decimals)
	if v.Sign() <= 0 || !units.IsInteger() {
		return "", fmt.Errorf("trontest: pay %s %s: not a positive whole number of base units", v, d.ticker.Ticker)
	}
	return d.Node.Pay(d.contract, to, units.BigInt(), fail)
}

// Mine implements chaintest.Driver.
func (d *Driver) Mine(n int) (int64, error) { return d.Node.Mine(n) }

// Reorg implements chaintest.Driver.
func (d *Driver) Reorg(depth int) (int64, error) { return d.Node.Reorg(depth) }

// FundOperator implements chaintest.OnChain: OperatorFunds to the
// operator's address, which tops up token forwards' gas.
func (d *Driver) FundOperator() error {
	addr, err := d.keys.OperatorAddress(d.ticker)
	if err != nil {
		return err
	}
	return d.Node.Fund(addr, OperatorFunds)
}
