package nodetest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// AnvilDev0 is anvil's first dev account (its default mnemonic), unlocked
// for eth_sendTransaction with 10000 ether: the tests pay from it and
// deploy their token with it.
const AnvilDev0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

// anvilGas is the gas limit of the tests' own transactions: enough for a
// token transfer, fixed so that anvil does not estimate.
const anvilGas = 200_000

// Call calls method on the node and decodes its result into out (nil to
// drop it), failing t on an error.
func (a *Anvil) Call(t testing.TB, out any, method string, params ...any) {
	t.Helper()
	if err := a.call(out, method, params...); err != nil {
		t.Fatalf("anvil %s: %v", method, err)
	}
}

func (a *Anvil) call(out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	// No keep-alive: no idle connection (and its goroutines) outlives the
	// call, whatever the test's leak check.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if r.Error != nil {
		return fmt.Errorf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if out != nil {
		return json.Unmarshal(r.Result, out)
	}
	return nil
}

// Quantity is a JSON-RPC quantity (0x-prefixed hex).
func Quantity(v *big.Int) string { return "0x" + v.Text(16) }

// parseQuantity parses a JSON-RPC quantity.
func parseQuantity(t testing.TB, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(strings.TrimPrefix(s, "0x"), 16)
	if !ok {
		if s == "0x" || s == "0x0" {
			return new(big.Int)
		}
		t.Fatalf("anvil: quantity %q", s)
	}
	return v
}

// Mine mines blocks blocks (anvil_mine) and returns the height.
func (a *Anvil) Mine(t testing.TB, blocks int) int64 {
	t.Helper()
	a.Call(t, nil, "anvil_mine", Quantity(big.NewInt(int64(blocks))))
	return a.Height(t)
}

// Height returns the latest block's number.
func (a *Anvil) Height(t testing.TB) int64 {
	t.Helper()
	var h string
	a.Call(t, &h, "eth_blockNumber")
	return parseQuantity(t, h).Int64()
}

// Send submits a transaction from an unlocked dev account (value in wei,
// data the call data; either may be nil) and returns its hash. It waits in
// the node's pool until a block is mined when anvil runs with --no-mining.
func (a *Anvil) Send(t testing.TB, from, to string, value *big.Int, data []byte) string {
	t.Helper()
	tx := map[string]any{"from": from, "to": to, "gas": Quantity(big.NewInt(anvilGas))}
	if value != nil {
		tx["value"] = Quantity(value)
	}
	if data != nil {
		tx["data"] = "0x" + hex.EncodeToString(data)
	}
	var hash string
	a.Call(t, &hash, "eth_sendTransaction", tx)
	return hash
}

// Balance returns who's balance in wei at the latest block.
func (a *Anvil) Balance(t testing.TB, who string) *big.Int {
	t.Helper()
	var b string
	a.Call(t, &b, "eth_getBalance", who, "latest")
	return parseQuantity(t, b)
}

// Nonce returns who's transaction count at block ("latest" or "pending").
func (a *Anvil) Nonce(t testing.TB, who, block string) uint64 {
	t.Helper()
	var n string
	a.Call(t, &n, "eth_getTransactionCount", who, block)
	return parseQuantity(t, n).Uint64()
}

// Receipt is what the tests read of a transaction's receipt.
type Receipt struct {
	// Found is false while no block holds the transaction.
	Found bool
	// OK is the receipt's status: the transaction executed.
	OK bool
	// From and To are the sender and the recipient (a token transfer's
	// recipient is the contract).
	From, To string
	// Block is the block's number.
	Block int64
}

// Receipt returns the receipt of the transaction hash.
func (a *Anvil) Receipt(t testing.TB, hash string) Receipt {
	t.Helper()
	var rc *struct {
		Status      string `json:"status"`
		From        string `json:"from"`
		To          string `json:"to"`
		BlockNumber string `json:"blockNumber"`
	}
	a.Call(t, &rc, "eth_getTransactionReceipt", hash)
	if rc == nil {
		return Receipt{}
	}
	return Receipt{Found: true, OK: rc.Status == "0x1", From: rc.From, To: rc.To, Block: parseQuantity(t, rc.BlockNumber).Int64()}
}

