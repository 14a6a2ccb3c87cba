package keysign

import (
	"bytes"
	"context"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

// maxUTXOTx bounds a transaction to sign: far above a standard one
// (100 kvB), low enough that decoding it costs nothing.
const maxUTXOTx = 1 << 20

// UTXOTx is a UTXO request decoded and checked against the keys
// (CheckUTXO).
type UTXOTx struct {
	// Tx is the unsigned transaction.
	Tx *wire.MsgTx
	// Own reports, by output index, the outputs that pay the seed's own
	// keys (checked).
	Own map[int]bool

	privs    []*btcec.PrivateKey
	prevOuts *txscript.MultiPrevOutFetcher
}

// CheckUTXO decodes r and checks it: Tx is an unsigned transaction whose
// inputs r.Inputs describe one for one, the key each names controls the
// script it spends, and each of r.Own pays the key it names. Errors wrap
// chains.ErrInvalidForward.
func (l *Local) CheckUTXO(r chains.UTXOSignRequest) (*UTXOTx, error) {
	c := r.Context
	t := c.Ticker
	if len(r.Tx) == 0 || len(r.Tx) > maxUTXOTx {
		return nil, invalid(c, "transaction of %d bytes", len(r.Tx))
	}
	tx := new(wire.MsgTx)
	if err := tx.DeserializeNoWitness(bytes.NewReader(r.Tx)); err != nil {
		return nil, invalid(c, "not a serialised transaction: %v", err)
	}
	if len(tx.TxIn) == 0 || len(tx.TxOut) == 0 {
		return nil, invalid(c, "%d inputs and %d outputs", len(tx.TxIn), len(tx.TxOut))
	}
	if len(r.Inputs) != len(tx.TxIn) {
		return nil, invalid(c, "%d inputs described for %d in the transaction", len(r.Inputs), len(tx.TxIn))
	}
	u := &UTXOTx{Tx: tx, Own: map[int]bool{}, privs: make([]*btcec.PrivateKey, len(tx.TxIn)), prevOuts: txscript.NewMultiPrevOutFetcher(nil)}
	scripts := map[chains.KeyRef][]byte{}
	scriptOf := func(k chains.KeyRef) (*btcec.PrivateKey, []byte, error) {
		priv, err := l.secp(t, k)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", keyName(k), err)
		}
		if s, ok := scripts[k]; ok {
			return priv, s, nil
		}
		addr, err := chains.PubKeyAddress(t, priv.PubKey())
		if err != nil {
			return nil, nil, fmt.Errorf("address of %s: %w", keyName(k), err)
		}
		decoded, err := utxo.DecodeAddress(t, addr)
		if err != nil {
			return nil, nil, fmt.Errorf("address %s: %w", addr, err)
		}
		s, err := txscript.PayToAddrScript(decoded)
		if err != nil {
			return nil, nil, fmt.Errorf("script of %s: %w", addr, err)
		}
		scripts[k] = s
		return priv, s, nil
	}
	for i, in := range tx.TxIn {
		if len(in.SignatureScript) > 0 || len(in.Witness) > 0 {
			return nil, invalid(c, "input %d is signed already", i)
		}
		d := r.Inputs[i]
		if d.Value <= 0 {
			return nil, invalid(c, "input %d: value %d", i, d.Value)
		}
		priv, script, err := scriptOf(chains.KeyRef{Index: d.Key})
		if err != nil {
			return nil, invalid(c, "input %d: %v", i, err)
		}
		if !bytes.Equal(script, d.Script) {
			return nil, invalid(c, "input %d: the key of index %d does not control %s", i, d.Key, scriptAddress(t, d.Script))
		}
		u.privs[i] = priv
		u.prevOuts.AddPrevOut(in.PreviousOutPoint, wire.NewTxOut(d.Value, d.Script))
	}
	for _, o := range r.Own {
		if o.Output < 0 || o.Output >= len(tx.TxOut) {
			return nil, invalid(c, "own output %d: the transaction has %d outputs", o.Output, len(tx.TxOut))
		}
		priv, script, err := scriptOf(o.Key)
		if err != nil {
			return nil, invalid(c, "output %d: %v", o.Output, err)
		}
		priv.Zero()
		if !bytes.Equal(script, tx.TxOut[o.Output].PkScript) {
			return nil, invalid(c, "output %d does not pay %s", o.Output, keyName(o.Key))
		}
		u.Own[o.Output] = true
	}
	return u, nil
}

