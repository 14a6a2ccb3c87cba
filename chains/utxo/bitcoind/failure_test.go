package bitcoind_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/utxo/bitcoind"
)

// TestBadNodes: a node that is down, slow, refuses the credentials or
// answers garbage gives errors wrapping chains.ErrNode, never a panic, and
// never quotes the password.
func TestBadNodes(t *testing.T) {
	t.Parallel()
	_, tk := regtestLTC(t)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	servers := map[string]http.HandlerFunc{
		"garbage": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>not json")) },
		"wrong shape": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"result":{"blocks":"many"},"error":null,"id":0}`))
		},
		"no height":    func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"result":{},"error":null,"id":0}`)) },
		"unauthorized": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
		"server error": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) },
		"slow": func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // the server notices the client leave only once the body is read
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		},
		"wrong ids": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"result":1,"error":null,"id":7}`)) },
		"huge negative": func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"result":{"blocks":-5,"bestblockhash":"x"},"error":null,"id":0}`))
		},
	}
	for name, h := range servers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(h)
			defer srv.Close()
			url := strings.Replace(srv.URL, "http://", "http://user:s3cret-pass@", 1)
			b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: url, Timeout: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			_, err = b.Head(ctx)
			if !errors.Is(err, chains.ErrNode) {
				t.Fatalf("Head: %v, want an error wrapping chains.ErrNode", err)
			}
			if strings.Contains(err.Error(), "s3cret-pass") {
				t.Errorf("the error quotes the password: %v", err)
			}
			if _, err := b.Transfers(ctx, 0, 1, nil); !errors.Is(err, chains.ErrNode) {
				t.Errorf("Transfers: %v", err)
			}
			if _, err := b.State(ctx, chains.Transfer{TxID: strings.Repeat("a", 64)}); !errors.Is(err, chains.ErrNode) && name != "wrong shape" && name != "no height" && name != "huge negative" {
				t.Errorf("State: %v", err)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		t.Parallel()
		b, _ := bitcoind.New(bitcoind.Config{Ticker: tk, URL: "http://u:p@127.0.0.1:1/"})
		if _, err := b.Head(context.Background()); !errors.Is(err, chains.ErrNode) {
			t.Errorf("Head of a closed port: %v", err)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, tk := regtestLTC(t)
	eth, _ := family.DefaultRegistry().Lookup("eth")
	for name, c := range map[string]bitcoind.Config{
		"not utxo":     {Ticker: eth, URL: "http://127.0.0.1:1/"},
		"bad scheme":   {Ticker: tk, URL: "ftp://127.0.0.1/"},
		"no host":      {Ticker: tk, URL: "http:///"},
		"options":      {Ticker: tk, URL: "http://127.0.0.1:1/?contract=x"},
		"fee":          {Ticker: tk, URL: "http://127.0.0.1:1/", FallbackFee: decimal.NewFromInt(2)},
		"change addr":  {Ticker: tk, URL: "http://127.0.0.1:1/", ChangeAddress: "ltc1qnotregtest"},
		"negative ttl": {Ticker: tk, URL: "http://127.0.0.1:1/", Timeout: -1},
	} {
		if _, err := bitcoind.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestProbeLitecoind: Probe names the node's network and refuses a node
// of another network than the ticker's.
func TestProbeLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 0)
	_, tk := regtestLTC(t)
	b, _ := bitcoind.New(bitcoind.Config{Ticker: tk, URL: n.URL})
	info, err := b.Probe(t.Context())
	if err != nil || info.Network != "regtest" || !strings.Contains(info.Version, "LitecoinCore") {
		t.Errorf("Probe: %+v, %v", info, err)
	}
	main, _ := family.DefaultRegistry().Lookup("ltc")
	b, _ = bitcoind.New(bitcoind.Config{Ticker: main, URL: n.URL})
	if _, err := b.Probe(t.Context()); !errors.Is(err, chains.ErrWrongNetwork) {
		t.Errorf("Probe of a regtest node for mainnet ltc: %v", err)
	}
	// A forward the node would reject is refused before it is recorded.
	keys, _ := chains.NewKeys(chaintest.Seed)
	b, _ = bitcoind.New(bitcoind.Config{Ticker: tk, URL: n.URL, Keys: keys})
	d, _ := chains.NewDeriver(chaintest.Seed, family.All())
	from, _ := d.Address(tk, 0)
	to, _ := d.Address(tk, 1)
	_, err = b.Sign(t.Context(), chains.Forward{ID: "x", From: from, FromIndex: 1, Inputs: []chains.Transfer{{TxID: strings.Repeat("a", 64), Value: decimal.NewFromInt(1)}},
		Outputs: []chains.Output{{Address: to, Amount: decimal.RequireFromString("0.5")}}})
	if !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "does not control") {
		t.Errorf("Sign with the key of another index: %v", err)
	}
	_, err = b.Sign(t.Context(), chains.Forward{ID: "x", From: from, FromIndex: 0, Inputs: []chains.Transfer{{TxID: strings.Repeat("a", 64), Value: decimal.RequireFromString("0.1")}},
		Outputs: []chains.Output{{Address: to, Amount: decimal.RequireFromString("0.5")}}})
	if !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "do not cover") {
		t.Errorf("Sign of more than the inputs: %v", err)
	}
	if err := b.Send(t.Context(), chains.Signed{TxID: "x", Raw: []byte{1, 2}}); !errors.Is(err, chains.ErrInvalidForward) {
		t.Errorf("Send of garbage: %v", err)
	}
}

// TestSendOfAMinedForwardWhoseOutputsAreSpent: after a crash between send
// and record, the forward was mined and its outputs spent, so the node
// answers "missing inputs": it is sent (its block is in the best chain),
// unless its block left the chain.
func TestSendOfAMinedForwardWhoseOutputsAreSpent(t *testing.T) {
	t.Parallel()
	_, tk := regtestLTC(t)
	raw, _ := hex.DecodeString("0200000001" + strings.Repeat("11", 32) + "00000000" + "00" + "ffffffff" + "01" + "e803000000000000" + "00" + "00000000")
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name          string
		confirmations int
		wantErr       bool
	}{{"in the best chain", 5, false}, {"its block left the chain", -1, true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Method string `json:"method"`
				}
				_ = json.NewDecoder(r.Body).Decode(&req)
				switch req.Method {
				case "sendrawtransaction":
					w.Write([]byte(`{"result":null,"error":{"code":-25,"message":"bad-txns-inputs-missingorspent"},"id":0}`))
				case "getrawtransaction":
					w.Write([]byte(`{"result":{"blockhash":"` + strings.Repeat("22", 32) + `"},"error":null,"id":0}`))
				case "getblockheader":
					fmt.Fprintf(w, `{"result":{"confirmations":%d},"error":null,"id":0}`, tt.confirmations)
				}
			}))
			defer srv.Close()
			b, _ := bitcoind.New(bitcoind.Config{Ticker: tk, URL: srv.URL})
			err := b.Send(context.Background(), chains.Signed{TxID: tx.TxHash().String(), Raw: raw})
			if (err != nil) != tt.wantErr {
				t.Errorf("Send: %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
