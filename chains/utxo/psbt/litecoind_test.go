package psbt_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/chains/utxo/psbt"
	"github.com/payhook/payhook/chains/watchonly"
)

const h = hdkeychain.HardenedKeyStart

// merchant is a second wallet in the node, holding the merchant's private
// descriptor: it plays the hardware wallet.
type merchant struct{ n *nodetest.Litecoind }

func (m merchant) call(t *testing.T, out any, method string, params ...any) error {
	t.Helper()
	return m.n.CallWallet("merchant", out, method, params...)
}

func (m merchant) must(t *testing.T, out any, method string, params ...any) {
	t.Helper()
	if err := m.call(t, out, method, params...); err != nil {
		t.Fatalf("merchant wallet %s: %v", method, err)
	}
}

// sign has the merchant's wallet sign b64 and returns its PSBT.
func (m merchant) sign(t *testing.T, b64 string) []byte {
	t.Helper()
	var r struct {
		PSBT     string `json:"psbt"`
		Complete bool   `json:"complete"`
	}
	m.must(t, &r, "walletprocesspsbt", b64)
	if !r.Complete {
		t.Fatalf("the merchant's wallet did not complete the PSBT: %s", r.PSBT)
	}
	return []byte(r.PSBT)
}

// TestPayoutAgainstLitecoind: for pkh, sh(wpkh) and wpkh, payhook knows
// only the account tpub descriptor (with its key origin); a separate
// legacy wallet in litecoind holds the private descriptor (importmulti)
// and plays the merchant's hardware wallet. Two receive addresses are
// funded; Prepare pays two outputs with change on /1/c; the wallet signs
// with walletprocesspsbt; Check accepts it; the node broadcasts and mines
// the raw transaction, which pays exactly the payout's outputs and the
// change. A PSBT edited before signing (another address, another amount,
// no change) is refused even though the wallet signs it, and an unsigned
// PSBT is refused.
func TestPayoutAgainstLitecoind(t *testing.T) {
	n := nodetest.StartLitecoind(t, 110)
	n.Must(nil, "createwallet", "merchant")
	m := merchant{n: n}
	ltc := ticker(t, "ltc", chains.Regtest)

	for _, c := range []struct {
		function string
		purpose  uint32
	}{{"wpkh", 84}, {"sh(wpkh", 49}, {"pkh", 44}} {
		t.Run(c.function, func(t *testing.T) {
			seed := make([]byte, 32)
			if _, err := rand.Read(seed); err != nil {
				t.Fatal(err)
			}
			tprv, tpub, fp := account(t, seed, h+c.purpose, h+1, h+0)
			wrap := func(key string, chain int) string {
				d := fmt.Sprintf("%s([%08x/%dh/1h/0h]%s/%d/*)", c.function, fp, c.purpose, key, chain)
				if strings.HasPrefix(c.function, "sh(") {
					d += ")"
				}
				return d
			}
			key, err := watchonly.Parse(ltc, wrap(tpub, 0))
			if err != nil {
				t.Fatal(err)
			}
			// The merchant's "hardware wallet": the private descriptor,
			// both chains.
			var imports []map[string]any
			for chain := 0; chain < 2; chain++ {
				var info struct {
					Checksum string `json:"checksum"`
				}
				n.Must(&info, "getdescriptorinfo", wrap(tprv, chain))
				imports = append(imports, map[string]any{"desc": wrap(tprv, chain) + "#" + info.Checksum,
					"range": []int{0, 20}, "timestamp": "now", "internal": chain == 1, "watchonly": false})
			}
			var res []struct {
				Success bool `json:"success"`
				Error   any  `json:"error"`
			}
			m.must(t, &res, "importmulti", imports)
			for i, r := range res {
				if !r.Success {
					t.Fatalf("importmulti %d: %v", i, r.Error)
				}
			}

			utxos := []psbt.UTXO{fund(t, n, key, 2, "1.25"), fund(t, n, key, 5, "0.75")}
			mine(t, n, 1)

			var dest1, dest2 string
			n.Must(&dest1, "getnewaddress")
			n.Must(&dest2, "getnewaddress", "", "legacy")
			req := psbt.Request{Key: key, Inputs: utxos, ChangeIndex: 3, FeeRate: 100,
				Outputs: []psbt.Output{{Address: dest1, Amount: 60_000_000}, {Address: dest2, Amount: 40_000_000}}}
			p, err := psbt.Prepare(req)
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(200_000_000 - 100_000_000 - p.Fee); p.Change != want || p.Fee < 100*p.VSize {
				t.Fatalf("change %d fee %d vsize %d: want change %d and a fee of at least 100 per vbyte", p.Change, p.Fee, p.VSize, want)
			}
			changeAddr, _ := key.ChangeAddress(3)
			if p.ChangeAddress != changeAddr {
				t.Fatalf("change address %s, want /1/3 %s", p.ChangeAddress, changeAddr)
			}
			checkDecoded(t, n, p, fp, c.purpose)

			// An unsigned PSBT is refused.
			if _, err := psbt.Check(p.PSBT, []byte(p.Base64())); !errors.Is(err, psbt.ErrUnsigned) {
				t.Errorf("Check(unsigned) = %v, want ErrUnsigned", err)
			}
			// Edited before signing, signed by the wallet: refused.
			edits := []struct {
				name   string
				change func(r *psbt.Request)
			}{
				{"another address", func(r *psbt.Request) { r.Outputs[1].Address = dest1 }},
				{"another amount", func(r *psbt.Request) { r.Outputs[0].Amount = 70_000_000 }},
				// The change left is below dust: Prepare drops it.
				{"no change", func(r *psbt.Request) { r.Outputs[0].Amount += p.Change - 1000 }},
			}
			for _, e := range edits {
				edited := req
				edited.Outputs = append([]psbt.Output(nil), req.Outputs...)
				e.change(&edited)
				ep, err := psbt.Prepare(edited)
				if err != nil {
					t.Fatalf("%s: %v", e.name, err)
				}
				if e.name == "no change" && ep.Change != 0 {
					t.Fatalf("no change: Prepare kept a change of %d", ep.Change)
				}
				signed := m.sign(t, ep.Base64())
				if _, err := psbt.Check(p.PSBT, signed); !errors.Is(err, psbt.ErrMismatch) {
					t.Errorf("%s: Check = %v, want ErrMismatch", e.name, err)
				} else {
					t.Logf("%s: %v", e.name, err)
				}
			}

			signed := m.sign(t, p.Base64())
			raw, err := psbt.Check(p.PSBT, signed)
			if err != nil {
				t.Fatalf("Check(signed by the node) = %v", err)
			}
			var txid string
			n.Must(&txid, "sendrawtransaction", hex.EncodeToString(raw))
			mine(t, n, 1)
			var tx struct {
				Confirmations int `json:"confirmations"`
				Vout          []struct {
					Value json.Number `json:"value"`
					Spk   struct {
						Addresses []string `json:"addresses"`
						Address   string   `json:"address"`
					} `json:"scriptPubKey"`
				} `json:"vout"`
			}
			n.Must(&tx, "getrawtransaction", txid, true)
			if tx.Confirmations != 1 {
				t.Fatalf("payout %s has %d confirmations, want 1", txid, tx.Confirmations)
			}
			want := []string{dest1 + " 0.6", dest2 + " 0.4", changeAddr + " " + decimal.New(p.Change, -8).String()}
			var got []string
			for _, o := range tx.Vout {
				a := o.Spk.Address
				if len(o.Spk.Addresses) == 1 {
					a = o.Spk.Addresses[0]
				}
				v, err := decimal.NewFromString(o.Value.String())
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, a+" "+v.String())
			}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("the confirmed payout pays %v, want %v", got, want)
			}
		})
	}
}

