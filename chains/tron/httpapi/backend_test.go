package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/tron/httpapi"
	"github.com/payhook/payhook/chains/tron/trontest"
)

// env is a fake node, a backend on it and a driver.
type env struct {
	t    *testing.T
	tk   chains.Ticker
	node *trontest.Node
	b    *httpapi.Backend
	d    *trontest.Driver
	keys *chains.Keys
	ctx  context.Context
}

// ticker returns a TRON ticker of the default registry on Regtest.
func ticker(t *testing.T, name string) chains.Ticker {
	t.Helper()
	reg, err := family.DefaultRegistry().WithNet(name, chains.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := reg.Lookup(name)
	return tk
}

// start starts a fake node for ticker name and a backend on it (through
// front, when not nil, which wraps the node's handler); cfg adjusts the
// backend's Config.
func start(t *testing.T, name string, opts trontest.Options, cfg func(*httpapi.Config), front func(node *trontest.Node, next http.Handler) http.Handler) *env {
	t.Helper()
	tk := ticker(t, name)
	if tk.Token && opts.Contracts == nil {
		opts.Contracts = []string{tk.Contract}
	}
	node, err := trontest.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(node.Close)
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	u := node.URL()
	if front != nil {
		target, _ := url.Parse(node.URL())
		srv := httptest.NewServer(front(node, httputil.NewSingleHostReverseProxy(target)))
		t.Cleanup(srv.Close)
		u = srv.URL
	}
	c := httpapi.Config{Ticker: tk, URL: u, Signer: keysign.New(keys)}
	if cfg != nil {
		cfg(&c)
	}
	b, err := httpapi.New(c)
	if err != nil {
		t.Fatal(err)
	}
	contract := ""
	if tk.Token {
		contract = opts.Contracts[0]
	}
	return &env{t: t, tk: tk, node: node, b: b, d: trontest.NewDriver(node, tk, contract, keys, b), keys: keys, ctx: t.Context()}
}

func (e *env) addr(i uint32) string {
	e.t.Helper()
	d, err := chains.NewDeriver(chaintest.Seed, family.All())
	if err != nil {
		e.t.Fatal(err)
	}
	a, err := d.Address(e.tk, i)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func (e *env) pay(to string, v string, fail bool) string {
	e.t.Helper()
	txid, err := e.d.Pay(to, decimal.RequireFromString(v), fail)
	if err != nil {
		e.t.Fatal(err)
	}
	return txid
}

func (e *env) mine(n int) int64 {
	e.t.Helper()
	h, err := e.node.Mine(n)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// forward returns a forward of the payment txid (value v, to address 0)
// to addresses 1 and 2, amount each.
func (e *env) forward(id, txid, v, amount string) chains.Forward {
	from := e.addr(0)
	return chains.Forward{ID: id, From: from, Inputs: []chains.Transfer{{TxID: txid, To: from, Value: decimal.RequireFromString(v)}},
		Outputs: []chains.Output{{Address: e.addr(1), Amount: decimal.RequireFromString(amount)}, {Address: e.addr(2), Amount: decimal.RequireFromString(amount)}}}
}

// rawTxs returns the transactions of a Signed.Raw.
func rawTxs(t *testing.T, s chains.Signed) []map[string]string {
	t.Helper()
	var r struct {
		Transactions []map[string]string `json:"transactions"`
	}
	if err := json.Unmarshal(s.Raw, &r); err != nil {
		t.Fatal(err)
	}
	return r.Transactions
}

// TestNodeFailures: whatever the node does wrong, every method returns an
// error wrapping chains.ErrNode, and nothing panics.
func TestNodeFailures(t *testing.T) {
	faults := map[string]trontest.Fault{
		"HTTP 500":        trontest.FaultStatus,
		"garbage":         trontest.FaultGarbage,
		"wrong JSON":      trontest.FaultWrongShape,
		"java-tron error": trontest.FaultError,
		"hang":            trontest.FaultHang,
	}
	for _, name := range []string{"trx", "trc20/usdt"} {
		for fname, fault := range faults {
			t.Run(name+"/"+fname, func(t *testing.T) {
				t.Parallel()
				e := start(t, name, trontest.Options{}, func(c *httpapi.Config) { c.Timeout = 100 * time.Millisecond }, nil)
				if err := e.d.FundOperator(); err != nil {
					t.Fatal(err)
				}
				txid := e.pay(e.addr(0), "10", false)
				e.mine(1)
				signed, err := e.b.Sign(e.ctx, e.forward("f1", txid, "10", "1"))
				if err != nil {
					t.Fatal(err)
				}
				e.node.SetFault("", fault)
				calls := map[string]func() error{
					"Head":       func() error { _, err := e.b.Head(e.ctx); return err },
					"Blocks":     func() error { _, err := e.b.Blocks(e.ctx, 0, 1); return err },
					"Transfers":  func() error { _, err := e.b.Transfers(e.ctx, 0, 1, nil); return err },
					"State":      func() error { _, err := e.b.State(e.ctx, chains.Transfer{TxID: txid}); return err },
					"Probe":      func() error { _, err := e.b.Probe(e.ctx); return err },
					"Sign":       func() error { _, err := e.b.Sign(e.ctx, e.forward("f2", txid, "10", "1")); return err },
					"Send":       func() error { return e.b.Send(e.ctx, signed) },
					"NetworkFee": func() error { _, err := e.b.NetworkFee(e.ctx); return err },
				}
				if e.tk.Token {
					delete(calls, "NetworkFee") // the ticker's estimate, no node call
				}
				for call, f := range calls {
					if err := f(); !errors.Is(err, chains.ErrNode) {
						t.Errorf("%s: %v, want an error wrapping chains.ErrNode", call, err)
					}
				}
			})
		}
	}
}

// TestNodeFailsOnOnePath: a failure on any one endpoint is reported, not
// read as an empty answer.
func TestNodeFailsOnOnePath(t *testing.T) {
	for _, c := range []struct {
		ticker, path string
		call         func(e *env, txid string) error
	}{
		{"trx", "/walletsolidity/getnowblock", func(e *env, _ string) error { _, err := e.b.Head(e.ctx); return err }},
		{"trc20/usdt", "/wallet/gettransactioninfobyblocknum", func(e *env, _ string) error { _, err := e.b.Transfers(e.ctx, 0, 1, nil); return err }},
		{"trx", "/walletsolidity/gettransactioninfobyid", func(e *env, txid string) error {
			_, err := e.b.State(e.ctx, chains.Transfer{TxID: txid})
			return err
		}},
		{"trx", "/wallet/getblockbynum", func(e *env, txid string) error {
			_, err := e.b.State(e.ctx, chains.Transfer{TxID: txid})
			return err
		}},
	} {
		t.Run(c.ticker+c.path, func(t *testing.T) {
			t.Parallel()
			e := start(t, c.ticker, trontest.Options{}, nil, nil)
			txid := e.pay(e.addr(0), "10", false)
			e.mine(30)
			e.node.SetFault(c.path, trontest.FaultGarbage)
			if err := c.call(e, txid); !errors.Is(err, chains.ErrNode) {
				t.Errorf("%v, want an error wrapping chains.ErrNode", err)
			}
		})
	}
}

// TestNodeDown: an unreachable node is chains.ErrNode, and no error
// repeats the URL's credentials.
func TestNodeDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := strings.Replace(srv.URL, "http://", "http://apikey:s3cr3t-key@", 1)
	srv.Close()
	keys, _ := chains.NewKeys(chaintest.Seed)
	for _, name := range []string{"trx", "trc20/usdt"} {
		tk := ticker(t, name)
		b, err := httpapi.New(httpapi.Config{Ticker: tk, URL: u, Signer: keysign.New(keys), Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		from, _ := chains.NewDeriver(chaintest.Seed, family.All())
		a0, _ := from.Address(tk, 0)
		a1, _ := from.Address(tk, 1)
		f := chains.Forward{ID: "x", From: a0, Inputs: []chains.Transfer{{Value: decimal.NewFromInt(5)}}, Outputs: []chains.Output{{Address: a1, Amount: decimal.NewFromInt(1)}}}
		errs := map[string]error{}
		_, errs["Head"] = b.Head(t.Context())
		_, errs["Blocks"] = b.Blocks(t.Context(), 0, 3)
		_, errs["Transfers"] = b.Transfers(t.Context(), 0, 3, nil)
		_, errs["State"] = b.State(t.Context(), chains.Transfer{TxID: strings.Repeat("ab", 32)})
		_, errs["Probe"] = b.Probe(t.Context())
		_, errs["Sign"] = b.Sign(t.Context(), f)
		if !tk.Token {
			_, errs["NetworkFee"] = b.NetworkFee(t.Context())
		}
		for call, err := range errs {
			if !errors.Is(err, chains.ErrNode) {
				t.Errorf("%s %s: %v, want an error wrapping chains.ErrNode", name, call, err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("%s %s: error shows the API key: %v", name, call, err)
			}
		}
	}
}

// TestCredentials: the URL's userinfo reaches the node as TronGrid's API
// key header or as basic authentication.
func TestCredentials(t *testing.T) {
	for _, c := range []struct{ userinfo, header, want string }{
		{"apikey:k-123", "Tron-Pro-Api-Key", "k-123"},
		{"alice:pw", "Authorization", "Basic YWxpY2U6cHc="},
	} {
		var got atomic.Value
		e := start(t, "trx", trontest.Options{}, func(cfg *httpapi.Config) {
			cfg.URL = strings.Replace(cfg.URL, "http://", "http://"+c.userinfo+"@", 1)
		}, func(_ *trontest.Node, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Store(r.Header.Get(c.header))
				next.ServeHTTP(w, r)
			})
		})
		if _, err := e.b.Head(e.ctx); err != nil {
			t.Fatal(err)
		}
		if g, _ := got.Load().(string); g != c.want {
			t.Errorf("%s: header %s = %q, want %q", c.userinfo, c.header, g, c.want)
		}
	}
}

// TestSendRetried: a forward sent again (before its block, after it, and
// after it expired) succeeds and is one transaction.
func TestSendRetried(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, func(c *httpapi.Config) { c.Expiration = time.Minute }, nil)
	txid := e.pay(e.addr(0), "10", false)
	e.mine(1)
	s, err := e.b.Sign(e.ctx, e.forward("f", txid, "10", "2"))
	if err != nil {
		t.Fatal(err)
	}
	txs := rawTxs(t, s)
	if len(txs) != 2 || txs[0]["txID"] != s.TxID {
		t.Fatalf("signed %v, txid %s", txs, s.TxID)
	}
	for range 3 {
		if err := e.b.Send(e.ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if blocks, pending := e.node.Included(s.TxID); blocks != 0 || !pending {
		t.Fatalf("before mining: in %d blocks, pending %v", blocks, pending)
	}
	if st, err := e.b.State(e.ctx, chains.Transfer{TxID: s.TxID}); err != nil || !st.Present || st.Confirmations != 0 {
		t.Errorf("pending forward: %+v, %v", st, err)
	}
	e.mine(1)
	if err := e.b.Send(e.ctx, s); err != nil {
		t.Errorf("send after the block: %v", err)
	}
	e.mine(25) // 75 s: past the one-minute expiration
	if err := e.b.Send(e.ctx, s); err != nil {
		t.Errorf("send after expiry of a transaction in a block: %v", err)
	}
	for _, tx := range txs {
		if blocks, pending := e.node.Included(tx["txID"]); blocks != 1 || pending {
			t.Errorf("%s: in %d blocks, pending %v; want one block", tx["txID"], blocks, pending)
		}
	}
	if got := e.node.Balance(e.addr(1)); got != 2_000_000 {
		t.Errorf("output 1 holds %d sun, want 2000000", got)
	}
}

// TestSendRefused: bytes the node refuses for good are ErrRejected (never
// sent and expired; a signature that does not verify), and bytes Sign did
// not make are chains.ErrInvalidForward.
func TestSendRefused(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, func(c *httpapi.Config) { c.Expiration = time.Minute }, nil)
	txid := e.pay(e.addr(0), "10", false)
	e.mine(1)
	s, err := e.b.Sign(e.ctx, e.forward("f", txid, "10", "2"))
	if err != nil {
		t.Fatal(err)
	}
	single := e.forward("g", txid, "10", "3")
	single.Outputs = single.Outputs[:1]
	one, err := e.b.Sign(e.ctx, single)
	if err != nil {
		t.Fatal(err)
	}

	// Flip a bit of the first transaction's signature (the protobuf's last
	// field): the id is unchanged, the signer is not the owner.
	var r struct {
		Transactions []map[string]string `json:"transactions"`
	}
	_ = json.Unmarshal(s.Raw, &r)
	data, _ := hex.DecodeString(r.Transactions[0]["transaction"])
	data[len(data)-10] ^= 1
	r.Transactions[0]["transaction"] = hex.EncodeToString(data)
	bad, _ := json.Marshal(r)
	if err := e.b.Send(e.ctx, chains.Signed{TxID: s.TxID, Raw: bad}); !errors.Is(err, httpapi.ErrRejected) {
		t.Errorf("tampered signature: %v, want ErrRejected", err)
	}
	if blocks, pending := e.node.Included(s.TxID); blocks != 0 || pending {
		t.Errorf("tampered transaction accepted: %d blocks, pending %v", blocks, pending)
	}

	for name, raw := range map[string][]byte{
		"not JSON":    []byte("garbage"),
		"no txs":      []byte(`{"transactions": []}`),
		"not hex":     []byte(`{"transactions": [{"txID": "00", "transaction": "zz"}]}`),
		"id mismatch": bytes.Replace(s.Raw, []byte(s.TxID), []byte(strings.Repeat("0", 64)), 1),
	} {
		if err := e.b.Send(e.ctx, chains.Signed{Raw: raw}); !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("%s: %v, want ErrInvalidForward", name, err)
		}
	}

	e.mine(25) // past the expiration, never sent
	if err := e.b.Send(e.ctx, one); !errors.Is(err, httpapi.ErrRejected) || !errors.Is(err, chains.ErrNeverLands) {
		t.Errorf("one transaction, expired, never sent: %v, want ErrRejected and chains.ErrNeverLands", err)
	}
	// Of two transactions, an earlier attempt may have sent the second:
	// never declared dead.
	if err := e.b.Send(e.ctx, s); !errors.Is(err, httpapi.ErrRejected) || errors.Is(err, chains.ErrNeverLands) {
		t.Errorf("two transactions, expired: %v, want ErrRejected, not chains.ErrNeverLands", err)
	}
}

// TestTokenForward: a TRC20 forward is a gas top-up from the operator and
// one token transfer per output; it pays each output exactly, and a
// payment address that holds enough TRX gets no top-up.
func TestTokenForward(t *testing.T) {
	e := start(t, "trc20/usdt", trontest.Options{}, nil, nil)
	usdt := e.tk.Contract
	from := e.addr(0)
	txid := e.pay(from, "100", false)
	e.mine(1)
	if err := e.d.FundOperator(); err != nil {
		t.Fatal(err)
	}
	op, _ := e.keys.OperatorAddress(e.tk)
	opBefore := e.node.Balance(op)

	s, err := e.b.Sign(e.ctx, e.forward("f", txid, "100", "30"))
	if err != nil {
		t.Fatal(err)
	}
	txs := rawTxs(t, s)
	if len(txs) != 3 || txs[1]["txID"] != s.TxID {
		t.Fatalf("signed %d transactions, txid %s: %v", len(txs), s.TxID, txs)
	}
	if err := e.b.Send(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	top := e.mine(1)
	for i, a := range []string{e.addr(1), e.addr(2)} {
		if got := e.node.TokenBalance(usdt, a); got.Cmp(big.NewInt(30_000_000)) != 0 {
			t.Errorf("output %d holds %s, want 30000000", i+1, got)
		}
	}
	if got := e.node.TokenBalance(usdt, from); got.Cmp(big.NewInt(40_000_000)) != 0 {
		t.Errorf("payment address keeps %s, want 40000000", got)
	}
	// Gas: the fake's TRC20 transfer costs 65,000 energy at 100 sun; the
	// top-up covers the configured 150,000 each, so TRX stays on From.
	if spent := opBefore - e.node.Balance(op); spent < 2*150_000*100 {
		t.Errorf("operator spent %d sun on the top-up", spent)
	}
	if left := e.node.Balance(from); left <= 0 {
		t.Errorf("payment address holds %d sun after the forward", left)
	}
	trs, err := e.b.Transfers(e.ctx, top-1, top, nil)
	if err != nil || len(trs) != 2 || trs[0].TxID != s.TxID || trs[0].Index != 0 {
		t.Errorf("forward's transfers %+v, %v", trs, err)
	}
	for _, tr := range trs {
		if st, err := e.b.State(e.ctx, tr); err != nil || !st.Executed || !st.Present {
			t.Errorf("state of %s: %+v, %v", tr.TxID, st, err)
		}
	}

	// From now holds enough TRX for another forward: no top-up.
	s2, err := e.b.Sign(e.ctx, chains.Forward{ID: "f2", From: from, Inputs: []chains.Transfer{{Value: decimal.NewFromInt(40)}},
		Outputs: []chains.Output{{Address: e.addr(1), Amount: decimal.NewFromInt(1)}}})
	if err != nil {
		t.Fatal(err)
	}
	if txs := rawTxs(t, s2); len(txs) != 1 || txs[0]["txID"] != s2.TxID {
		t.Errorf("second forward: %d transactions", len(txs))
	}
}

// TestTokenForwardOutOfEnergy: a fee limit below what the transfer burns
// fails its execution; State says so.
func TestTokenForwardOutOfEnergy(t *testing.T) {
	e := start(t, "trc20/usdt", trontest.Options{}, func(c *httpapi.Config) { c.TokenEnergy = 1000 }, nil)
	txid := e.pay(e.addr(0), "100", false)
	e.mine(1)
	if err := e.d.FundOperator(); err != nil {
		t.Fatal(err)
	}
	s, err := e.b.Sign(e.ctx, e.forward("f", txid, "100", "30"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.Send(e.ctx, s); err != nil {
		t.Fatal(err)
	}
	top := e.mine(1)
	st, err := e.b.State(e.ctx, chains.Transfer{TxID: s.TxID, To: e.addr(1)})
	if err != nil || !st.Present || st.Executed || st.Confirmations != 1 {
		t.Errorf("out-of-energy forward: %+v, %v; want present, not executed", st, err)
	}
	if trs, err := e.b.Transfers(e.ctx, top-1, top, nil); err != nil || len(trs) != 0 {
		t.Errorf("failed transfers reported: %+v, %v", trs, err)
	}
}

// TestTokenForwardWithoutOperatorFunds: the top-up cannot be built; Sign
// says why and signs nothing.
func TestTokenForwardWithoutOperatorFunds(t *testing.T) {
	e := start(t, "trc20/usdt", trontest.Options{}, nil, nil)
	txid := e.pay(e.addr(0), "100", false)
	e.mine(1)
	_, err := e.b.Sign(e.ctx, e.forward("f", txid, "100", "30"))
	if !errors.Is(err, chains.ErrNode) || !strings.Contains(err.Error(), "operator") {
		t.Errorf("Sign without operator funds: %v", err)
	}
}

// TestSignRefuses: forwards Sign cannot make as they are.
func TestSignRefuses(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, nil, nil)
	txid := e.pay(e.addr(0), "2", false)
	e.mine(1)
	from := e.addr(0)
	in := []chains.Transfer{{TxID: txid, To: from, Value: decimal.NewFromInt(2)}}
	out := func(a string) []chains.Output {
		return []chains.Output{{Address: e.addr(1), Amount: decimal.RequireFromString(a)}}
	}
	for name, f := range map[string]chains.Forward{
		"balance short of the bandwidth": {ID: "a", From: from, Inputs: in, Outputs: out("1.9")},
		"inputs short":                   {ID: "b", From: from, Inputs: in, Outputs: out("1.9"), NetworkFee: decimal.RequireFromString("0.2")},
		"wrong key index":                {ID: "c", From: from, FromIndex: 5, Inputs: in, Outputs: out("1")},
		"to itself":                      {ID: "d", From: from, Inputs: in, Outputs: []chains.Output{{Address: from, Amount: decimal.NewFromInt(1)}}},
		"input to another address":       {ID: "e", From: from, Inputs: []chains.Transfer{{To: e.addr(3), Value: decimal.NewFromInt(2)}}, Outputs: out("1")},
		"too large":                      {ID: "f", From: from, Inputs: []chains.Transfer{{Value: decimal.New(1, 20)}}, Outputs: out("1e14")},
	} {
		if s, err := e.b.Sign(e.ctx, f); !errors.Is(err, chains.ErrInvalidForward) {
			t.Errorf("%s: %v, %v; want ErrInvalidForward", name, s.TxID, err)
		}
	}
	watch, err := httpapi.New(httpapi.Config{Ticker: e.tk, URL: e.node.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Sign(e.ctx, e.forward("g", txid, "2", "0.5")); !errors.Is(err, httpapi.ErrWatchOnly) {
		t.Errorf("watch-only: %v", err)
	}
}

// TestLyingNode: a node that builds another transaction than asked (here:
// another recipient, with a txID that matches) gets nothing signed.
func TestLyingNode(t *testing.T) {
	for _, name := range []string{"trx", "trc20/usdt"} {
		t.Run(name, func(t *testing.T) {
			var victim, thief string
			e := start(t, name, trontest.Options{}, nil, func(_ *trontest.Node, next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/wallet/createtransaction" && r.URL.Path != "/wallet/triggersmartcontract" {
						next.ServeHTTP(w, r)
						return
					}
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, r)
					body := rec.Body.String()
					var m map[string]any
					_ = json.Unmarshal([]byte(body), &m)
					tx := m
					if inner, ok := m["transaction"].(map[string]any); ok {
						tx = inner
					}
					if h, ok := tx["raw_data_hex"].(string); ok && strings.Contains(h, victim) {
						h = strings.Replace(h, victim, thief, 1)
						raw, _ := hex.DecodeString(h)
						tx["raw_data_hex"], tx["txID"] = h, sha256hex(raw)
					}
					_ = json.NewEncoder(w).Encode(m)
				})
			})
			victim, thief = hexAccount(t, e.addr(1))[2:], hexAccount(t, e.addr(7))[2:]
			txid := e.pay(e.addr(0), "10", false)
			e.mine(1)
			if err := e.d.FundOperator(); err != nil {
				t.Fatal(err)
			}
			_, err := e.b.Sign(e.ctx, e.forward("f", txid, "10", "1"))
			if !errors.Is(err, chains.ErrNode) || !strings.Contains(err.Error(), "built another") {
				t.Errorf("Sign through a lying node: %v", err)
			}
		})
	}
}

// TestReorgWhileReading: blocks read in several batches must form one
// chain; a reorganisation between two batches is an error, not a mix.
func TestReorgWhileReading(t *testing.T) {
	var calls atomic.Int32
	e := start(t, "trx", trontest.Options{}, func(c *httpapi.Config) { c.BatchBlocks = 2 }, func(node *trontest.Node, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wallet/getblockbylimitnext" && calls.Add(1) == 2 {
				_, _ = node.Reorg(5) // replaces block 2, read in the first batch
				_, _ = node.Mine(5)
			}
			next.ServeHTTP(w, r)
		})
	})
	e.mine(6)
	if _, err := e.b.Blocks(e.ctx, 0, 6); !errors.Is(err, chains.ErrNode) {
		t.Errorf("Blocks across a reorganisation: %v, want chains.ErrNode", err)
	}
	if bs, err := e.b.Blocks(e.ctx, 0, 6); err != nil || len(bs) != 6 {
		t.Errorf("Blocks after it: %d, %v", len(bs), err)
	}
}