// SignUTXO implements chains.Signer: CheckUTXO, then every input signed
// and verified.
func (l *Local) SignUTXO(_ context.Context, r chains.UTXOSignRequest) ([]byte, error) {
	u, err := l.CheckUTXO(r)
	if err != nil {
		return nil, err
	}
	return u.Sign(r.Context)
}

// Sign signs every input of u (the keys CheckUTXO derived), verifies each
// signature, and returns the transaction serialised.
func (u *UTXOTx) Sign(c chains.SignContext) ([]byte, error) {
	defer func() {
		for _, p := range u.privs {
			p.Zero()
		}
	}()
	tx := u.Tx
	hashes := txscript.NewTxSigHashes(tx, u.prevOuts)
	var err error
	if c.Ticker.Network == "bch" {
		err = signForkID(tx, hashes, u.prevOuts, u.privs)
	} else {
		err = signInputs(tx, hashes, u.prevOuts, u.privs)
	}
	if err != nil {
		return nil, invalid(c, "%v", err)
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return nil, invalid(c, "serialise: %v", err)
	}
	return buf.Bytes(), nil
}

// signInputs signs input i of tx with privs[i] (a P2WPKH witness or a
// P2PKH signature script, as the spent script says) and checks each
// signature with txscript's engine.
func signInputs(tx *wire.MsgTx, hashes *txscript.TxSigHashes, prevOuts *txscript.MultiPrevOutFetcher, privs []*btcec.PrivateKey) error {
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
		switch txscript.GetScriptClass(prev.PkScript) {
		case txscript.WitnessV0PubKeyHashTy:
			w, err := txscript.WitnessSignature(tx, hashes, i, prev.Value, prev.PkScript, txscript.SigHashAll, privs[i], true)
			if err != nil {
				return fmt.Errorf("sign input %d: %w", i, err)
			}
			in.Witness = w
		case txscript.PubKeyHashTy:
			s, err := txscript.SignatureScript(tx, i, prev.PkScript, txscript.SigHashAll, privs[i], true)
			if err != nil {
				return fmt.Errorf("sign input %d: %w", i, err)
			}
			in.SignatureScript = s
		default:
			return fmt.Errorf("input %d spends a script that is neither P2WPKH nor P2PKH", i)
		}
	}
	return verify(tx, hashes, prevOuts)
}

// verify runs txscript's engine on every input of tx.
func verify(tx *wire.MsgTx, hashes *txscript.TxSigHashes, prevOuts *txscript.MultiPrevOutFetcher) error {
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
		if prev == nil {
			return fmt.Errorf("input %d: no spent output", i)
		}
		vm, err := txscript.NewEngine(prev.PkScript, tx, i, txscript.StandardVerifyFlags, nil, hashes, prev.Value, prevOuts)
		if err == nil {
			err = vm.Execute()
		}
		if err != nil {
			return fmt.Errorf("input %d: the signature does not verify: %w", i, err)
		}
	}
	return nil
}

