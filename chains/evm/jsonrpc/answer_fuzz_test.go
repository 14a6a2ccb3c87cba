package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// fuzzTip is the height eth_blockNumber answers in FuzzNodeAnswer.
const fuzzTip = 0x100

// resultTransport answers every JSON-RPC call (single or batched) with one
// result, as a node would, keeping each call's id: eth_blockNumber and
// eth_chainId get fixed answers, every other method the result body.
type resultTransport struct{ result []byte }

// RoundTrip implements http.RoundTripper.
func (rt *resultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	req, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	type call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	answer := func(c call) []byte {
		result := rt.result
		switch c.Method {
		case "eth_blockNumber":
			result = []byte(`"0x100"`)
		case "eth_chainId":
			result = []byte(`"0x1"`)
		}
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":`)
		b.Write(c.ID)
		b.WriteString(`,"result":`)
		b.Write(result)
		b.WriteString(`}`)
		return b.Bytes()
	}
	var out []byte
	var calls []call
	if json.Unmarshal(req, &calls) == nil {
		out = append(out, '[')
		for i, c := range calls {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, answer(c)...)
		}
		out = append(out, ']')
	} else {
		var c call
		if err := json.Unmarshal(req, &c); err != nil {
			return nil, err
		}
		out = answer(c)
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(out)), ContentLength: int64(len(out)), Request: r}, nil
}

// Seeds of FuzzNodeAnswer, results as geth prints them.
const (
	fuzzHash     = "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"
	fuzzParent   = "0x1f1b4e1fd4d5a8e7cc07ac8f2d1a3f6b0e6d5c4b3a29180706050403020100ff"
	fuzzFrom     = "0xa7d9ddbe1f17865597fbd27ec712455208b6b76d"
	fuzzTo       = "0xf02c1c8e6114b1dbe8937a39260b5b0a374432bb"
	fuzzUSDT     = "0xdac17f958d2ee523a2206206994597c13d831ec7"
	fuzzTopic    = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
	fuzzToTopic  = "0x000000000000000000000000f02c1c8e6114b1dbe8937a39260b5b0a374432bb"
	fuzzFromWord = "0x000000000000000000000000a7d9ddbe1f17865597fbd27ec712455208b6b76d"
	fuzzValue    = "0x00000000000000000000000000000000000000000000000000000000000f4240"
	fuzzTransfer = "0xa9059cbb000000000000000000000000f02c1c8e6114b1dbe8937a39260b5b0a374432bb00000000000000000000000000000000000000000000000000000000000f4240"
)

