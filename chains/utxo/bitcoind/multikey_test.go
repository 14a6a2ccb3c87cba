package bitcoind_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/utxo"
	"github.com/payhook/payhook/chains/utxo/bitcoind"
)

// payScript returns the output script paying addr.
func payScript(t testing.TB, tk chains.Ticker, addr string) []byte {
	t.Helper()
	a, err := utxo.DecodeAddress(tk, addr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := txscript.PayToAddrScript(a)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPayoutFromTwoAddressesLitecoind: one transaction spends the outputs
// of two payhook addresses (From and an address of Keys), each input
// signed with its own key, pays two destinations and a change back to the
// second address exactly, with the fee FeeFor quotes and no rest (so no
// change output of the backend's own); litecoind accepts and mines it.
func TestPayoutFromTwoAddressesLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 102) // two spendable coinbases: one per payment
	_, tk := regtestLTC(t)
	ctx := t.Context()
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: n.URL, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	d, err := chains.NewDeriver(chaintest.Seed, family.All())
	if err != nil {
		t.Fatal(err)
	}
	first, _ := d.Address(tk, 3)
	second, _ := d.Address(tk, 7)
	payee, _ := d.Address(tk, 11)
	var external, miner string
	n.Must(&external, "getnewaddress")
	n.Must(&miner, "getnewaddress")

	h0, err := b.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n.Must(nil, "sendtoaddress", first, json.Number("0.3"))
	n.Must(nil, "sendtoaddress", second, json.Number("0.2"))
	n.Must(nil, "generatetoaddress", 1, miner)
	h1, err := b.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := b.Transfers(ctx, h0.Height, h1.Height, func(a string) bool { return a == first || a == second })
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 2 {
		t.Fatalf("the payments to %s and %s: %+v, want two transfers", first, second, inputs)
	}

	fee, err := b.FeeFor(ctx, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	nf, err := b.NetworkFee(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !fee.GreaterThan(nf) {
		t.Errorf("FeeFor(2, 3) = %s, want more than NetworkFee (one input) %s", fee, nf)
	}
	total := decimal.RequireFromString("0.5")
	outputs := []chains.Output{
		{Address: external, Amount: decimal.RequireFromString("0.25")},
		{Address: payee, Amount: decimal.RequireFromString("0.15")},
		{Address: second, Amount: total.Sub(decimal.RequireFromString("0.4")).Sub(fee)}, // change to the payout wallet
	}
	f := chains.Forward{ID: "payout", From: first, FromIndex: 3, Keys: map[string]uint32{second: 7},
		Inputs: inputs, Outputs: outputs, NetworkFee: fee}
	s, err := b.Sign(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	var accept []struct {
		Allowed bool   `json:"allowed"`
		Reason  string `json:"reject-reason"`
	}
	n.Must(&accept, "testmempoolaccept", []string{hex.EncodeToString(s.Raw)})
	if len(accept) != 1 || !accept[0].Allowed {
		t.Fatalf("testmempoolaccept: %+v", accept)
	}
	if err := b.Send(ctx, s); err != nil {
		t.Fatal(err)
	}
	n.Must(nil, "generatetoaddress", 1, miner)

	var tx struct {
		TxID          string `json:"txid"`
		Confirmations int64  `json:"confirmations"`
		Vin           []struct {
			TxID string `json:"txid"`
			Vout int64  `json:"vout"`
		} `json:"vin"`
		Vout []struct {
			Value        json.Number `json:"value"`
			N            int         `json:"n"`
			ScriptPubKey struct {
				Hex string `json:"hex"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	n.Must(&tx, "getrawtransaction", s.TxID, true)
	if tx.TxID != s.TxID || tx.Confirmations < 1 {
		t.Fatalf("transaction %s: %s with %d confirmations, want mined", s.TxID, tx.TxID, tx.Confirmations)
	}
	if len(tx.Vin) != 2 {
		t.Fatalf("%d inputs, want 2", len(tx.Vin))
	}
	for i, in := range tx.Vin {
		if in.TxID != inputs[i].TxID || in.Vout != inputs[i].Index {
			t.Errorf("input %d spends %s:%d, want %s:%d", i, in.TxID, in.Vout, inputs[i].TxID, inputs[i].Index)
		}
	}
	if len(tx.Vout) != len(outputs) {
		t.Fatalf("%d outputs, want exactly the forward's %d (no rest, so no change)", len(tx.Vout), len(outputs))
	}
	paid := decimal.Zero
	for i, o := range outputs {
		v := tx.Vout[i]
		got, err := decimal.NewFromString(v.Value.String())
		if err != nil || !got.Equal(o.Amount) || v.ScriptPubKey.Hex != hex.EncodeToString(payScript(t, tk, o.Address)) {
			t.Errorf("output %d: %s to script %s, want %s to %s", i, v.Value, v.ScriptPubKey.Hex, o.Amount, o.Address)
		}
		var unspent *struct {
			Value json.Number `json:"value"`
		}
		n.Must(&unspent, "gettxout", s.TxID, v.N)
		if unspent == nil || unspent.Value.String() != v.Value.String() {
			t.Errorf("gettxout %s:%d: %+v, want unspent %s", s.TxID, v.N, unspent, v.Value)
		}
		paid = paid.Add(got)
	}
	if got := total.Sub(paid); !got.Equal(fee) {
		t.Errorf("the transaction pays a fee of %s, want %s", got, fee)
	}
	for _, in := range inputs {
		var spent *json.RawMessage
		n.Must(&spent, "gettxout", in.TxID, in.Index)
		if spent != nil {
			t.Errorf("input %s:%d is unspent after the payout was mined", in.TxID, in.Index)
		}
	}
	if st, err := b.State(ctx, chains.Transfer{TxID: s.TxID}); err != nil || !st.Present || st.Confirmations != 1 {
		t.Errorf("State of the payout: %+v, %v", st, err)
	}
}

// inputKey returns the public key input i of tx presents: the witness's
// for P2WPKH, the scriptSig's for P2PKH.
func inputKey(t *testing.T, tx *wire.MsgTx, i int) []byte {
	t.Helper()
	in := tx.TxIn[i]
	if len(in.Witness) > 0 {
		if len(in.Witness) != 2 {
			t.Fatalf("input %d: witness of %d items", i, len(in.Witness))
		}
		return in.Witness[1]
	}
	pushes, err := txscript.PushedData(in.SignatureScript)
	if err != nil || len(pushes) != 2 {
		t.Fatalf("input %d: scriptSig %x", i, in.SignatureScript)
	}
	return pushes[1]
}

// TestSignSeveralAddresses: for every UTXO ticker, a forward whose inputs
// are on From (To empty or From) and on another address of Keys signs each
// input with its address's key, against its address's script: txscript's
// engine (or, for bch, the FORKID digest) verifies every input here too,
// with prevouts built from the addresses. A single-address forward signs
// the same bytes whatever Keys holds.
func TestSignSeveralAddresses(t *testing.T) {
	t.Parallel()
	seed := bytes.Repeat([]byte{5}, 32)
	keys, _ := chains.NewKeys(seed)
	d, _ := chains.NewDeriver(seed, family.All())
	for _, name := range []string{"btc", "ltc", "bch", "doge"} {
		for _, net := range []chains.Net{chains.Mainnet, chains.Regtest} {
			t.Run(name+"/"+string(net), func(t *testing.T) {
				t.Parallel()
				reg, err := family.DefaultRegistry().WithNet(name, net)
				if err != nil {
					t.Fatal(err)
				}
				tk, _ := reg.Lookup(name)
				from, _ := d.Address(tk, 1)
				other, _ := d.Address(tk, 5)
				to, _ := d.Address(tk, 2)
				b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: "http://127.0.0.1:1/", Keys: keys})
				if err != nil {
					t.Fatal(err)
				}
				inputs := []chains.Transfer{
					{TxID: strings.Repeat("a1", 32), Index: 0, Value: decimal.NewFromInt(30)},
					{TxID: strings.Repeat("b2", 32), Index: 3, To: other, Value: decimal.NewFromInt(20)},
					{TxID: strings.Repeat("c3", 32), Index: 1, To: from, Value: decimal.NewFromInt(10)},
					{TxID: strings.Repeat("d4", 32), Index: 2, To: other, Value: decimal.NewFromInt(5)},
				}
				owners := []string{from, other, from, other}
				indexes := []uint32{1, 5, 1, 5}
				s, err := b.Sign(t.Context(), chains.Forward{ID: "f", From: from, FromIndex: 1, Keys: map[string]uint32{other: 5},
					Inputs:  inputs,
					Outputs: []chains.Output{{Address: to, Amount: decimal.NewFromInt(40)}, {Address: other, Amount: decimal.NewFromInt(24)}}, NetworkFee: decimal.RequireFromString("0.1")})
				if err != nil {
					t.Fatal(err)
				}
				var tx wire.MsgTx
				if err := tx.Deserialize(bytes.NewReader(s.Raw)); err != nil || tx.TxHash().String() != s.TxID {
					t.Fatalf("signed bytes: %v", err)
				}
				if len(tx.TxIn) != len(inputs) {
					t.Fatalf("%d inputs, want %d", len(tx.TxIn), len(inputs))
				}
				prevs := map[wire.OutPoint]*wire.TxOut{}
				for i, in := range tx.TxIn {
					if in.PreviousOutPoint.Hash.String() != inputs[i].TxID || int64(in.PreviousOutPoint.Index) != inputs[i].Index {
						t.Fatalf("input %d spends %s, want %s:%d", i, in.PreviousOutPoint, inputs[i].TxID, inputs[i].Index)
					}
					prevs[in.PreviousOutPoint] = wire.NewTxOut(inputs[i].Value.Shift(tk.Decimals).IntPart(), payScript(t, tk, owners[i]))
				}
				fetcher := txscript.NewMultiPrevOutFetcher(prevs)
				hashes := txscript.NewTxSigHashes(&tx, fetcher)
				for i, in := range tx.TxIn {
					priv, _ := keys.Secp256k1(tk, indexes[i])
					if got := inputKey(t, &tx, i); !bytes.Equal(got, priv.PubKey().SerializeCompressed()) {
						t.Errorf("input %d (on %s) presents key %x, want index %d's", i, owners[i], got, indexes[i])
					}
					prev := prevs[in.PreviousOutPoint]
					if name == "bch" {
						pushes, _ := txscript.PushedData(in.SignatureScript)
						der := pushes[0]
						if der[len(der)-1] != 0x41 {
							t.Fatalf("input %d: hash type %x, want 0x41", i, der[len(der)-1])
						}
						sig, err := ecdsa.ParseDERSignature(der[:len(der)-1])
						if err != nil {
							t.Fatal(err)
						}
						digest, err := txscript.CalcWitnessSigHash(prev.PkScript, hashes, txscript.SigHashType(0x41), &tx, i, prev.Value)
						if err != nil || !sig.Verify(digest, priv.PubKey()) {
							t.Errorf("input %d: the signature does not verify against the FORKID digest of %s's script (%v)", i, owners[i], err)
						}
						continue
					}
					vm, err := txscript.NewEngine(prev.PkScript, &tx, i, txscript.StandardVerifyFlags, nil, hashes, prev.Value, fetcher)
					if err == nil {
						err = vm.Execute()
					}
					if err != nil {
						t.Errorf("input %d (on %s): %v", i, owners[i], err)
					}
				}

				// One address: Keys that name no input change nothing.
				single := chains.Forward{ID: "g", From: from, FromIndex: 1, Inputs: inputs[:1],
					Outputs: []chains.Output{{Address: to, Amount: decimal.NewFromInt(20)}}, NetworkFee: decimal.RequireFromString("0.1")}
				want, err := b.Sign(t.Context(), single)
				if err != nil {
					t.Fatal(err)
				}
				single.Keys = map[string]uint32{other: 5, from: 9}
				if got, err := b.Sign(t.Context(), single); err != nil || !bytes.Equal(got.Raw, want.Raw) {
					t.Errorf("with Keys: %x, %v; want the bytes without: %x", got.Raw, err, want.Raw)
				}
			})
		}
	}
}

// TestSignRefusesInputsItHasNoKeyFor: an input on an address that is
// neither From nor in Keys, an index in Keys whose key does not control its
// address, or an input address of another network is refused with
// ErrInvalidForward naming the input. Signing needs no node.
func TestSignRefusesInputsItHasNoKeyFor(t *testing.T) {
	t.Parallel()
	_, tk := regtestLTC(t)
	keys, _ := chains.NewKeys(chaintest.Seed)
	d, _ := chains.NewDeriver(chaintest.Seed, family.All())
	b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: "http://user:pass@127.0.0.1:9/", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	from, _ := d.Address(tk, 3)
	other, _ := d.Address(tk, 7)
	stranger, _ := d.Address(tk, 8)
	to, _ := d.Address(tk, 11)
	mainnet, _ := family.DefaultRegistry().Lookup("ltc")
	foreign, _ := d.Address(mainnet, 7)
	forward := func(addr string, keys map[string]uint32) error {
		_, err := b.Sign(t.Context(), chains.Forward{ID: "p", From: from, FromIndex: 3, Keys: keys,
			Inputs: []chains.Transfer{
				{TxID: strings.Repeat("ab", 32), Index: 0, To: from, Value: decimal.RequireFromString("0.3")},
				{TxID: strings.Repeat("cd", 32), Index: 1, To: addr, Value: decimal.RequireFromString("0.2")},
			},
			Outputs: []chains.Output{{Address: to, Amount: decimal.RequireFromString("0.4")}}, NetworkFee: decimal.RequireFromString("0.0001")})
		return err
	}
	if err := forward(other, map[string]uint32{other: 7}); err != nil {
		t.Fatalf("the forward with the right keys: %v", err)
	}
	for _, tt := range []struct {
		name string
		addr string
		keys map[string]uint32
		want string
	}{
		{"no keys", other, nil, "input 1: address " + other + " is neither from nor in keys"},
		{"not in keys", stranger, map[string]uint32{other: 7}, "input 1: address " + stranger + " is neither from nor in keys"},
		{"the wrong index", other, map[string]uint32{other: 8}, "input 1: the key of index 8 does not control " + other},
		{"the index of from", other, map[string]uint32{other: 3}, "input 1: the key of index 3 does not control " + other},
		{"another network", foreign, map[string]uint32{foreign: 7}, "input 1: address:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := forward(tt.addr, tt.keys)
			if !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Sign: %v, want ErrInvalidForward with %q", err, tt.want)
			}
		})
	}
}

// feeNode answers estimatesmartfee with rate (coin per kvB), or with no
// estimate when rate is "", and counts the calls.
func feeNode(t *testing.T, rate string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Method != "estimatesmartfee" {
			fmt.Fprintf(w, `{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":0}`)
			return
		}
		calls.Add(1)
		if rate == "" {
			fmt.Fprint(w, `{"result":{"errors":["Insufficient data or no feerate found"],"blocks":0},"error":null,"id":0}`)
			return
		}
		fmt.Fprintf(w, `{"result":{"feerate":%s,"blocks":6},"error":null,"id":0}`, rate)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestFeeFor: FeeFor is the node's rate times the transaction's estimated
// size, rounded up to the base unit, growing with inputs and outputs, never
// below the relay minimum, equal to NetworkFee for a forward's shape (one
// input, three outputs), and an error for no inputs or no outputs.
func TestFeeFor(t *testing.T) {
	t.Parallel()
	_, ltc := regtestLTC(t)
	reg, _ := family.DefaultRegistry().WithNet("doge", chains.Regtest)
	doge, _ := reg.Lookup("doge")
	ltcSize := func(in, out int64) int64 { return 11 + 68*in + 31*out }   // P2WPKH
	dogeSize := func(in, out int64) int64 { return 10 + 148*in + 34*out } // P2PKH
	for _, tt := range []struct {
		name   string
		tk     chains.Ticker
		rate   string
		size   func(in, out int64) int64
		perKvB decimal.Decimal // the rate FeeFor must use
		relay  int64           // base units per kvB
		oneOne string          // FeeFor(1, 1), worked out by hand
	}{
		// 110 vbytes x 0.0001 / 1000
		{"ltc at the node's rate", ltc, "0.0001", ltcSize, decimal.RequireFromString("0.0001"), 1000, "0.000011"},
		// 110 x 0.00012345 / 1000 = 0.0000135795, rounded up
		{"ltc at a rate to round up", ltc, "0.00012345", ltcSize, decimal.RequireFromString("0.00012345"), 1000, "0.00001358"},
		// 0.0000011 at the rate: 110 litoshi, the relay minimum, instead
		{"ltc below the relay minimum", ltc, "0.00000001", ltcSize, decimal.RequireFromString("0.00000001"), 1000, "0.0000011"},
		{"ltc without an estimate", ltc, "", ltcSize, bitcoind.DefaultFallbackFee["ltc"], 1000, "0.000011"},
		// 192 vbytes x 0.01 / 1000
		{"doge without an estimate", doge, "", dogeSize, bitcoind.DefaultFallbackFee["doge"], 1_000_000, "0.00192"},
		{"doge below the relay minimum", doge, "0.001", dogeSize, decimal.RequireFromString("0.001"), 1_000_000, "0.00192"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, calls := feeNode(t, tt.rate)
			b, err := bitcoind.New(bitcoind.Config{Ticker: tt.tk, URL: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			fee := func(in, out int) decimal.Decimal {
				t.Helper()
				f, err := b.FeeFor(ctx, in, out)
				if err != nil {
					t.Fatalf("FeeFor(%d, %d): %v", in, out, err)
				}
				return f
			}
			dec := tt.tk.Decimals
			if got := fee(1, 1); !got.Equal(decimal.RequireFromString(tt.oneOne)) {
				t.Errorf("FeeFor(1, 1) = %s, want %s", got, tt.oneOne)
			}
			for _, c := range [][2]int{{1, 1}, {1, 3}, {2, 3}, {5, 40}, {300, 2}} {
				size := tt.size(int64(c[0]), int64(c[1]))
				atRate := tt.perKvB.Mul(decimal.NewFromInt(size)).Div(decimal.NewFromInt(1000)).RoundUp(dec)
				relay := decimal.New((size*tt.relay+999)/1000, -dec)
				want := decimal.Max(atRate, relay)
				got := fee(c[0], c[1])
				if !got.Equal(want) {
					t.Errorf("FeeFor(%d, %d) = %s, want %s (rate %s, relay minimum %s)", c[0], c[1], got, want, atRate, relay)
				}
				if got.LessThan(relay) {
					t.Errorf("FeeFor(%d, %d) = %s is below the relay minimum %s", c[0], c[1], got, relay)
				}
				if !got.Shift(dec).IsInteger() {
					t.Errorf("FeeFor(%d, %d) = %s is not a whole number of base units", c[0], c[1], got)
				}
			}
			for _, c := range [][2]int{{1, 1}, {2, 1}, {3, 7}} {
				if more, base := fee(c[0]+1, c[1]), fee(c[0], c[1]); !more.GreaterThan(base) {
					t.Errorf("FeeFor(%d, %d) = %s, not more than FeeFor(%d, %d) = %s", c[0]+1, c[1], more, c[0], c[1], base)
				}
				if more, base := fee(c[0], c[1]+1), fee(c[0], c[1]); !more.GreaterThan(base) {
					t.Errorf("FeeFor(%d, %d) = %s, not more than FeeFor(%d, %d) = %s", c[0], c[1]+1, more, c[0], c[1], base)
				}
			}
			nf, err := b.NetworkFee(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := fee(1, 3); !got.Equal(decimal.Max(nf, decimal.New((tt.size(1, 3)*tt.relay+999)/1000, -dec))) {
				t.Errorf("FeeFor(1, 3) = %s, want NetworkFee %s (or the relay minimum above it)", got, nf)
			}
			before := calls.Load()
			for _, c := range [][2]int{{0, 1}, {1, 0}, {0, 0}, {-1, 2}, {2, -1}, {1 << 30, 1}, {1, 1 << 30}} {
				if f, err := b.FeeFor(ctx, c[0], c[1]); err == nil {
					t.Errorf("FeeFor(%d, %d) = %s, want an error", c[0], c[1], f)
				}
			}
			if calls.Load() != before {
				t.Errorf("FeeFor of invalid counts asked the node")
			}
		})
	}
	t.Run("node down", func(t *testing.T) {
		t.Parallel()
		b, _ := bitcoind.New(bitcoind.Config{Ticker: ltc, URL: "http://u:p@127.0.0.1:1/"})
		if _, err := b.FeeFor(context.Background(), 1, 1); !errors.Is(err, chains.ErrNode) {
			t.Errorf("FeeFor with the node down: %v, want ErrNode", err)
		}
	})
}
