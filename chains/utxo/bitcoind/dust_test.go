package bitcoind_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/base58"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/chaintest"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/utxo"
	"github.com/payhook/payhook/chains/utxo/bitcoind"
)

// regtestDestinations returns one ltc regtest address of every script type
// payhook can pay to, with the network's dust limit for it in litoshi, as
// Litecoin Core 0.21 computes it (DUST_RELAY_TX_FEE 30,000 per 1000 vbytes).
func regtestDestinations(t *testing.T, tk chains.Ticker) []struct {
	name  string
	addr  string
	units int64
} {
	t.Helper()
	params, _ := utxo.Params(tk)
	h20, h32 := bytes.Repeat([]byte{0x5a}, 20), bytes.Repeat([]byte{0x7a}, 32)
	encode := func(a btcutil.Address, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		s, ok := utxo.EncodeAddress(tk, a)
		if !ok {
			t.Fatalf("no %s encoding of %T", tk.Ticker, a)
		}
		return s
	}
	return []struct {
		name  string
		addr  string
		units int64
	}{
		{"P2PKH", encode(btcutil.NewAddressPubKeyHash(h20, params)), 5460},
		{"P2SH", encode(btcutil.NewAddressScriptHashFromHash(h20, params)), 5400},
		{"P2SH, legacy version 0xc4", base58.CheckEncode(h20, 0xc4), 5400},
		{"P2WPKH", encode(btcutil.NewAddressWitnessPubKeyHash(h20, params)), 2940},
		{"P2WSH", encode(btcutil.NewAddressWitnessScriptHash(h32, params)), 3300},
		{"P2TR", encode(btcutil.NewAddressTaproot(h32, params)), 3300},
	}
}

// TestDustAgainstLitecoind: for every script type, litecoind's mempool
// refuses a transaction with an output one base unit below MinOutput as
// dust, and accepts it at MinOutput. The transactions are built by hand
// from a wallet coin (no wallet amount checks in the way), signed by the
// node's wallet and offered to testmempoolaccept.
func TestDustAgainstLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 101)
	_, tk := regtestLTC(t)
	var coins []struct {
		TxID   string      `json:"txid"`
		Vout   int         `json:"vout"`
		Amount json.Number `json:"amount"`
	}
	n.Must(&coins, "listunspent")
	if len(coins) == 0 {
		t.Fatal("the wallet has no spendable coin")
	}
	coin := coins[0]
	var change string
	n.Must(&change, "getnewaddress")
	fee := decimal.RequireFromString("0.001")

	// offer builds, signs and test-accepts a transaction paying amount to
	// addr; it returns whether the mempool accepts it and why not.
	offer := func(addr string, amount decimal.Decimal) (bool, string) {
		t.Helper()
		rest := decimal.RequireFromString(coin.Amount.String()).Sub(amount).Sub(fee)
		outputs := []map[string]json.Number{
			{addr: json.Number(amount.StringFixed(8))},
			{change: json.Number(rest.StringFixed(8))},
		}
		var raw string
		n.Must(&raw, "createrawtransaction", []map[string]any{{"txid": coin.TxID, "vout": coin.Vout}}, outputs)
		var signed struct {
			Hex      string `json:"hex"`
			Complete bool   `json:"complete"`
		}
		n.Must(&signed, "signrawtransactionwithwallet", raw)
		if !signed.Complete {
			t.Fatalf("the wallet did not sign its own coin")
		}
		var res []struct {
			Allowed bool   `json:"allowed"`
			Reason  string `json:"reject-reason"`
		}
		n.Must(&res, "testmempoolaccept", []string{signed.Hex})
		return res[0].Allowed, res[0].Reason
	}

	for _, d := range regtestDestinations(t, tk) {
		t.Run(d.name, func(t *testing.T) {
			limit, err := utxo.Family{}.MinOutput(tk, d.addr)
			if err != nil {
				t.Fatal(err)
			}
			if want := decimal.New(d.units, -8); !limit.Equal(want) {
				t.Fatalf("MinOutput(%s) = %s, want %s", d.addr, limit, want)
			}
			below := limit.Sub(decimal.New(1, -8))
			if ok, reason := offer(d.addr, below); ok || reason != "dust" {
				t.Errorf("an output of %s to %s: accepted %v (%q), want refused as dust", below, d.addr, ok, reason)
			}
			if ok, reason := offer(d.addr, limit); !ok {
				t.Errorf("an output of %s (MinOutput) to %s: refused (%q), want accepted", limit, d.addr, reason)
			}
		})
	}
}

// TestSignRefusesDust: the backend's signer refuses an output one base unit
// below its address's MinOutput (ErrInvalidForward, naming the limit) and
// signs one at MinOutput. Signing needs no node.
func TestSignRefusesDust(t *testing.T) {
	t.Parallel()
	_, tk := regtestLTC(t)
	keys, err := chains.NewKeys(chaintest.Seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bitcoind.New(bitcoind.Config{Ticker: tk, URL: "http://user:pass@127.0.0.1:9/", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	d, err := chains.NewDeriver(chaintest.Seed, []chains.Family{utxo.Family{}})
	if err != nil {
		t.Fatal(err)
	}
	from, err := d.Address(tk, 4)
	if err != nil {
		t.Fatal(err)
	}
	input := chains.Transfer{TxID: strings.Repeat("ab", 32), Index: 0, To: from, Value: decimal.RequireFromString("0.01")}
	for _, dest := range regtestDestinations(t, tk) {
		t.Run(dest.name, func(t *testing.T) {
			t.Parallel()
			limit := decimal.New(dest.units, -8)
			forward := func(amount decimal.Decimal) error {
				_, err := b.Sign(t.Context(), chains.Forward{ID: "dust", From: from, FromIndex: 4, Inputs: []chains.Transfer{input},
					Outputs: []chains.Output{{Address: dest.addr, Amount: amount}}, NetworkFee: decimal.RequireFromString("0.0001")})
				return err
			}
			err := forward(limit.Sub(decimal.New(1, -8)))
			if !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "below the network's dust limit ("+limit.String()+" for that address)") {
				t.Errorf("Sign of an output one unit below %s: %v, want ErrInvalidForward naming the limit", limit, err)
			}
			if err := forward(limit); err != nil {
				t.Errorf("Sign of an output of %s (MinOutput): %v", limit, err)
			}
		})
	}
}
