package server_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// anvilEnv is a server watching a real anvil (no automining: the test
// mines) for one EVM ticker, polled only when the test says.
type anvilEnv struct {
	an    *nodetest.Anvil
	in    *servertest.Instance
	tk    chains.Ticker
	token string // the test token's contract, for a token ticker
}

// newAnvilEnv starts anvil with --no-mining, deploys the test token for a
// token ticker (the node URL's contract option names it), and starts a
// server with ticker on regtest against the node.
func newAnvilEnv(t *testing.T, d store.Dialect, ticker string) *anvilEnv {
	t.Helper()
	an := nodetest.StartAnvil(t, "--no-mining")
	reg, err := family.DefaultRegistry().WithNet(ticker, chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := reg.Lookup(ticker)
	e := &anvilEnv{an: an, tk: tk}
	node := an.URL + "?network=regtest"
	if tk.Token {
		e.token = an.DeployERC20(t, tk.Decimals)
		node += "&contract=" + e.token
	}
	e.in = servertest.Start(t, d, func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{ticker: node}
		c.Chains.Prices = server.PricesTable // no network beyond the node
	})
	// The first poll records where watching starts; addresses are handed
	// out only after it.
	e.poll(t)
	return e
}

// poll has the server poll the node (twice: the second poll finishes what
// the first sent or left open).
func (e *anvilEnv) poll(t *testing.T) {
	t.Helper()
	for range 2 {
		if err := e.in.Server.Watcher(e.tk.Ticker).PollOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// step mines blocks on the node and has the server poll it.
func (e *anvilEnv) step(t *testing.T, blocks int) {
	t.Helper()
	if blocks > 0 {
		e.an.Mine(t, blocks)
	}
	e.poll(t)
}

// units converts an amount of the ticker to base units.
func (e *anvilEnv) units(v decimal.Decimal) *big.Int { return v.Shift(e.tk.Decimals).BigInt() }

// coins converts base units to an amount of the ticker.
func (e *anvilEnv) coins(v *big.Int) decimal.Decimal {
	return decimal.NewFromBigInt(v, -e.tk.Decimals)
}

// onChain is addr's balance of the ticker at the latest block: the native
// balance, or the token's balanceOf.
func (e *anvilEnv) onChain(t *testing.T, addr string) decimal.Decimal {
	t.Helper()
	if e.tk.Token {
		return e.coins(e.an.TokenBalance(t, e.token, addr))
	}
	return e.coins(e.an.Balance(t, addr))
}

// pay pays v of the ticker to addr from anvil's first dev account.
func (e *anvilEnv) pay(t *testing.T, addr string, v decimal.Decimal) string {
	t.Helper()
	if e.tk.Token {
		return e.an.Send(t, nodetest.AnvilDev0, e.token, nil, nodetest.TransferData(t, addr, e.units(v)))
	}
	return e.an.Send(t, nodetest.AnvilDev0, addr, e.units(v), nil)
}

func (e *anvilEnv) balance(t *testing.T) decimal.Decimal {
	t.Helper()
	r := e.in.Get(t, "/"+e.tk.Ticker+"/payout/balance/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	return decimal.RequireFromString(r.JSON["balance"].(string))
}

func (e *anvilEnv) status(t *testing.T, id string) map[string]any {
	t.Helper()
	return (&devEnv{in: e.in}).payoutStatus(t, id, e.in.KeyA)
}

// outbounds returns the server's outgoing transactions of purpose.
func (e *anvilEnv) outbounds(t *testing.T, purpose entoutbound.Purpose) []*entdb.Outbound {
	t.Helper()
	os, err := e.in.Server.DB().Client.Outbound.Query().
		Where(entoutbound.Ticker(e.tk.Ticker), entoutbound.PurposeEQ(purpose)).
		Order(entoutbound.ByID()).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return os
}

// sameAddress compares two EVM addresses whatever their case.
func sameAddress(a, b string) bool { return strings.EqualFold(a, b) }

// TestAnvilPayoutETH: on anvil, a project's payout wallet funded with ETH
// pays a payout of two outputs as two transactions from the wallet
// (consecutive nonces) that the node accepts and mines; each destination's
// balance rises by exactly its amount, the wallet pays no more than the
// outputs and the payout's network fee, the payout is done with the first
// transfer's hash, and the journal pays out exactly the total.
func TestAnvilPayoutETH(t *testing.T) {
	t.Parallel()
	e := newAnvilEnv(t, store.Postgres, "eth")
	r := e.in.Get(t, "/eth/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	wallet := r.JSON["address"].(string)
	e.pay(t, wallet, decimal.NewFromInt(1))
	e.step(t, 1)
	e.step(t, int(e.tk.DefaultConfirmations))
	if b := e.balance(t); !b.Equal(decimal.NewFromInt(1)) {
		t.Fatalf("balance %s, want 1 (the wallet's payment)", b)
	}

	destA, destB := destinations(t, e.tk)
	amtA, amtB := decimal.RequireFromString("0.25"), decimal.RequireFromString("0.15")
	beforeA, beforeB, beforeWallet := e.onChain(t, destA), e.onChain(t, destB), e.onChain(t, wallet)
	r = e.in.PostJSON(t, "/eth/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q, %q: %q}}`, destA, amtA, destB, amtB), e.in.KeyA)
	wantStatus(t, r, 200)
	info := r.JSON["payout_info"].(map[string]any)
	id := fmt.Sprint(info["id"])
	txid, _ := info["txid"].(string)
	if info["status"] != "done" || txid == "" || info["from"] != wallet {
		t.Fatalf("payout %s: want done from the wallet with a txid", r.Body)
	}
	fee := decimal.RequireFromString(info["blockchain_fee"].(string))
	if n := e.an.PendingCount(t); n != 2 {
		t.Errorf("the node's pool holds %d transactions, want the payout's two", n)
	}
	if got := e.an.Nonce(t, wallet, "pending"); got != 2 {
		t.Errorf("the wallet's pending nonce %d, want 2 (one transaction per output)", got)
	}

	height := e.an.Mine(t, 1)
	if rc := e.an.Receipt(t, txid); !rc.OK || !sameAddress(rc.From, wallet) || rc.Block != height {
		t.Errorf("the payout's transaction %s: receipt %+v, want executed in block %d from the wallet", txid, rc, height)
	}
	txs := e.an.BlockTxs(t, height)
	if len(txs) != 2 {
		t.Fatalf("the block holds %d transactions, want the payout's two", len(txs))
	}
	for i, tx := range txs {
		if !sameAddress(tx.From, wallet) || tx.Nonce != fmt.Sprintf("0x%x", i) {
			t.Errorf("transaction %d from %s nonce %s: want the wallet's nonce %d", i, tx.From, tx.Nonce, i)
		}
	}
	if got := e.onChain(t, destA).Sub(beforeA); !got.Equal(amtA) {
		t.Errorf("%s received %s, want %s", destA, got, amtA)
	}
	if got := e.onChain(t, destB).Sub(beforeB); !got.Equal(amtB) {
		t.Errorf("%s received %s, want %s", destB, got, amtB)
	}
	spent := beforeWallet.Sub(e.onChain(t, wallet))
	if spent.LessThanOrEqual(amtA.Add(amtB)) || spent.GreaterThan(amtA.Add(amtB).Add(fee)) {
		t.Errorf("the wallet spent %s: want the outputs %s and gas within the network fee %s", spent, amtA.Add(amtB), fee)
	}

	e.step(t, 0) // the server sees its transactions in a block
	if info := e.status(t, id); info["status"] != "done" || info["txid"] != txid {
		t.Errorf("payout after its block: %v", info)
	}
	for _, o := range e.outbounds(t, entoutbound.PurposePayout) {
		if o.State != entoutbound.StateLanded {
			t.Errorf("payout transaction %s is %s, want landed", o.Key, o.State)
		}
	}
	tk := e.tk
	if got := ledgerSum(t, e.in, e.in.ProjectA, tk.Ticker, entledger.AccountPayout); !got.Equal(amtA.Add(amtB).Shift(tk.Decimals)) {
		t.Errorf("journal: paid out %s base units, want %s eth", got, amtA.Add(amtB))
	}
	if got := ledgerSum(t, e.in, e.in.ProjectA, tk.Ticker, entledger.AccountOutgoing); !got.IsZero() {
		t.Errorf("journal: %s base units still outgoing", got)
	}
}

// TestAnvilPayoutERC20Sweep: on anvil, a project's tokens held on two
// addresses without forwarding (which hold no ETH) fund a token payout
// bigger than either. The payout is queued; both addresses are swept to
// the payout wallet, each sweep's gas topped up from the operator's gas
// address, and each carries its tokens less the ticker's network fee; once
// the wallet's payments of them are credited, the payout goes from the
// wallet (its gas topped up too) and each destination receives exactly
// its tokens. The journal ends with nothing swept or outgoing and the
// payout paid exactly.
func TestAnvilPayoutERC20Sweep(t *testing.T) {
	t.Parallel()
	e := newAnvilEnv(t, store.SQLite, "erc20/usdt")
	tk := e.tk
	path := "/" + tk.Ticker
	keys, err := chains.NewKeys(servertest.Seed) // the server's seed
	if err != nil {
		t.Fatal(err)
	}
	operator, err := keys.OperatorAddress(tk)
	if err != nil {
		t.Fatal(err)
	}
	e.an.Send(t, nodetest.AnvilDev0, operator, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil), nil) // 1 ETH for gas

	r := e.in.Get(t, path+"/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	wallet := r.JSON["address"].(string)
	nf := tk.NetworkFeeEstimate
	holdings := []decimal.Decimal{decimal.NewFromInt(300), decimal.NewFromInt(200)}
	var held []string
	for i, v := range holdings {
		c := e.in.Get(t, path+"/create/", q("callback", fmt.Sprintf("https://shop.example/hook?held=%d", i)), e.in.KeyA)
		wantStatus(t, c, 200)
		a := c.JSON["address_in"].(string)
		held = append(held, a)
		e.pay(t, a, v)
	}
	e.step(t, 1)
	e.step(t, int(tk.DefaultConfirmations))
	if b := e.balance(t); !b.Equal(decimal.NewFromInt(500)) {
		t.Fatalf("balance %s, want 500 (two held addresses)", b)
	}
	for i, a := range held {
		if eth := e.an.Balance(t, a); eth.Sign() != 0 || !e.onChain(t, a).Equal(holdings[i]) {
			t.Fatalf("held address %s: %s wei, %s tokens; want no ETH and %s tokens", a, eth, e.onChain(t, a), holdings[i])
		}
	}

	destA, destB := destinations(t, tk)
	amtA, amtB := decimal.NewFromInt(250), decimal.NewFromInt(150)
	r = e.in.PostJSON(t, path+"/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q, %q: %q}}`, destA, amtA, destB, amtB), e.in.KeyA)
	wantStatus(t, r, 200)
	info := r.JSON["payout_info"].(map[string]any)
	id := fmt.Sprint(info["id"])
	if r.JSON["queued"] != true || info["status"] != "processing" || info["blockchain_fee"] != nf.Mul(decimal.NewFromInt(2)).String() {
		t.Fatalf("queued payout %s: want processing until the sweeps arrive", r.Body)
	}
	sweeps := e.outbounds(t, entoutbound.PurposeSweep)
	if len(sweeps) != 2 {
		t.Fatalf("%d sweeps planned, want one per held address", len(sweeps))
	}
	want := map[string]decimal.Decimal{held[0]: holdings[0].Sub(nf), held[1]: holdings[1].Sub(nf)}
	for _, o := range sweeps {
		if len(o.Outputs) != 1 || o.Outputs[0].Address != wallet || !o.Outputs[0].Amount.Equal(want[o.FromAddress]) {
			t.Errorf("sweep %s from %s pays %+v, want %s to the wallet", o.Key, o.FromAddress, o.Outputs, want[o.FromAddress])
		}
	}
	opBefore := e.an.Balance(t, operator)

	// The top-ups land first, then the transfers they pay for.
	for i := 0; ; i++ {
		if e.onChain(t, wallet).Equal(holdings[0].Add(holdings[1]).Sub(nf.Mul(decimal.NewFromInt(2)))) {
			break
		}
		if i == 4 {
			t.Fatalf("after %d blocks the wallet holds %s tokens; sweeps %+v", i, e.onChain(t, wallet), e.sweepStates(t))
		}
		e.step(t, 1)
	}
	for _, o := range e.outbounds(t, entoutbound.PurposeSweep) {
		if rc := e.an.Receipt(t, o.Txid); !rc.OK || !sameAddress(rc.From, o.FromAddress) {
			t.Errorf("sweep %s (%s): receipt %+v, want executed from %s", o.Key, o.Txid, rc, o.FromAddress)
		}
	}
	for i, a := range held {
		if got := e.onChain(t, a); !got.Equal(nf) {
			t.Errorf("held address %d keeps %s tokens after its sweep, want the network fee %s", i, got, nf)
		}
	}
	if spent := new(big.Int).Sub(opBefore, e.an.Balance(t, operator)); spent.Sign() <= 0 {
		t.Errorf("the operator's gas address paid %s wei for the sweeps' gas", spent)
	}
	if st := e.status(t, id)["status"]; st != "processing" {
		t.Fatalf("payout before the sweeps are credited: %v", st)
	}

	// The wallet's payments of the sweeps are credited: the payout goes,
	// its gas topped up from the operator first.
	e.step(t, int(tk.DefaultConfirmations))
	if got := ledgerSum(t, e.in, e.in.ProjectA, tk.Ticker, entledger.AccountSwept); !got.IsZero() {
		t.Errorf("journal: %s base units swept and not arrived once the wallet's payments are credited", got)
	}
	beforeA, beforeB := e.onChain(t, destA), e.onChain(t, destB)
	for i := 0; ; i++ {
		info = e.status(t, id)
		if info["status"] == "done" && e.onChain(t, destA).Sub(beforeA).Equal(amtA) {
			break
		}
		if i == 4 {
			t.Fatalf("after %d blocks: payout %v, %s received %s", i, info, destA, e.onChain(t, destA).Sub(beforeA))
		}
		e.step(t, 1)
	}
	if got := e.onChain(t, destB).Sub(beforeB); !got.Equal(amtB) {
		t.Errorf("%s received %s, want %s", destB, got, amtB)
	}
	txid, _ := info["txid"].(string)
	if rc := e.an.Receipt(t, txid); txid == "" || !rc.OK || !sameAddress(rc.From, wallet) || info["from"] != wallet {
		t.Errorf("payout %v: receipt of %s %+v, want a transfer executed from the wallet", info, txid, rc)
	}
	left := holdings[0].Add(holdings[1]).Sub(nf.Mul(decimal.NewFromInt(2))).Sub(amtA).Sub(amtB)
	if got := e.onChain(t, wallet); !got.Equal(left) {
		t.Errorf("the wallet holds %s tokens after the payout, want %s", got, left)
	}

	e.step(t, 1)
	if got := ledgerSum(t, e.in, e.in.ProjectA, tk.Ticker, entledger.AccountPayout); !got.Equal(amtA.Add(amtB).Shift(tk.Decimals)) {
		t.Errorf("journal: paid out %s base units, want %s", got, amtA.Add(amtB))
	}
	for _, acc := range []entledger.Account{entledger.AccountSwept, entledger.AccountOutgoing} {
		if got := ledgerSum(t, e.in, e.in.ProjectA, tk.Ticker, acc); !got.IsZero() {
			t.Errorf("journal: %s %s base units", acc, got)
		}
	}
	for _, o := range append(e.outbounds(t, entoutbound.PurposeSweep), e.outbounds(t, entoutbound.PurposePayout)...) {
		if o.State != entoutbound.StateLanded {
			t.Errorf("transaction %s is %s (%s), want landed", o.Key, o.State, o.LastError)
		}
	}
}

// sweepStates describes the sweeps for a failure message.
func (e *anvilEnv) sweepStates(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, o := range e.outbounds(t, entoutbound.PurposeSweep) {
		out = append(out, fmt.Sprintf("%s %s %s: %s", o.Key, o.FromAddress, o.State, o.LastError))
	}
	return out
}
