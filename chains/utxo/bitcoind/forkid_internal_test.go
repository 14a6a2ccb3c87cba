package bitcoind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/utxo"
)

// TestForkIDSigHash checks the Bitcoin Cash digest against a published
// vector of the FORKID algorithm (one input of 1 BCH, two outputs,
// SIGHASH_ALL|FORKID): the digest is the double SHA-256 of the expected
// preimage.
func TestForkIDSigHash(t *testing.T) {
	unsigned, _ := hex.DecodeString("010000000193a35408b6068499e0d5abd799d3e827d9bfe70c9b75ebe209c91d25072326510000000000ffffffff02404b4c00000000001976a91404ff367be719efa79d76e4416ffb072cd53b208888acde94a905000000001976a91404d03f746652cfcb6cb55119ab473a045137d26588ac00000000")
	script, _ := hex.DecodeString("76a914c0a3c167a28cabb9fbb495affa0761e6e74ac60d88ac")
	preimage, _ := hex.DecodeString("010000007ced5b2e5cf3ea407b005d8b18c393b6256ea2429b6ff409983e10adc61d0ae83bb13029ce7b1f559ef5e747fcac439f1455a2ec7c5f09b72290795e7066504493a35408b6068499e0d5abd799d3e827d9bfe70c9b75ebe209c91d2507232651000000001976a914c0a3c167a28cabb9fbb495affa0761e6e74ac60d88ac00e1f50500000000ffffffff87841ab2b7a4133af2c58256edb7c3c9edca765a852ebe2d0dc962604a30f1030000000041000000")
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(unsigned)); err != nil {
		t.Fatal(err)
	}
	const amount = 100000000
	fetcher := txscript.NewMultiPrevOutFetcher(map[wire.OutPoint]*wire.TxOut{tx.TxIn[0].PreviousOutPoint: wire.NewTxOut(amount, script)})
	got, err := keysign.ForkIDSigHash(&tx, txscript.NewTxSigHashes(&tx, fetcher), 0, script, amount)
	if err != nil {
		t.Fatal(err)
	}
	first := sha256.Sum256(preimage)
	want := sha256.Sum256(first[:])
	if !bytes.Equal(got, want[:]) {
		t.Errorf("FORKID digest %x, want %x", got, want)
	}
}

// TestSignBCH: a bch forward is signed with FORKID signatures (hash type
// 0x41, compressed key) that verify against the digest of each input, and
// pays the outputs and the change exactly.
func TestSignBCH(t *testing.T) {
	reg, _ := family.DefaultRegistry().WithNet("bch", chains.Regtest)
	tk, _ := reg.Lookup("bch")
	seed := bytes.Repeat([]byte{7}, 32)
	keys, _ := chains.NewKeys(seed)
	d, _ := chains.NewDeriver(seed, family.All())
	from, _ := d.Address(tk, 3)
	to, _ := d.Address(tk, 4)
	b, err := New(Config{Ticker: tk, URL: "http://127.0.0.1:1/", Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	in := []chains.Transfer{{TxID: strings.Repeat("ab", 32), Index: 1, Value: decimal.RequireFromString("0.3")}, {TxID: strings.Repeat("cd", 32), Index: 0, Value: decimal.RequireFromString("0.2")}}
	s, err := b.Sign(context.Background(), chains.Forward{ID: "f", From: from, FromIndex: 3, Inputs: in,
		Outputs: []chains.Output{{Address: to, Amount: decimal.RequireFromString("0.4")}}, NetworkFee: decimal.RequireFromString("0.00001")})
	if err != nil {
		t.Fatal(err)
	}
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(s.Raw)); err != nil || tx.TxHash().String() != s.TxID {
		t.Fatalf("signed bytes: %v", err)
	}
	if len(tx.TxOut) != 2 || tx.TxOut[0].Value != 40000000 || tx.TxOut[1].Value != 50000000-40000000-1000 {
		t.Errorf("outputs %+v", tx.TxOut)
	}
	priv, _ := keys.Secp256k1(tk, 3)
	fromAddr, _ := utxo.DecodeAddress(tk, from)
	script, _ := txscript.PayToAddrScript(fromAddr)
	fetcher := txscript.NewMultiPrevOutFetcher(map[wire.OutPoint]*wire.TxOut{
		tx.TxIn[0].PreviousOutPoint: wire.NewTxOut(30000000, script), tx.TxIn[1].PreviousOutPoint: wire.NewTxOut(20000000, script)})
	hashes := txscript.NewTxSigHashes(&tx, fetcher)
	for i, txin := range tx.TxIn {
		pushes, err := txscript.PushedData(txin.SignatureScript)
		if err != nil || len(pushes) != 2 || !bytes.Equal(pushes[1], priv.PubKey().SerializeCompressed()) {
			t.Fatalf("input %d: scriptSig %x", i, txin.SignatureScript)
		}
		sigBytes := pushes[0]
		if sigBytes[len(sigBytes)-1] != 0x41 {
			t.Errorf("input %d: hash type %x, want 0x41", i, sigBytes[len(sigBytes)-1])
		}
		sig, err := ecdsa.ParseDERSignature(sigBytes[:len(sigBytes)-1])
		if err != nil {
			t.Fatal(err)
		}
		prev := fetcher.FetchPrevOutput(txin.PreviousOutPoint)
		digest, _ := keysign.ForkIDSigHash(&tx, hashes, i, script, prev.Value)
		if !sig.Verify(digest, priv.PubKey()) {
			t.Errorf("input %d: the signature does not verify against the FORKID digest", i)
		}
	}
}

// TestSignEveryUTXOTicker: btc and ltc (P2WPKH) and doge (P2PKH) forwards
// are signed and pass txscript's engine inside Sign; bch is above.
func TestSignEveryUTXOTicker(t *testing.T) {
	seed := bytes.Repeat([]byte{9}, 32)
	keys, _ := chains.NewKeys(seed)
	d, _ := chains.NewDeriver(seed, family.All())
	for _, name := range []string{"btc", "ltc", "doge"} {
		for _, net := range []chains.Net{chains.Mainnet, chains.Regtest} {
			reg, _ := family.DefaultRegistry().WithNet(name, net)
			tk, _ := reg.Lookup(name)
			from, _ := d.Address(tk, 1)
			to, _ := d.Address(tk, 2)
			b, err := New(Config{Ticker: tk, URL: "http://127.0.0.1:1/", Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			s, err := b.Sign(context.Background(), chains.Forward{ID: "f", From: from, FromIndex: 1,
				Inputs:  []chains.Transfer{{TxID: strings.Repeat("ef", 32), Index: 2, Value: decimal.NewFromInt(50)}},
				Outputs: []chains.Output{{Address: to, Amount: decimal.NewFromInt(40)}}, NetworkFee: decimal.RequireFromString("0.1")})
			if err != nil || len(s.Raw) == 0 {
				t.Errorf("%s on %s: %v", name, net, err)
			}
		}
	}
}