// VerifyUTXO checks that signed is unsigned (the same inputs and outputs)
// with every input signed, the signature of input i verifying against the
// output it spends (values[i], scripts[i]): txscript's engine, or for bch
// the FORKID digest. A backend calls it on what a signer returns.
func VerifyUTXO(t chains.Ticker, unsigned, signed *wire.MsgTx, values []int64, scripts [][]byte) error {
	if len(values) != len(unsigned.TxIn) || len(scripts) != len(unsigned.TxIn) {
		return fmt.Errorf("%d inputs, %d values and %d scripts", len(unsigned.TxIn), len(values), len(scripts))
	}
	stripped := signed.Copy()
	for _, in := range stripped.TxIn {
		in.SignatureScript, in.Witness = nil, nil
	}
	var a, b bytes.Buffer
	if err := unsigned.SerializeNoWitness(&a); err != nil {
		return err
	}
	if err := stripped.SerializeNoWitness(&b); err != nil {
		return err
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		return fmt.Errorf("the signed transaction is not the one asked for")
	}
	prevOuts := txscript.NewMultiPrevOutFetcher(nil)
	for i, in := range signed.TxIn {
		prevOuts.AddPrevOut(in.PreviousOutPoint, wire.NewTxOut(values[i], scripts[i]))
	}
	hashes := txscript.NewTxSigHashes(signed, prevOuts)
	if t.Network != "bch" {
		return verify(signed, hashes, prevOuts)
	}
	for i, in := range signed.TxIn {
		pushes, err := txscript.PushedData(in.SignatureScript)
		if err != nil || len(pushes) != 2 || len(pushes[0]) < 2 || pushes[0][len(pushes[0])-1] != byte(SigHashAllForkID) {
			return fmt.Errorf("input %d: not a FORKID P2PKH signature script", i)
		}
		pub, err := btcec.ParsePubKey(pushes[1])
		if err != nil {
			return fmt.Errorf("input %d: public key: %w", i, err)
		}
		want, err := txscript.NewScriptBuilder().AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).
			AddData(btcutil.Hash160(pushes[1])).AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG).Script()
		if err != nil || !bytes.Equal(want, scripts[i]) {
			return fmt.Errorf("input %d: the public key does not control the output it spends", i)
		}
		sig, err := ecdsa.ParseDERSignature(pushes[0][:len(pushes[0])-1])
		if err != nil {
			return fmt.Errorf("input %d: signature: %w", i, err)
		}
		digest, err := ForkIDSigHash(signed, hashes, i, scripts[i], values[i])
		if err != nil || !sig.Verify(digest, pub) {
			return fmt.Errorf("input %d: the signature does not verify", i)
		}
	}
	return nil
}

// SigHashAllForkID is Bitcoin Cash's SIGHASH_ALL | SIGHASH_FORKID with fork
// id 0 (BCH-UAHF): the only hash type its nodes accept for new signatures.
const SigHashAllForkID = txscript.SigHashType(0x41)

// ForkIDSigHash is the digest a Bitcoin Cash signature of input i signs:
// the BIP143 algorithm (which btcd implements for segwit v0) over the
// P2PKH script, with the FORKID hash type.
func ForkIDSigHash(tx *wire.MsgTx, hashes *txscript.TxSigHashes, i int, script []byte, amount int64) ([]byte, error) {
	return txscript.CalcWitnessSigHash(script, hashes, SigHashAllForkID, tx, i, amount)
}

// signForkID signs every P2PKH input of tx for Bitcoin Cash, input i with
// privs[i], and checks each signature against its digest.
func signForkID(tx *wire.MsgTx, hashes *txscript.TxSigHashes, prevOuts *txscript.MultiPrevOutFetcher, privs []*btcec.PrivateKey) error {
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
		if txscript.GetScriptClass(prev.PkScript) != txscript.PubKeyHashTy {
			return fmt.Errorf("input %d spends a script that is not P2PKH", i)
		}
		digest, err := ForkIDSigHash(tx, hashes, i, prev.PkScript, prev.Value)
		if err != nil {
			return fmt.Errorf("sign input %d: %w", i, err)
		}
		priv := privs[i]
		pub := priv.PubKey()
		sig := ecdsa.Sign(priv, digest)
		if !sig.Verify(digest, pub) {
			return fmt.Errorf("input %d: the signature does not verify", i)
		}
		script, err := txscript.NewScriptBuilder().
			AddData(append(sig.Serialize(), byte(SigHashAllForkID))).
			AddData(pub.SerializeCompressed()).Script()
		if err != nil {
			return fmt.Errorf("sign input %d: %w", i, err)
		}
		in.SignatureScript = script
	}
	return nil
}

// scriptAddress names the address script pays, for errors.
func scriptAddress(t chains.Ticker, script []byte) string {
	params, ok := utxo.Params(t)
	if !ok {
		return "the output it spends"
	}
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
	if err != nil || len(addrs) != 1 {
		return "the output it spends"
	}
	a, ok := utxo.EncodeAddress(t, addrs[0])
	if !ok {
		return "the output it spends"
	}
	return a
}