// BlockTx is a transaction as a block lists it.
type BlockTx struct {
	Hash  string `json:"hash"`
	From  string `json:"from"`
	To    string `json:"to"`
	Value string `json:"value"`
	Input string `json:"input"`
	Nonce string `json:"nonce"`
}

// BlockTxs returns the transactions of the block at height.
func (a *Anvil) BlockTxs(t testing.TB, height int64) []BlockTx {
	t.Helper()
	var b struct {
		Transactions []BlockTx `json:"transactions"`
	}
	a.Call(t, &b, "eth_getBlockByNumber", Quantity(big.NewInt(height)), true)
	return b.Transactions
}

// PendingCount returns how many transactions wait in the node's pool.
func (a *Anvil) PendingCount(t testing.TB) int {
	t.Helper()
	var st struct {
		Pending string `json:"pending"`
		Queued  string `json:"queued"`
	}
	a.Call(t, &st, "txpool_status")
	return int(parseQuantity(t, st.Pending).Int64())
}

// erc20Bin returns the creation bytecode of the test token
// (chains/evm/jsonrpc/testdata/ERC20.bin, whose README says how it is
// built), found from this source file's directory.
func erc20Bin(t testing.TB) []byte {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("nodetest: no source path for the test token")
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "evm", "jsonrpc", "testdata", "ERC20.bin"))
	if err != nil {
		t.Fatalf("nodetest: the test token: %v", err)
	}
	code, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("nodetest: the test token: %v", err)
	}
	return code
}

// word is v as one 32-byte ABI word.
func word(v *big.Int) []byte { return v.FillBytes(make([]byte, 32)) }

// address returns the 20 bytes of a 0x-prefixed hex address.
func address(t testing.TB, a string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(strings.ToLower(a), "0x"))
	if err != nil || len(b) != 20 {
		t.Fatalf("nodetest: address %q", a)
	}
	return b
}

// DeployERC20 deploys the test token (a minimal standard ERC-20) with
// decimals from AnvilDev0, which receives the whole supply (10^40 base
// units), mines its block and returns the contract's address.
func (a *Anvil) DeployERC20(t testing.TB, decimals int32) string {
	t.Helper()
	supply := new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil)
	code := append(erc20Bin(t), word(big.NewInt(int64(decimals)))...)
	code = append(code, word(supply)...)
	var hash string
	a.Call(t, &hash, "eth_sendTransaction", map[string]any{"from": AnvilDev0, "data": "0x" + hex.EncodeToString(code), "gas": Quantity(big.NewInt(3_000_000))})
	a.Mine(t, 1)
	var rc *struct {
		Status          string `json:"status"`
		ContractAddress string `json:"contractAddress"`
	}
	a.Call(t, &rc, "eth_getTransactionReceipt", hash)
	if rc == nil || rc.Status != "0x1" || rc.ContractAddress == "" {
		t.Fatalf("nodetest: deploy the test token: receipt %+v", rc)
	}
	return rc.ContractAddress
}

// TransferData is the call data of the ERC-20 transfer(to, amount).
func TransferData(t testing.TB, to string, amount *big.Int) []byte {
	t.Helper()
	data := []byte{0xa9, 0x05, 0x9c, 0xbb}
	data = append(data, word(new(big.Int).SetBytes(address(t, to)))...)
	return append(data, word(amount)...)
}

// TokenBalance returns who's balance of token in base units at the latest
// block (balanceOf).
func (a *Anvil) TokenBalance(t testing.TB, token, who string) *big.Int {
	t.Helper()
	data := append([]byte{0x70, 0xa0, 0x82, 0x31}, word(new(big.Int).SetBytes(address(t, who)))...)
	var out string
	a.Call(t, &out, "eth_call", map[string]any{"to": token, "data": "0x" + hex.EncodeToString(data)}, "latest")
	return parseQuantity(t, out)
}