// checkDecoded: litecoind's decodepsbt reads the prepared PSBT with each
// input's UTXO and BIP 32 derivation (master fingerprint, full path) and
// the change output's, and computes the fee Prepare says.
func checkDecoded(t *testing.T, n *nodetest.Litecoind, p *psbt.Prepared, fp uint32, purpose uint32) {
	t.Helper()
	type deriv struct {
		Fingerprint string `json:"master_fingerprint"`
		Path        string `json:"path"`
	}
	var d struct {
		Inputs []struct {
			WitnessUTXO    any     `json:"witness_utxo"`
			NonWitnessUTXO any     `json:"non_witness_utxo"`
			Derivs         []deriv `json:"bip32_derivs"`
		} `json:"inputs"`
		Outputs []struct {
			Derivs []deriv `json:"bip32_derivs"`
		} `json:"outputs"`
		Fee json.Number `json:"fee"`
	}
	n.Must(&d, "decodepsbt", p.Base64())
	fee, err := decimal.NewFromString(d.Fee.String())
	if err != nil || !fee.Equal(decimal.New(p.Fee, -8)) {
		t.Errorf("litecoind computes the fee %s, Prepare %d", d.Fee, p.Fee)
	}
	prefix := fmt.Sprintf("m/%d'/1'/0'/", purpose)
	for i, in := range d.Inputs {
		if in.WitnessUTXO == nil && in.NonWitnessUTXO == nil {
			t.Errorf("input %d has no UTXO", i)
		}
		if purpose == 44 && in.NonWitnessUTXO == nil {
			t.Errorf("P2PKH input %d has no non-witness UTXO", i)
		}
		if len(in.Derivs) != 1 || in.Derivs[0].Fingerprint != fmt.Sprintf("%08x", fp) || !strings.HasPrefix(in.Derivs[0].Path, prefix+"0/") {
			t.Errorf("input %d derivation %+v, want %08x %s0/i", i, in.Derivs, fp, prefix)
		}
	}
	last := d.Outputs[len(d.Outputs)-1]
	if len(last.Derivs) != 1 || last.Derivs[0].Fingerprint != fmt.Sprintf("%08x", fp) || last.Derivs[0].Path != prefix+"1/3" {
		t.Errorf("change derivation %+v, want %08x %s1/3", last.Derivs, fp, prefix)
	}
}

