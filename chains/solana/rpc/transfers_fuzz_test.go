package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	solana "github.com/gagliardetto/solana-go"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
)

// Fixed answers of txTransport: the signature and slot listed when the
// fuzzed transaction names none, and the including block's hashes.
const (
	fuzzSig       = "2nBhEBYYvfaAe16UMNqRHre4YNSskvuYgx3M6E4JP1oDYvZEJHvoPzyUidNgNX5r9sTyN1J9UxtbCXy2rqYcuyuv"
	fuzzSlot      = 305000123
	fuzzBlockhash = "3Eq21vXNB5s86c62bVuUfTeaMif1N2kUqRPBmGRJhyTA"
	fuzzPrevHash  = "mfcyqEXB3DnHXki6KjjmZck6YjmZLvpAByy2fj4nh6B"
)

// txTransport is a node that knows one transaction, the fuzzed getTransaction
// result: getSignaturesForAddress lists it (its first signature, its slot)
// for every address, getTransaction answers it, getBlock answers a valid
// header for any slot. Every other method is an error.
type txTransport struct {
	result []byte
	sig    string
	slot   uint64
}

// RoundTrip implements http.RoundTripper.
func (tt *txTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	raw, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	var req struct {
		ID     uint64 `json:"id"`
		Method string `json:"method"`
		Params []any  `json:"params"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	var result []byte
	switch req.Method {
	case "getSignaturesForAddress":
		result, _ = json.Marshal([]map[string]any{{"signature": tt.sig, "slot": tt.slot, "err": nil, "confirmationStatus": "confirmed"}})
	case "getTransaction":
		result = tt.result
	case "getBlock":
		slot, _ := req.Params[0].(float64)
		result = fmt.Appendf(nil, `{"blockhash":%q,"previousBlockhash":%q,"parentSlot":%d,"blockHeight":1,"blockTime":null}`,
			fuzzBlockhash, fuzzPrevHash, max(0, uint64(slot)-1))
	default:
		result = []byte(`null`)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":`, req.ID)
	b.Write(result)
	b.WriteString(`}`)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(&b), Request: r}, nil
}

// FuzzTransfers runs Transfers of SOL and of the USDC SPL token on a node
// whose one transaction is the fuzzed getTransaction result, watching
// every account key, loaded address and token balance owner it names (and
// one address it does not). Transfers must not panic, and what it reports keeps the
// invariants the code states: one transfer per watched address at most, to
// a watched address, of a positive value, with the listed signature, slot
// and the block's hash.
func FuzzTransfers(f *testing.F) {
	for _, name := range []string{"getTransaction.json", "getTransaction-spl.json", "getTransaction-v0.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		var answer struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(b, &answer); err != nil || len(answer.Result) == 0 {
			f.Fatalf("%s: no result: %v", name, err)
		}
		f.Add([]byte(answer.Result))
	}
	for _, s := range []string{
		`{"slot":5,"meta":{"err":null,"preBalances":[1],"postBalances":[0]},"transaction":{"signatures":["` + fuzzSig + `"],"message":{"accountKeys":["11111111111111111111111111111111"]}}}`,
		`{"slot":5,"meta":{"err":{"InstructionError":[0,"Custom"]},"preBalances":[0],"postBalances":[18446744073709551615]},"transaction":{"signatures":["` + fuzzSig + `"],"message":{"accountKeys":["11111111111111111111111111111111"]}}}`,
		`{"slot":5,"meta":{"err":null,"preBalances":[],"postBalances":[],"postTokenBalances":[{"accountIndex":-1,"mint":"EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v","owner":"","uiTokenAmount":{"amount":"1"}}]},"transaction":{"signatures":["` + fuzzSig + `"],"message":{"accountKeys":[]}}}`,
		`null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	reg := family.DefaultRegistry()
	var tickers []chains.Ticker
	for _, name := range []string{"sol", "sol/usdc"} {
		tk, err := reg.Get(name)
		if err != nil {
			f.Fatal(err)
		}
		tickers = append(tickers, tk)
	}
	const stranger = "GAbEt4yo2TDmHrDYRXwHCJgfMJYrQcJejmfXwhP6fhHw"
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, result []byte) {
		tt := &txTransport{result: result, sig: fuzzSig, slot: fuzzSlot}
		var named struct {
			Slot        *uint64 `json:"slot"`
			Transaction struct {
				Signatures []string `json:"signatures"`
				Message    struct {
					AccountKeys []string `json:"accountKeys"`
				} `json:"message"`
			} `json:"transaction"`
			Meta struct {
				PreTokenBalances  []tokenBalance `json:"preTokenBalances"`
				PostTokenBalances []tokenBalance `json:"postTokenBalances"`
				LoadedAddresses   struct {
					Writable []string `json:"writable"`
					Readonly []string `json:"readonly"`
				} `json:"loadedAddresses"`
			} `json:"meta"`
		}
		_ = json.Unmarshal(result, &named)
		if s := named.Transaction.Signatures; len(s) > 0 && checkSignature(s[0]) == nil {
			tt.sig = s[0]
		}
		if named.Slot != nil {
			tt.slot = *named.Slot
		}
		watch := append([]string{stranger}, named.Transaction.Message.AccountKeys...)
		watch = append(watch, named.Meta.LoadedAddresses.Writable...)
		watch = append(watch, named.Meta.LoadedAddresses.Readonly...)
		for _, tb := range append(named.Meta.PreTokenBalances, named.Meta.PostTokenBalances...) {
			watch = append(watch, tb.Owner)
		}
		watched := map[string]bool{}
		for _, a := range watch {
			watched[a] = true
		}
		for _, tk := range tickers {
			b, err := New(Config{Ticker: tk, URL: "http://node.invalid:8899/", Client: &http.Client{Transport: tt}})
			if err != nil {
				t.Fatal(err)
			}
			b.Watch(watch...)
			ts, err := b.Transfers(ctx, 0, 1<<62, nil)
			if err != nil {
				continue
			}
			seen := map[string]bool{}
			for _, tr := range ts {
				_, aerr := solana.PublicKeyFromBase58(tr.To)
				switch {
				case !watched[tr.To] || aerr != nil || seen[tr.To]:
					t.Fatalf("%s: transfer to %q, not a watched address once", tk.Ticker, tr.To)
				case tr.Value.Sign() <= 0 || !tr.Value.Shift(tk.Decimals).IsInteger():
					t.Fatalf("%s: transfer to %s of %s", tk.Ticker, tr.To, tr.Value)
				case tr.TxID != tt.sig || tr.Height != int64(tt.slot) || tr.Height < 0 || tr.BlockHash != fuzzBlockhash || tr.Index != 0:
					t.Fatalf("%s: transfer %+v, listed as %s in slot %d", tk.Ticker, tr, tt.sig, tt.slot)
				}
				seen[tr.To] = true
			}
		}
	})
}
