package psbt_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	bpsbt "github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/payhook/payhook/chains/utxo/psbt"
)

// signOffline signs every input of the prepared PSBT with the offline
// request's private keys (m/84'/1'/0'/0/i of the zero seed) under hashType,
// as partial signatures (final is false) or as final witnesses.
func signOffline(t *testing.T, r psbt.Request, p *psbt.Prepared, hashType txscript.SigHashType, final bool) []byte {
	t.Helper()
	pk, err := psbt.Parse(p.PSBT)
	if err != nil {
		t.Fatal(err)
	}
	master, err := hdkeychain.NewMaster(make([]byte, 32), &chaincfg.TestNet3Params)
	if err != nil {
		t.Fatal(err)
	}
	chain := master
	for _, i := range []uint32{h + 84, h + 1, h + 0, 0} {
		if chain, err = chain.Derive(i); err != nil {
			t.Fatal(err)
		}
	}
	prevs := txscript.NewMultiPrevOutFetcher(nil)
	for i, in := range pk.Inputs {
		prevs.AddPrevOut(pk.UnsignedTx.TxIn[i].PreviousOutPoint, in.WitnessUtxo)
	}
	hashes := txscript.NewTxSigHashes(pk.UnsignedTx, prevs)
	for i, in := range pk.Inputs {
		child, err := chain.Derive(r.Inputs[i].Index)
		if err != nil {
			t.Fatal(err)
		}
		priv, err := child.ECPrivKey()
		if err != nil {
			t.Fatal(err)
		}
		sig, err := txscript.RawTxInWitnessSignature(pk.UnsignedTx, hashes, i, in.WitnessUtxo.Value, in.WitnessUtxo.PkScript, hashType, priv)
		if err != nil {
			t.Fatal(err)
		}
		pub := priv.PubKey().SerializeCompressed()
		if final {
			var b bytes.Buffer
			if err := wire.WriteVarInt(&b, 0, 2); err != nil {
				t.Fatal(err)
			}
			for _, item := range [][]byte{sig, pub} {
				if err := wire.WriteVarBytes(&b, 0, item); err != nil {
					t.Fatal(err)
				}
			}
			pk.Inputs[i].FinalScriptWitness = b.Bytes()
			continue
		}
		pk.Inputs[i].PartialSigs = []*bpsbt.PartialSig{{PubKey: pub, Signature: sig}}
		pk.Inputs[i].SighashType = hashType
	}
	var b bytes.Buffer
	if err := pk.Serialize(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCheckSigHashAll: a PSBT signed offline under SIGHASH_ALL is
// accepted and yields the prepared transaction, signed; the same PSBT
// signed under SIGHASH_NONE, SINGLE or ANYONECANPAY (which verify, but
// leave outputs or inputs open to whoever relays it) is refused, whether
// the signer gave partial signatures with that PSBT hash type or final
// witnesses.
func TestCheckSigHashAll(t *testing.T) {
	r := offline(t)
	p, err := psbt.Prepare(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, final := range []bool{false, true} {
		raw, err := psbt.Check(p.PSBT, signOffline(t, r, p, txscript.SigHashAll, final))
		if err != nil {
			t.Fatalf("SIGHASH_ALL (final %v): %v", final, err)
		}
		var tx wire.MsgTx
		if err := tx.Deserialize(bytes.NewReader(raw)); err != nil || tx.TxHash().String() != p.TxID {
			t.Fatalf("SIGHASH_ALL (final %v): txid %s, prepared %s (%v)", final, tx.TxHash(), p.TxID, err)
		}
		for _, ht := range []txscript.SigHashType{txscript.SigHashNone, txscript.SigHashSingle, txscript.SigHashAll | txscript.SigHashAnyOneCanPay} {
			_, err := psbt.Check(p.PSBT, signOffline(t, r, p, ht, final))
			if !errors.Is(err, psbt.ErrUnsigned) || !strings.Contains(err.Error(), "not SIGHASH_ALL") {
				t.Errorf("hash type %#x (final %v): %v, want refused as not SIGHASH_ALL", ht, final, err)
			}
		}
	}
}