// fund sends amount LTC from the node's wallet to the key's receive
// address i and returns the UTXO.
func fund(t *testing.T, n *nodetest.Litecoind, k *watchonly.Key, i uint32, amount string) psbt.UTXO {
	t.Helper()
	addr, err := k.Address(i)
	if err != nil {
		t.Fatal(err)
	}
	var txid, rawHex string
	n.Must(&txid, "sendtoaddress", addr, amount)
	n.Must(&rawHex, "getrawtransaction", txid, false)
	var tx struct {
		Vout []struct {
			N   uint32 `json:"n"`
			Spk struct {
				Hex string `json:"hex"`
			} `json:"scriptPubKey"`
			Value json.Number `json:"value"`
		} `json:"vout"`
	}
	n.Must(&tx, "getrawtransaction", txid, true)
	raw, err := hex.DecodeString(rawHex)
	if err != nil {
		t.Fatal(err)
	}
	want := decimal.RequireFromString(amount)
	for _, o := range tx.Vout {
		v, err := decimal.NewFromString(o.Value.String())
		if err != nil || !v.Equal(want) {
			continue
		}
		script, err := hex.DecodeString(o.Spk.Hex)
		if err != nil {
			t.Fatal(err)
		}
		return psbt.UTXO{TxID: txid, Vout: o.N, Value: want.Shift(8).IntPart(), Script: script, Index: i, PrevTx: raw}
	}
	t.Fatalf("no output of %s pays %s", txid, amount)
	return psbt.UTXO{}
}

func mine(t *testing.T, n *nodetest.Litecoind, blocks int) {
	t.Helper()
	var a string
	n.Must(&a, "getnewaddress")
	n.Must(nil, "generatetoaddress", blocks, a)
}

// account derives the account key at path from seed: its tprv and tpub
// and the master key's fingerprint.
func account(t testing.TB, seed []byte, path ...uint32) (string, string, uint32) {
	t.Helper()
	k, err := hdkeychain.NewMaster(seed, &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	c0, err := k.Derive(0)
	if err != nil {
		t.Fatal(err)
	}
	fp := c0.ParentFingerprint()
	for _, i := range path {
		if k, err = k.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := k.Neuter()
	if err != nil {
		t.Fatal(err)
	}
	return k.String(), pub.String(), fp
}
