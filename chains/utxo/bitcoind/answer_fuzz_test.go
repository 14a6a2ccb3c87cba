package bitcoind

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// bodyTransport answers every request with one body, as a node would.
type bodyTransport struct{ body []byte }

// RoundTrip implements http.RoundTripper.
func (b *bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b.body)), Request: r}, nil
}

// Seeds of FuzzNodeAnswer: results as Bitcoin Core prints them, and whole
// JSON-RPC answers carrying them.
const (
	fuzzTxID   = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
	fuzzBlock  = "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f"
	fuzzP2WPKH = "0014751e76e8199196d454941c45d1b3a323f1433bd6"
	fuzzP2PKH  = "76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"
	fuzzTx     = `{"txid":"` + fuzzTxID + `","vin":[{"txid":"` + fuzzTxID + `","vout":0}],"vout":[` +
		`{"value":0.00150000,"n":0,"scriptPubKey":{"hex":"` + fuzzP2WPKH + `"}},` +
		`{"value":12.5,"n":1,"scriptPubKey":{"hex":"` + fuzzP2PKH + `"}},` +
		`{"value":0,"n":2,"scriptPubKey":{"hex":"6a0548656c6c6f"}}]}`
)

// FuzzNodeAnswer feeds one body to what turns a bitcoind node's answers
// into payhook's types: as a result, getblock (verbosity 2) through
// blockTransfers and getrawtransaction (verbose) through txTransfers; as a
// whole JSON-RPC answer, gettxout (Unspent), estimatesmartfee (FeeRate,
// NetworkFee) and getrawtransaction with getblockheader (State), through
// the client. None may panic, and what is accepted keeps the invariants
// the code states: a transfer pays a valid address of the ticker a
// positive value in whole base units, from a transaction with a valid id,
// at an output index that is not negative; an unspent output has a value
// that is not negative; the fee rate is at least 1 base unit per vbyte and
// the network fee is not negative. testdata/fuzz/FuzzNodeAnswer holds the
// answers that were once accepted: a negative output index, and gettxout
// values that were negative or overflowed int64.
func FuzzNodeAnswer(f *testing.F) {
	for _, s := range []string{
		fuzzTx,
		`{"hash":"` + fuzzBlock + `","height":7,"previousblockhash":"` + fuzzBlock + `","confirmations":3,"tx":[` +
			`{"txid":"` + fuzzTxID + `","vin":[{"coinbase":"04ffff001d"}],"vout":[{"value":50,"n":0,"scriptPubKey":{"hex":"` + fuzzP2PKH + `"}}]},` + fuzzTx + `]}`,
		`{"txid":"` + fuzzTxID + `","vout":[{"value":1e-9,"n":0,"scriptPubKey":{"hex":"` + fuzzP2WPKH + `"}}]}`,
		`{"txid":"` + fuzzTxID + `","vout":[{"value":-1,"n":0,"scriptPubKey":{"hex":"` + fuzzP2WPKH + `"}}]}`,
		`{"txid":"` + fuzzTxID + `","vout":[{"value":1,"scriptPubKey":{"hex":"` + fuzzP2WPKH + `"}}]}`,
		`{"result":{"bestblock":"` + fuzzBlock + `","confirmations":1,"value":0.0015,"scriptPubKey":{"hex":"` + fuzzP2WPKH + `"},"coinbase":false},"error":null,"id":0}`,
		`{"result":null,"error":null,"id":0}`,
		`{"result":{"feerate":0.00012,"blocks":6},"error":null,"id":0}`,
		`{"result":{"feerate":-1,"errors":["Insufficient data or no feerate found"],"blocks":0},"error":null,"id":0}`,
		`{"result":{"blockhash":"` + fuzzBlock + `","confirmations":4,"txid":"` + fuzzTxID + `"},"error":null,"id":0}`,
		`{"result":null,"error":{"code":-5,"message":"No such mempool or blockchain transaction"},"id":0}`,
		`{"result":1,"error":null,"id":7}`,
		`[{"result":1,"id":0}]`,
	} {
		f.Add([]byte(s))
	}
	tk, err := family.DefaultRegistry().Get("btc")
	if err != nil {
		f.Fatal(err)
	}
	rt := &bodyTransport{}
	b, err := New(Config{Ticker: tk, URL: "http://user:pass@node.invalid:8332/", Client: &http.Client{Transport: rt}})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body []byte) {
		var blk verboseBlock
		if decode(response{Result: body}, &blk, "getblock") == nil {
			if ts, err := b.blockTransfers(blk, nil); err == nil {
				for _, tr := range ts {
					checkTransfer(t, tk, tr)
					if tr.Height != blk.Height || tr.BlockHash != blk.Hash {
						t.Fatalf("blockTransfers: %+v is not in block %d %s", tr, blk.Height, blk.Hash)
					}
				}
			}
		}
		var tx verboseTx
		if decode(response{Result: body}, &tx, "getrawtransaction") == nil {
			if ts, err := b.txTransfers(tx, nil); err == nil {
				for _, tr := range ts {
					checkTransfer(t, tk, tr)
				}
			}
		}

		rt.body = body
		if v, _, ok, err := b.Unspent(ctx, fuzzTxID, 0); err == nil && ok {
			// The value is the one answered, in base units.
			var res struct {
				Result struct {
					Value json.Number `json:"value"`
				} `json:"result"`
			}
			_ = json.Unmarshal(body, &res)
			answered, err := decimal.NewFromString(res.Result.Value.String())
			if v < 0 || err != nil || !decimal.New(v, -tk.Decimals).Equal(answered) {
				t.Fatalf("Unspent accepted %d base units for the value %q", v, res.Result.Value)
			}
		}
		if r, err := b.FeeRate(ctx); err == nil && r < 1 {
			t.Fatalf("FeeRate = %d base units per vbyte", r)
		}
		if fee, err := b.NetworkFee(ctx); err == nil && fee.Sign() < 0 {
			t.Fatalf("NetworkFee = %s", fee)
		}
		if st, err := b.State(ctx, chains.Transfer{TxID: fuzzTxID}); err == nil && st.Present && st.Confirmations < 1 {
			t.Fatalf("State = %+v: present with %d confirmations", st, st.Confirmations)
		}
	})
}

// checkTransfer fails t for a transfer txTransfers should not have made.
func checkTransfer(t *testing.T, tk chains.Ticker, tr chains.Transfer) {
	t.Helper()
	switch {
	case !isHash(tr.TxID):
		t.Fatalf("transfer with txid %q", tr.TxID)
	case tr.Index < 0 || tr.Index > math.MaxUint32:
		t.Fatalf("transfer %s at output %d", tr.TxID, tr.Index)
	case chains.ValidateAddress(tk, tr.To) != nil:
		t.Fatalf("transfer %s to %q, not a %s address", tr.TxID, tr.To, tk.Ticker)
	case tr.Value.Sign() <= 0 || !tr.Value.Shift(tk.Decimals).IsInteger():
		t.Fatalf("transfer %s of %s", tr.TxID, tr.Value)
	}
}
