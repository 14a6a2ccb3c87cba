package solanatest

import (
	"context"
	"errors"
	"fmt"

	solana "github.com/gagliardetto/solana-go"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
)

// Backend is what a Driver drives: a chains.Backend that is told the
// addresses to look at (the Solana RPC backend).
type Backend interface {
	chains.Backend
	chains.AddressWatcher
}

// OperatorFunding is what Driver.FundOperator gives the operator's
// address: enough for many forwards' fees and new token accounts.
const OperatorFunding = 10 * solana.LAMPORTS_PER_SOL

// Driver is a chaintest.Driver and chaintest.OnChain over a Server and a
// backend of one ticker on it. Heights are the server's slots: a fresh
// Server is the fresh chain every scenario wants (slot 0, no block above
// the genesis).
//
// The backend can only find transfers to addresses it was told about
// (chains.AddressWatcher), while the suite asks Transfers(.., nil) for
// every address it paid: the Driver calls Watch with every address it pays
// (Pay) and every destination of a forward it signs (Sign), the way the
// payment watcher calls Watch with every address it loads.
type Driver struct {
	Backend
	server *Server
	ticker chains.Ticker
	keys   *chains.Keys
}

var (
	_ chaintest.Driver  = (*Driver)(nil)
	_ chaintest.OnChain = (*Driver)(nil)
)

// NewDriver returns a Driver of ticker t on server, observed through
// backend, whose keys (for FundOperator) are keys.
func NewDriver(server *Server, backend Backend, t chains.Ticker, keys *chains.Keys) *Driver {
	return &Driver{Backend: backend, server: server, ticker: t, keys: keys}
}

// Server returns the driven server.
func (d *Driver) Server() *Server { return d.server }

// Pay implements chaintest.Driver: a transfer from the faucet (SOL, or the
// mint's tokens to to's associated token account), included by the next
// Mine. Solana transfers cannot be made to fail: fail is an error.
func (d *Driver) Pay(to string, v decimal.Decimal, fail bool) (string, error) {
	if fail {
		return "", errors.New("solanatest: a transfer that is included and fails is not simulated on solana")
	}
	if err := chains.ValidateAddress(d.ticker, to); err != nil {
		return "", err
	}
	units := v.Shift(d.ticker.Decimals)
	if v.Sign() <= 0 || !units.IsInteger() || units.BigInt().BitLen() > 64 {
		return "", fmt.Errorf("solanatest: pay %s: not a positive whole number of base units", v)
	}
	d.Watch(to)
	if d.ticker.Token {
		return d.server.PayToken(to, units.BigInt().Uint64())
	}
	return d.server.PaySOL(to, units.BigInt().Uint64())
}

// Mine implements chaintest.Driver.
func (d *Driver) Mine(n int) (int64, error) {
	if n < 1 {
		return 0, fmt.Errorf("solanatest: mine %d slots", n)
	}
	return d.server.Mine(n), nil
}

// Reorg implements chaintest.Driver.
func (d *Driver) Reorg(depth int) (int64, error) { return d.server.Reorg(depth) }

// Sign signs with the backend and watches the forward's destinations, so
// that Transfers reports what the forward pays them.
func (d *Driver) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	s, err := d.Backend.Sign(ctx, f)
	if err == nil {
		for _, o := range f.Outputs {
			d.Watch(o.Address)
		}
	}
	return s, err
}

// FundOperator implements chaintest.OnChain: the faucet sends
// OperatorFunding to the operator's address, in a slot of its own, so the
// funds are there (confirmed) when the forward is signed.
func (d *Driver) FundOperator() error {
	op, err := d.keys.OperatorAddress(d.ticker)
	if err != nil {
		return err
	}
	if _, err := d.server.PaySOL(op, OperatorFunding); err != nil {
		return err
	}
	d.server.Mine(int(d.server.opts.ConfirmedDepth))
	return nil
}
