package jsonrpc_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
)

// anvil's first two dev accounts (its default mnemonic), unlocked for
// eth_sendTransaction. dev0 deploys the test token and holds its supply;
// dev1 holds none, so its token transfers revert.
var (
	dev0 = common.HexToAddress("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
	dev1 = common.HexToAddress("0x70997970C51812dc3A010C7d01b50e0d17dc79C8")
)

// revertCode is runtime code that reverts every call: PUSH1 0 PUSH1 0
// REVERT.
const revertCode = "0x60006000fd"

// testGas is the gas limit of the test's own payments: enough for a token
// transfer, and fixed so that anvil does not estimate (an estimate of a
// transfer meant to revert fails).
const testGas = 200_000

// node is a JSON-RPC client of the test's own, to drive anvil.
type node struct {
	c  *rpc.Client
	hc *http.Client
}

func dial(t testing.TB, url string) *node {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := rpc.DialOptions(context.Background(), url, rpc.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); hc.CloseIdleConnections() })
	return &node{c: c, hc: hc}
}

func (n *node) call(result any, method string, args ...any) error {
	if err := n.c.CallContext(context.Background(), result, method, args...); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (n *node) must(t testing.TB, result any, method string, args ...any) {
	t.Helper()
	if err := n.call(result, method, args...); err != nil {
		t.Fatal(err)
	}
}

func (n *node) height() (int64, error) {
	var h hexutil.Uint64
	err := n.call(&h, "eth_blockNumber")
	return int64(h), err
}

// send submits a transaction from an unlocked dev account and returns its
// hash.
func (n *node) send(from common.Address, to *common.Address, value *big.Int, data []byte) (string, error) {
	tx := map[string]any{"from": from, "gas": hexutil.Uint64(testGas)}
	if to != nil {
		tx["to"] = *to
	}
	if value != nil {
		tx["value"] = (*hexutil.Big)(value)
	}
	if data != nil {
		tx["data"] = hexutil.Bytes(data)
	}
	var hash common.Hash
	if err := n.call(&hash, "eth_sendTransaction", tx); err != nil {
		return "", err
	}
	return hash.Hex(), nil
}

// mine mines blocks and returns the height.
func (n *node) mine(blocks int) (int64, error) {
	if err := n.call(nil, "anvil_mine", hexutil.Uint64(blocks)); err != nil {
		return 0, err
	}
	return n.height()
}

// deployToken deploys testdata/ERC20.bin with decimals, its supply to dev0,
// mines it and returns its address.
func (n *node) deployToken(t testing.TB, decimals int32) common.Address {
	t.Helper()
	bin, err := os.ReadFile("testdata/ERC20.bin")
	if err != nil {
		t.Fatal(err)
	}
	code, err := hex.DecodeString(strings.TrimSpace(string(bin)))
	if err != nil {
		t.Fatal(err)
	}
	supply := new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil)
	code = append(code, common.LeftPadBytes(big.NewInt(int64(decimals)).Bytes(), 32)...)
	code = append(code, common.LeftPadBytes(supply.Bytes(), 32)...)
	var hash common.Hash
	n.must(t, &hash, "eth_sendTransaction", map[string]any{"from": dev0, "data": hexutil.Bytes(code), "gas": hexutil.Uint64(3_000_000)})
	if _, err := n.mine(1); err != nil {
		t.Fatal(err)
	}
	var rc struct {
		Status          hexutil.Uint64  `json:"status"`
		ContractAddress *common.Address `json:"contractAddress"`
	}
	n.must(t, &rc, "eth_getTransactionReceipt", hash)
	if rc.Status != 1 || rc.ContractAddress == nil {
		t.Fatalf("deploy the test token: receipt %+v", rc)
	}
	return *rc.ContractAddress
}

// transferData is the call data of transfer(to, amount).
func transferData(to common.Address, amount *big.Int) []byte {
	data := []byte{0xa9, 0x05, 0x9c, 0xbb}
	data = append(data, common.LeftPadBytes(to.Bytes(), 32)...)
	return append(data, common.LeftPadBytes(amount.Bytes(), 32)...)
}

// tokenBalance returns who's balance of token in base units.
func (n *node) tokenBalance(t testing.TB, token, who common.Address) *big.Int {
	t.Helper()
	var out hexutil.Bytes
	data := append([]byte{0x70, 0xa0, 0x82, 0x31}, common.LeftPadBytes(who.Bytes(), 32)...)
	n.must(t, &out, "eth_call", map[string]any{"to": token, "data": hexutil.Bytes(data)}, "latest")
	return new(big.Int).SetBytes(out)
}

func (n *node) balance(t testing.TB, who common.Address) *big.Int {
	t.Helper()
	var b hexutil.Big
	n.must(t, &b, "eth_getBalance", who, "latest")
	return b.ToInt()
}

// units converts an amount of tk to base units.
func units(tk chains.Ticker, v decimal.Decimal) *big.Int { return v.Shift(tk.Decimals).BigInt() }

// chain is one fresh anvil (no automining) with the test token deployed
// for a token ticker, and a Backend on it.
type chain struct {
	t     testing.TB
	tk    chains.Ticker
	node  *node
	url   string
	token common.Address // zero for a native ticker
	base  int64          // the height once set up: above it, the test's blocks
	b     *jsonrpc.Backend
	keys  *chains.Keys
}

// regtest returns the registry with every EVM ticker on regtest.
func regtest(t testing.TB) *chains.Registry {
	t.Helper()
	reg := family.DefaultRegistry()
	for _, tk := range reg.All() {
		if tk.Family != chains.FamilyEVM {
			continue
		}
		var err error
		if reg, err = reg.WithNet(tk.Ticker, chains.Regtest); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func ticker(t testing.TB, name string) chains.Ticker {
	t.Helper()
	tk, err := regtest(t).Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func newChain(t testing.TB, tk chains.Ticker) *chain {
	t.Helper()
	an := nodetest.StartAnvil(t, "--no-mining")
	c := &chain{t: t, tk: tk, node: dial(t, an.URL), url: an.URL}
	var err error
	if c.keys, err = chains.NewKeys(chaintest.Seed); err != nil {
		t.Fatal(err)
	}
	url := an.URL
	if tk.Token {
		c.token = c.node.deployToken(t, tk.Decimals)
		url += "?contract=" + c.token.Hex()
	}
	c.b = c.backend(t, jsonrpc.Config{Ticker: tk, URL: url, Keys: c.keys})
	if c.base, err = c.node.height(); err != nil {
		t.Fatal(err)
	}
	return c
}

// backend returns a Backend of cfg, closed when the test ends.
func (c *chain) backend(t testing.TB, cfg jsonrpc.Config) *jsonrpc.Backend {
	t.Helper()
	b, err := jsonrpc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// pay pays v of the chain's ticker from dev0 to `to` (from dev1, which
// holds no tokens, for a token transfer meant to revert).
func (c *chain) pay(to string, v decimal.Decimal, failToken bool) (string, error) {
	addr := common.HexToAddress(to)
	if !c.tk.Token {
		return c.node.send(dev0, &addr, units(c.tk, v), nil)
	}
	from := dev0
	if failToken {
		from = dev1
	}
	return c.node.send(from, &c.token, nil, transferData(addr, units(c.tk, v)))
}