// FuzzNodeAnswer answers every call of an EVM backend (native eth and
// the erc20 USDT token, on mainnet) with one fuzzed JSON-RPC result and
// runs what turns node answers into payhook's types: Blocks and Transfers
// (eth_getBlockByNumber with transactions, eth_getLogs and tokenTransfer),
// Mempool (the pending block and tokenCall) and State (the receipt, its
// block and its logs). None may panic, and what is accepted keeps the
// invariants the code states: blocks of the heights asked for with 32-byte
// hashes; transfers to a valid address with a positive value, a 32-byte
// transaction hash, at a height asked for (0 from the mempool) and an
// index that is not negative; a state present with at least one
// confirmation once in a block.
func FuzzNodeAnswer(f *testing.F) {
	for _, s := range []string{
		`{"number":"0x10","hash":"` + fuzzHash + `","parentHash":"` + fuzzParent + `","baseFeePerGas":"0x3b9aca00","transactions":[` +
			`{"hash":"` + fuzzHash + `","from":"` + fuzzFrom + `","to":"` + fuzzTo + `","value":"0xde0b6b3a7640000","blockNumber":"0x10","input":"0x"},` +
			`{"hash":"` + fuzzHash + `","from":"` + fuzzFrom + `","to":"` + fuzzUSDT + `","value":"0x0","input":"` + fuzzTransfer + `"},` +
			`{"hash":"` + fuzzHash + `","from":"` + fuzzFrom + `","to":null,"value":"0x1"}]}`,
		`{"number":"0x10","hash":"` + fuzzHash + `","parentHash":"` + fuzzParent + `","transactions":[{"hash":"` + fuzzHash + `","to":"` + fuzzTo + `"}]}`,
		`[{"address":"` + fuzzUSDT + `","topics":["` + fuzzTopic + `","` + fuzzFromWord + `","` + fuzzToTopic + `"],"data":"` + fuzzValue + `",` +
			`"blockNumber":"0x10","blockHash":"` + fuzzHash + `","transactionHash":"` + fuzzHash + `","logIndex":"0x3","removed":false}]`,
		`[{"address":"` + fuzzUSDT + `","topics":["` + fuzzTopic + `","` + fuzzFromWord + `","` + fuzzToTopic + `"],"data":"0x01",` +
			`"blockNumber":"0xffffffffffffffff","blockHash":"` + fuzzHash + `","transactionHash":"` + fuzzHash + `","logIndex":"0x8000000000000000"}]`,
		`{"status":"0x1","blockNumber":"0x10","blockHash":"` + fuzzHash + `","hash":"` + fuzzHash + `","number":"0x10","parentHash":"` + fuzzParent + `",` +
			`"logs":[{"address":"` + fuzzUSDT + `","topics":["` + fuzzTopic + `","` + fuzzFromWord + `","` + fuzzToTopic + `"],"data":"` + fuzzValue + `"}]}`,
		`{"status":"0x0","blockNumber":"0x200","blockHash":"` + fuzzHash + `","hash":"` + fuzzHash + `"}`,
		`null`, `"0x10"`, `[]`, `{}`, `{"transactions":[null,1,"x"]}`,
	} {
		f.Add([]byte(s))
	}
	rt := &resultTransport{}
	var backends []*Backend
	for _, name := range []string{"eth", "erc20/usdt"} {
		tk, err := family.DefaultRegistry().Get(name)
		if err != nil {
			f.Fatal(err)
		}
		b, err := New(Config{Ticker: tk, URL: "http://node.invalid:8545/", Client: &http.Client{Transport: rt}})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(b.Close)
		backends = append(backends, b)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, result []byte) {
		rt.result = result
		for _, b := range backends {
			tk := b.Ticker()
			if blocks, err := b.Blocks(ctx, 0xf, 0x10); err == nil {
				for i, blk := range blocks {
					if blk.Height != 0x10+int64(i) || len(blk.Hash) != 66 || len(blk.Parent) != 66 {
						t.Fatalf("%s Blocks accepted %+v", tk.Ticker, blk)
					}
				}
			}
			if ts, err := b.Transfers(ctx, 0xf, 0x10, nil); err == nil {
				for _, tr := range ts {
					checkTransfer(t, tk, tr, 0x10)
				}
			}
			if ts, err := b.Mempool(ctx, nil); err == nil {
				for _, tr := range ts {
					checkTransfer(t, tk, tr, 0)
				}
			}
			st, err := b.State(ctx, chains.Transfer{TxID: fuzzHash, To: fuzzTo})
			if err == nil && st.Present && st.Solidified && (st.Confirmations < 1 || st.Confirmations > fuzzTip+1) {
				t.Fatalf("%s State accepted %+v", tk.Ticker, st)
			}
		}
	})
}

// checkTransfer fails t for a transfer the backend should not have made:
// height is the one block asked for (0: the mempool).
func checkTransfer(t *testing.T, tk chains.Ticker, tr chains.Transfer, height int64) {
	t.Helper()
	switch {
	case len(tr.TxID) != 66:
		t.Fatalf("%s transfer with txid %q", tk.Ticker, tr.TxID)
	case tr.Height != height || tr.Index < 0:
		t.Fatalf("%s transfer %s at height %d index %d", tk.Ticker, tr.TxID, tr.Height, tr.Index)
	case chains.ValidateAddress(tk, tr.To) != nil:
		t.Fatalf("%s transfer %s to %q", tk.Ticker, tr.TxID, tr.To)
	case tr.Value.Sign() <= 0 || !tr.Value.Shift(tk.Decimals).IsInteger():
		t.Fatalf("%s transfer %s of %s", tk.Ticker, tr.TxID, tr.Value)
	}
}
