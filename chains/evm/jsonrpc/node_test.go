package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm/jsonrpc"
	"github.com/payhook/payhook/chains/nodetest"
)

// someRawTx returns Signed.Raw of one signed transaction (anvil's dev key
// 0, chain id 31337): Send must reach the node with it.
func someRawTx(t testing.TB) []byte {
	t.Helper()
	key, err := crypto.HexToECDSA("ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80")
	if err != nil {
		t.Fatal(err)
	}
	to := common.HexToAddress("0x1111111111111111111111111111111111111111")
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(big.NewInt(31337)),
		&types.DynamicFeeTx{ChainID: big.NewInt(31337), Gas: 21000, GasFeeCap: big.NewInt(1e9), GasTipCap: big.NewInt(1), To: &to, Value: big.NewInt(1)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tx.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal([]hexutil.Bytes{raw})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// call is one Backend method called by the fault tests.
type call struct {
	name string
	do   func(ctx context.Context, b *jsonrpc.Backend) error
}

// calls returns every Backend method, with arguments that need the node.
func calls(t testing.TB, tk chains.Ticker) []call {
	addr := validAddress(t, tk)
	raw := someRawTx(t)
	cs := []call{
		{"Head", func(ctx context.Context, b *jsonrpc.Backend) error { _, err := b.Head(ctx); return err }},
		{"Blocks", func(ctx context.Context, b *jsonrpc.Backend) error { _, err := b.Blocks(ctx, 0, 3); return err }},
		{"Transfers", func(ctx context.Context, b *jsonrpc.Backend) error { _, err := b.Transfers(ctx, 0, 3, nil); return err }},
		{"State", func(ctx context.Context, b *jsonrpc.Backend) error {
			_, err := b.State(ctx, chains.Transfer{TxID: "0x" + strings.Repeat("ab", 32), To: addr})
			return err
		}},
		{"Sign", func(ctx context.Context, b *jsonrpc.Backend) error {
			_, err := b.Sign(ctx, chains.Forward{ID: "x", From: addr, Outputs: []chains.Output{{Address: addr, Amount: decimal.RequireFromString("1")}}})
			return err
		}},
		{"Send", func(ctx context.Context, b *jsonrpc.Backend) error { return b.Send(ctx, chains.Signed{Raw: raw}) }},
		{"Probe", func(ctx context.Context, b *jsonrpc.Backend) error { _, err := b.Probe(ctx); return err }},
	}
	if !tk.Token { // a token's NetworkFee is the ticker's estimate: no I/O
		cs = append(cs, call{"NetworkFee", func(ctx context.Context, b *jsonrpc.Backend) error { _, err := b.NetworkFee(ctx); return err }})
	}
	return cs
}

func validAddress(t testing.TB, tk chains.Ticker) string {
	t.Helper()
	k := testKeys(t)
	priv, err := k.Secp256k1(tk, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := chains.PubKeyAddress(tk, priv.PubKey())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// fakeNode answers JSON-RPC requests, single or batched, with the result
// (or, for a "!"-prefixed entry, the raw response) its table gives per
// method; unknown methods get a JSON-RPC error.
type fakeNode map[string]string

func (f fakeNode) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	type req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	answer := func(q req) string {
		res, ok := f[q.Method]
		switch {
		case !ok:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`, q.ID, q.Method)
		case strings.HasPrefix(res, "!"):
			return res[1:]
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, q.ID, res)
	}
	w.Header().Set("Content-Type", "application/json")
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		var qs []req
		_ = json.Unmarshal(body, &qs)
		out := make([]string, len(qs))
		for i, q := range qs {
			out[i] = answer(q)
		}
		fmt.Fprint(w, "["+strings.Join(out, ",")+"]")
		return
	}
	var q req
	_ = json.Unmarshal(body, &q)
	fmt.Fprint(w, answer(q))
}

// fixed answers every request with the same status and body.
func fixed(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}
}

// serve starts h and returns its URL; the server stops when the test ends.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s.URL
}

// faultBackend returns a Backend of tk (with keys, a contract for a token)
// on url.
func faultBackend(t testing.TB, tk chains.Ticker, url string) *jsonrpc.Backend {
	t.Helper()
	cfg := jsonrpc.Config{Ticker: tk, URL: url, Keys: testKeys(t), Timeout: 200 * time.Millisecond, MaxResponse: 4096}
	if tk.Token {
		cfg.Contract = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
	}
	b, err := jsonrpc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

const (
	hashA = `"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"`
	hashB = `"0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"`
)

// TestNodeFaults: a node that is down, slow, or answers garbage makes
// every method fail with chains.ErrNode, never panic.
func TestNodeFaults(t *testing.T) {
	t.Parallel()
	down := fmt.Sprintf("http://127.0.0.1:%d", nodetest.FreePort(t))
	// slow answers nothing until the client gives up, or the test ends.
	stop := make(chan struct{})
	var stopOnce sync.Once
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server notices the client leave
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	})
	block := func(n int, extra string) string {
		return fmt.Sprintf(`{"number":"0x%x","hash":%s,"parentHash":%s,"baseFeePerGas":"0x1"%s}`, n, hashA, hashB, extra)
	}
	garbage := map[string]http.Handler{
		"not JSON":            fixed(200, "hello"),
		"HTML error page":     fixed(502, "<html><body>Bad Gateway</body></html>"),
		"empty object":        fixed(200, "{}"),
		"null":                fixed(200, "null"),
		"JSON-RPC error":      fixed(200, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}`),
		"oversized":           fixed(200, `{"jsonrpc":"2.0","id":1,"result":"`+strings.Repeat("a", 10000)+`"}`),
		"truncated":           fixed(200, `{"jsonrpc":"2.0","id":1,"result":{"number":"0x1",`),
		"every method errors": fakeNode{},
		"wrong types": fakeNode{
			"eth_getBlockByNumber": `"0xzz"`, "eth_blockNumber": `{"a":1}`, "eth_chainId": `[1]`, "eth_getLogs": `"x"`,
			"eth_getTransactionReceipt": `7`, "eth_gasPrice": `"-1"`, "eth_sendRawTransaction": `1`, "eth_getTransactionByHash": `"x"`,
		},
		"blocks without hashes": fakeNode{
			"eth_getBlockByNumber": `{"number":"0x1"}`, "eth_blockNumber": `"0xffffffffffffffff"`, "eth_chainId": `"0x0"`,
			"eth_getLogs": `[{"address":"0x5FbDB2315678afecb367f032d93F642f64180aa3"}]`, "eth_getTransactionReceipt": `{"blockNumber":"0x1"}`,
			"eth_gasPrice": `"0x0"`, "eth_maxPriorityFeePerGas": `"0x1"`,
		},
		"wrong heights and fields": fakeNode{
			"eth_getBlockByNumber": block(9, `,"transactions":[{"to":null}]`), "eth_blockNumber": `"0x3"`,
			"eth_chainId": `"0x7a69"`, "web3_clientVersion": `"fake"`,
			"eth_getLogs":               `[{"address":"0x5FbDB2315678afecb367f032d93F642f64180aa3","topics":[],"data":"0x","blockNumber":"0x99","blockHash":` + hashA + `,"transactionHash":` + hashA + `,"logIndex":"0x0"}]`,
			"eth_getTransactionReceipt": `{"status":"0x1","blockNumber":"0x2"}`,
			"eth_gasPrice":              `"0x1"`, "eth_maxPriorityFeePerGas": `"0x1"`,
			"eth_getBalance": `"0x0"`, "eth_getTransactionCount": `"0x0"`, "eth_estimateGas": `"0x1"`, "eth_call": `"0x12"`,
		},
	}
	for _, name := range []string{"eth", "erc20/usdt"} {
		tk := ticker(t, name)
		t.Run(name+"/down", func(t *testing.T) {
			t.Parallel()
			checkFaults(t, tk, faultBackend(t, tk, down))
		})
		t.Run(name+"/slow", func(t *testing.T) {
			t.Parallel()
			url := serve(t, slow)
			t.Cleanup(func() { stopOnce.Do(func() { close(stop) }) }) // before the server closes
			checkFaults(t, tk, faultBackend(t, tk, url))
		})
		for g, h := range garbage {
			t.Run(name+"/"+g, func(t *testing.T) {
				t.Parallel()
				var ok []string
				if g == "wrong heights and fields" {
					// The latest block may have any height.
					ok = []string{"Head", "Probe", "NetworkFee"}
				}
				checkFaults(t, tk, faultBackend(t, tk, serve(t, h)), ok...)
			})
		}
	}
}

// checkFaults calls every method of b and wants errors wrapping
// chains.ErrNode, but for the methods that may succeed.
func checkFaults(t *testing.T, tk chains.Ticker, b *jsonrpc.Backend, mayWork ...string) {
	t.Helper()
	for _, c := range calls(t, tk) {
		err := c.do(t.Context(), b)
		if err == nil && slices.Contains(mayWork, c.name) {
			continue
		}
		if testing.Verbose() {
			t.Logf("%s: %v", c.name, err)
		}
		if !errors.Is(err, chains.ErrNode) {
			t.Errorf("%s: %v, want an error wrapping chains.ErrNode", c.name, err)
		}
	}
}

// TestURLSecrets: the URL's credentials reach the node as basic
// authentication and its path and query unchanged but for the backend's
// own options; no error message repeats any of them.
func TestURLSecrets(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "eth")
	var got struct {
		user, pass, path, query string
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.user, got.pass, _ = r.BasicAuth()
		got.path, got.query = r.URL.Path, r.URL.RawQuery
		fakeNode{"eth_chainId": `"0x7a69"`, "eth_blockNumber": `"0x5"`, "web3_clientVersion": `"fake"`}.ServeHTTP(w, r)
	})
	srv := serve(t, h)
	withSecrets := func(base string) string {
		return strings.Replace(base, "http://", "http://alice:s3cr3t@", 1) + "/v3/PATHKEY?apikey=QUERYKEY&chain_id=31337"
	}
	b := faultBackend(t, tk, withSecrets(srv))
	info, err := b.Probe(t.Context())
	if err != nil || info.Height != 5 || info.Network != "31337" {
		t.Fatalf("Probe: %+v, %v", info, err)
	}
	if got.user != "alice" || got.pass != "s3cr3t" || got.path != "/v3/PATHKEY" || got.query != "apikey=QUERYKEY" {
		t.Errorf("the node saw %+v", got)
	}

	down := faultBackend(t, tk, withSecrets(fmt.Sprintf("http://127.0.0.1:%d", nodetest.FreePort(t))))
	failing := faultBackend(t, tk, withSecrets(serve(t, fixed(401, "unauthorized"))))
	for _, b := range []*jsonrpc.Backend{down, failing} {
		for _, c := range calls(t, tk) {
			err := c.do(t.Context(), b)
			if err == nil {
				t.Fatalf("%s: no error", c.name)
			}
			for _, secret := range []string{"alice", "s3cr3t", "PATHKEY", "QUERYKEY"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%s: error %q repeats %q", c.name, err, secret)
				}
			}
		}
	}
	if _, err := jsonrpc.New(jsonrpc.Config{Ticker: tk, URL: "http://alice:s3cr3t@[::1"}); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("New with a malformed URL: %v", err)
	}
}