// TestStaleInfo: a transaction whose info names a block that does not
// contain it (the node's info outlived a reorganisation) is not present.
func TestStaleInfo(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, nil, func(_ *trontest.Node, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/wallet/gettransactioninfobyid" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			_, _ = io.WriteString(w, strings.Replace(rec.Body.String(), `"blockNumber":1,`, `"blockNumber":2,`, 1))
		})
	})
	txid := e.pay(e.addr(0), "10", false)
	e.mine(3)
	if st, err := e.b.State(e.ctx, chains.Transfer{TxID: txid}); err != nil || st.Present || st.Confirmations != 0 {
		t.Errorf("state %+v, %v; want not present", st, err)
	}
}

// TestContractOption: ?contract= overrides the ticker's (mainnet)
// contract, and only the configured contract's transfers are reported.
func TestContractOption(t *testing.T) {
	const testToken = "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf" // Nile's test USDT
	e := start(t, "trc20/usdt", trontest.Options{Contracts: []string{testToken}}, func(c *httpapi.Config) {
		c.URL += "?contract=" + testToken
	}, nil)
	if e.b.Contract() != testToken {
		t.Fatalf("contract %s", e.b.Contract())
	}
	txid := e.pay(e.addr(0), "5", false)
	e.mine(1)
	trs, err := e.b.Transfers(e.ctx, 0, 1, nil)
	if err != nil || len(trs) != 1 || trs[0].TxID != txid || !trs[0].Value.Equal(decimal.NewFromInt(5)) {
		t.Errorf("transfers %+v, %v", trs, err)
	}
	mainnet, err := httpapi.New(httpapi.Config{Ticker: e.tk, URL: e.node.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if trs, err := mainnet.Transfers(e.ctx, 0, 1, nil); err != nil || len(trs) != 0 {
		t.Errorf("the mainnet contract's backend reports %+v, %v", trs, err)
	}
}

// TestZeroTokenTransfer: a transfer of 0 (address-poisoning spam) is not
// reported; failed ones are not either.
func TestZeroTokenTransfer(t *testing.T) {
	e := start(t, "trc20/usdt", trontest.Options{}, nil, nil)
	if _, err := e.node.Pay(e.tk.Contract, e.addr(0), big.NewInt(0), false); err != nil {
		t.Fatal(err)
	}
	e.pay(e.addr(0), "1", true)
	good := e.pay(e.addr(0), "0.000001", false)
	e.mine(1)
	if trs, err := e.b.Transfers(e.ctx, 0, 1, nil); err != nil || len(trs) != 1 || trs[0].TxID != good {
		t.Errorf("transfers %+v, %v; want only %s", trs, err, good)
	}
}

// TestStateOfUnknown: a hash the node does not know, or that is not a
// hash, is not present.
func TestStateOfUnknown(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, nil, nil)
	e.mine(2)
	for _, id := range []string{strings.Repeat("ab", 32), "xyz", ""} {
		if st, err := e.b.State(e.ctx, chains.Transfer{TxID: id}); err != nil || st != (chains.TxState{}) {
			t.Errorf("%q: %+v, %v", id, st, err)
		}
	}
}

// TestRanges: ranges outside the chain are ErrInvalidRange.
func TestRanges(t *testing.T) {
	e := start(t, "trx", trontest.Options{}, func(c *httpapi.Config) { c.BatchBlocks = 3 }, nil)
	e.mine(5)
	for _, r := range [][2]int64{{-1, 2}, {3, 2}, {0, 6}, {4, 9}} {
		if _, err := e.b.Blocks(e.ctx, r[0], r[1]); !errors.Is(err, httpapi.ErrInvalidRange) {
			t.Errorf("Blocks(%d, %d): %v", r[0], r[1], err)
		}
		if _, err := e.b.Transfers(e.ctx, r[0], r[1], nil); !errors.Is(err, httpapi.ErrInvalidRange) {
			t.Errorf("Transfers(%d, %d): %v", r[0], r[1], err)
		}
	}
	if bs, err := e.b.Blocks(e.ctx, 0, 5); err != nil || len(bs) != 5 || bs[0].Parent != "" || bs[4].Parent != bs[3].Hash {
		t.Errorf("Blocks(0, 5) in batches of 3: %+v, %v", bs, err)
	}
}

// TestProbe: the genesis block tells the network.
func TestProbe(t *testing.T) {
	for _, c := range []struct {
		genesis string
		net     chains.Net
		network string // "" for ErrWrongNetwork
	}{
		{"", chains.Regtest, "private"},
		{"", chains.Mainnet, ""},
		{httpapi.GenesisMainnet, chains.Mainnet, "mainnet"},
		{httpapi.GenesisMainnet, chains.Regtest, ""},
		{httpapi.GenesisNile, chains.Testnet, "nile"},
		{httpapi.GenesisShasta, chains.Testnet, "shasta"},
		{httpapi.GenesisNile, chains.Mainnet, ""},
	} {
		e := start(t, "trx", trontest.Options{Genesis: c.genesis}, func(cfg *httpapi.Config) { cfg.Ticker.Net = c.net }, nil)
		e.mine(4)
		info, err := e.b.Probe(e.ctx)
		switch {
		case c.network == "" && !errors.Is(err, chains.ErrWrongNetwork):
			t.Errorf("genesis %q on %s: %+v, %v; want ErrWrongNetwork", c.genesis, c.net, info, err)
		case c.network != "" && (err != nil || info.Network != c.network || info.Height != 4 || info.Version != "java-tron "+trontest.DefaultVersion):
			t.Errorf("genesis %q on %s: %+v, %v", c.genesis, c.net, info, err)
		}
	}
}

// TestNetworkFee: trx pays the bandwidth of one transfer at the chain's
// price; a token reports the ticker's estimate.
func TestNetworkFee(t *testing.T) {
	e := start(t, "trx", trontest.Options{TransactionFee: 10}, nil, nil)
	if fee, err := e.b.NetworkFee(e.ctx); err != nil || !fee.Equal(decimal.RequireFromString("0.003")) {
		t.Errorf("trx fee %s, %v", fee, err)
	}
	tok := start(t, "trc20/usdt", trontest.Options{}, nil, nil)
	if fee, err := tok.b.NetworkFee(tok.ctx); err != nil || !fee.Equal(tok.tk.NetworkFeeEstimate) {
		t.Errorf("token fee %s, %v", fee, err)
	}
}

func sha256hex(b []byte) string {
	h := sha256sum(b)
	return hex.EncodeToString(h[:])
}

func sha256sum(b []byte) [32]byte { return sha256.Sum256(b) }

// hexAccount returns a T... address in the node's hex form, 41....
func hexAccount(t *testing.T, a string) string {
	t.Helper()
	payload, version, err := base58.CheckDecode(a)
	if err != nil || version != 0x41 {
		t.Fatalf("%s: %v", a, err)
	}
	return "41" + hex.EncodeToString(payload)
}

// TestSolidified: a receipt is solidified once its block is at or below
// the solidified head, which lags the tip by 19 blocks; Head reports both.
func TestSolidified(t *testing.T) {
	for _, name := range []string{"trx", "trc20/usdt"} {
		e := start(t, name, trontest.Options{}, nil, nil)
		txid := e.pay(e.addr(0), "10", false)
		e.mine(19)
		tr := chains.Transfer{TxID: txid, To: e.addr(0)}
		st, err := e.b.State(e.ctx, tr)
		head, _ := e.b.Head(e.ctx)
		if err != nil || !st.Present || !st.Executed || st.Solidified || st.Confirmations != 19 || head.Solidified != 0 || head.Height != 19 {
			t.Errorf("%s at 19: %+v, head %+v, %v", name, st, head, err)
		}
		e.mine(1)
		st, err = e.b.State(e.ctx, tr)
		head, _ = e.b.Head(e.ctx)
		if err != nil || !st.Solidified || !st.Executed || st.Confirmations != 20 || head.Solidified != 1 {
			t.Errorf("%s at 20: %+v, head %+v, %v", name, st, head, err)
		}
		// The receipt of another address's log index is not this payment's.
		if st, err := e.b.State(e.ctx, chains.Transfer{TxID: txid, To: e.addr(1)}); e.tk.Token && (err != nil || st.Executed) {
			t.Errorf("%s: state for another recipient %+v, %v", name, st, err)
		}
	}
}