// TestLogRangeSplit: a range eth_getLogs refuses is asked again in halves,
// and the transfers of every part are reported, in order.
func TestLogRangeSplit(t *testing.T) {
	t.Parallel()
	tk := ticker(t, "erc20/usdt")
	to := validAddress(t, tk)
	var asked []string
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []struct {
				From hexutil.Uint64 `json:"fromBlock"`
				To   hexutil.Uint64 `json:"toBlock"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply := func(result string) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, q.ID, result)
		}
		switch q.Method {
		case "eth_blockNumber":
			reply(`"0x64"`)
		case "eth_getLogs":
			from, upTo := uint64(q.Params[0].From), uint64(q.Params[0].To)
			mu.Lock()
			asked = append(asked, fmt.Sprintf("%d-%d", from, upTo))
			mu.Unlock()
			if upTo-from+1 > 10 {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32005,"message":"query exceeds 10 blocks"}}`, q.ID)
				return
			}
			var logs []string
			for n := from; n <= upTo; n++ {
				if n%7 != 0 {
					continue
				}
				logs = append(logs, fmt.Sprintf(`{"address":%q,"topics":[%q,"0x%064x","0x000000000000000000000000%s"],"data":"0x%064x","blockNumber":"0x%x","blockHash":"0x%064x","transactionHash":"0x%064x","logIndex":"0x1","removed":false}`,
					testContract, "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", 1, strings.ToLower(to[2:]), n*1000, n, n, n))
			}
			reply("[" + strings.Join(logs, ",") + "]")
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, q.ID)
		}
	})
	b, err := jsonrpc.New(jsonrpc.Config{Ticker: tk, URL: serve(t, h), Contract: testContract, LogRange: 40})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ts, err := b.Transfers(t.Context(), 0, 100, func(a string) bool { return a == to })
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 14 {
		t.Fatalf("%d transfers, want 14: %+v; asked %v", len(ts), ts, asked)
	}
	for i, tr := range ts {
		n := int64(7 * (i + 1))
		if tr.Height != n || tr.Index != 1 || tr.To != to || !tr.Value.Equal(decimal.New(n*1000, -tk.Decimals)) {
			t.Errorf("transfer %d: %+v, want block %d", i, tr, n)
		}
	}
	if asked[0] != "1-40" || len(asked) < 10 {
		t.Errorf("asked %v", asked)
	}
}
