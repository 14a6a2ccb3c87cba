package psbt

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	bpsbt "github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// MaxSize is the largest PSBT Check reads, in bytes (base64 or binary).
const MaxSize = 4 << 20

// Base64 is the PSBT encoded as most wallets and Bitcoin Core's RPC take it.
func (p *Prepared) Base64() string { return base64.StdEncoding.EncodeToString(p.PSBT) }

// Parse reads a PSBT, binary or base64 (surrounding white space ignored).
// btcd's parser panics on some malformed fields (a BIP 32 derivation
// shorter than its fingerprint: testdata/fuzz/FuzzCheck); that is an
// ErrMalformed here, not a crash.
func Parse(b []byte) (p *bpsbt.Packet, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes is more than %d", ErrMalformed, len(b), MaxSize)
	}
	b64 := !bytes.HasPrefix(b, []byte("psbt\xff"))
	if b64 {
		b = bytes.TrimSpace(b)
	}
	p, err = bpsbt.NewFromRawBytes(bytes.NewReader(b), b64)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return p, nil
}

// Check verifies that signed is prepared, signed: the same transaction
// (version, lock time, inputs with their sequence numbers, outputs with
// their amounts and scripts, the change included; nothing added, removed or
// reordered) with every input validly signed. It finalizes the inputs and
// returns the raw transaction to broadcast. The error wraps ErrMalformed,
// ErrMismatch or ErrUnsigned and names what differs; prepared must be what
// Prepare returned.
func Check(prepared, signed []byte) (rawTx []byte, err error) {
	want, err := Parse(prepared)
	if err != nil {
		return nil, fmt.Errorf("the prepared PSBT: %w", err)
	}
	got, err := Parse(signed)
	if err != nil {
		return nil, err
	}
	if err := sameTx(want, got.UnsignedTx); err != nil {
		return nil, err
	}
	for i, in := range got.Inputs {
		if in.FinalScriptSig == nil && in.FinalScriptWitness == nil && len(in.PartialSigs) == 0 {
			return nil, fmt.Errorf("%w: input %d (%s) has no signature", ErrUnsigned, i, want.UnsignedTx.TxIn[i].PreviousOutPoint)
		}
		for _, ps := range in.PartialSigs {
			if err := hashTypeAll(i, ps.Signature); err != nil {
				return nil, err
			}
		}
		// What the input spends is payhook's word, not the signer's.
		got.Inputs[i].WitnessUtxo = want.Inputs[i].WitnessUtxo
		got.Inputs[i].NonWitnessUtxo = want.Inputs[i].NonWitnessUtxo
		got.Inputs[i].RedeemScript = want.Inputs[i].RedeemScript
		got.Inputs[i].WitnessScript = nil
		// The hash type is payhook's too: SIGHASH_ALL (sigHashAll checks
		// the signatures themselves once finalized).
		got.Inputs[i].SighashType = 0
	}
	tx, err := finalize(got)
	if err != nil {
		return nil, err
	}
	if err := verify(want, tx); err != nil {
		return nil, err
	}
	if err := sigHashAll(want, tx); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := tx.Serialize(&b); err != nil {
		return nil, fmt.Errorf("serialize the signed transaction: %w", err)
	}
	return b.Bytes(), nil
}

// finalize finalizes and extracts the transaction. btcd's finalizer reads
// the signer's scripts and signatures; a panic on crafted data is an
// unsigned input, not a crash.
func finalize(p *bpsbt.Packet) (tx *wire.MsgTx, err error) {
	defer func() {
		if r := recover(); r != nil {
			tx, err = nil, fmt.Errorf("%w: the signatures cannot be finalized: %v", ErrUnsigned, r)
		}
	}()
	for i := range p.Inputs {
		if ok, ferr := bpsbt.MaybeFinalize(p, i); ferr != nil || !ok {
			return nil, fmt.Errorf("%w: input %d cannot be finalized (a signature or key is missing or not for this input's script): %v", ErrUnsigned, i, ferr)
		}
	}
	tx, err = bpsbt.Extract(p)
	if err != nil {
		return nil, fmt.Errorf("%w: extract the transaction: %v", ErrUnsigned, err)
	}
	return tx, nil
}

// verify runs every input's scripts against the prepared previous outputs.
func verify(want *bpsbt.Packet, tx *wire.MsgTx) error {
	prevs := txscript.NewMultiPrevOutFetcher(nil)
	outs := make([]*wire.TxOut, len(tx.TxIn))
	for i, in := range want.Inputs {
		op := want.UnsignedTx.TxIn[i].PreviousOutPoint
		switch {
		case in.WitnessUtxo != nil:
			outs[i] = in.WitnessUtxo
		case in.NonWitnessUtxo != nil && int(op.Index) < len(in.NonWitnessUtxo.TxOut):
			outs[i] = in.NonWitnessUtxo.TxOut[op.Index]
		default:
			return fmt.Errorf("the prepared PSBT: input %d has no previous output", i)
		}
		prevs.AddPrevOut(op, outs[i])
	}
	hashes := txscript.NewTxSigHashes(tx, prevs)
	for i, prev := range outs {
		vm, err := txscript.NewEngine(prev.PkScript, tx, i, txscript.StandardVerifyFlags, nil, hashes, prev.Value, prevs)
		if err == nil {
			err = vm.Execute()
		}
		if err != nil {
			return fmt.Errorf("%w: input %d (%s): the signature does not verify: %v", ErrUnsigned, i, tx.TxIn[i].PreviousOutPoint, err)
		}
	}
	return nil
}

// sigHashAll refuses a signature of any hash type but SIGHASH_ALL. A
// signature under SIGHASH_NONE, SINGLE or ANYONECANPAY verifies, but does
// not commit to every output (or input): whoever relays the transaction
// could reuse it to pay elsewhere. Every input Prepare builds spends
// P2PKH (the signature is the scriptSig's first push) or P2WPKH, plain or
// nested in P2SH (the witness's first item).
func sigHashAll(want *bpsbt.Packet, tx *wire.MsgTx) error {
	for i, in := range tx.TxIn {
		var sig []byte
		prev := want.Inputs[i].WitnessUtxo
		if prev == nil {
			prev = want.Inputs[i].NonWitnessUtxo.TxOut[in.PreviousOutPoint.Index]
		}
		switch txscript.GetScriptClass(prev.PkScript) {
		case txscript.PubKeyHashTy:
			pushes, err := txscript.PushedData(in.SignatureScript)
			if err != nil || len(pushes) != 2 {
				return fmt.Errorf("%w: input %d: the signature script is not a signature and a key", ErrUnsigned, i)
			}
			sig = pushes[0]
		case txscript.WitnessV0PubKeyHashTy, txscript.ScriptHashTy:
			if len(in.Witness) != 2 {
				return fmt.Errorf("%w: input %d: the witness is not a signature and a key", ErrUnsigned, i)
			}
			sig = in.Witness[0]
		default:
			return fmt.Errorf("%w: input %d spends a script payhook does not check signatures of", ErrUnsigned, i)
		}
		if err := hashTypeAll(i, sig); err != nil {
			return err
		}
	}
	return nil
}

// hashTypeAll refuses input i's signature sig unless its hash type (its
// last byte) is SIGHASH_ALL.
func hashTypeAll(i int, sig []byte) error {
	if len(sig) > 0 && txscript.SigHashType(sig[len(sig)-1]) == txscript.SigHashAll {
		return nil
	}
	ht := -1
	if len(sig) > 0 {
		ht = int(sig[len(sig)-1])
	}
	return fmt.Errorf("%w: input %d is signed with hash type %#x, not SIGHASH_ALL (0x01): such a signature does not commit to every output", ErrUnsigned, i, ht)
}

// sameTx names the first difference between the prepared transaction and
// the signed PSBT's.
func sameTx(want *bpsbt.Packet, got *wire.MsgTx) error {
	w := want.UnsignedTx
	var diffs []string
	if got.Version != w.Version {
		diffs = append(diffs, fmt.Sprintf("version %d, prepared %d", got.Version, w.Version))
	}
	if got.LockTime != w.LockTime {
		diffs = append(diffs, fmt.Sprintf("lock time %d, prepared %d", got.LockTime, w.LockTime))
	}
	if len(got.TxIn) != len(w.TxIn) {
		diffs = append(diffs, fmt.Sprintf("%d inputs, prepared %d", len(got.TxIn), len(w.TxIn)))
	}
	for i := 0; i < len(got.TxIn) && i < len(w.TxIn); i++ {
		g, p := got.TxIn[i], w.TxIn[i]
		if g.PreviousOutPoint != p.PreviousOutPoint {
			diffs = append(diffs, fmt.Sprintf("input %d spends %s, prepared %s", i, g.PreviousOutPoint, p.PreviousOutPoint))
		} else if g.Sequence != p.Sequence {
			diffs = append(diffs, fmt.Sprintf("input %d has sequence %d, prepared %d", i, g.Sequence, p.Sequence))
		}
	}
	for i := len(w.TxIn); i < len(got.TxIn); i++ {
		diffs = append(diffs, fmt.Sprintf("input %d (%s) is added", i, got.TxIn[i].PreviousOutPoint))
	}
	for i := len(got.TxIn); i < len(w.TxIn); i++ {
		diffs = append(diffs, fmt.Sprintf("input %d (%s) is missing", i, w.TxIn[i].PreviousOutPoint))
	}
	name := func(i int) string {
		if i < len(want.Outputs) && len(want.Outputs[i].Bip32Derivation) > 0 {
			d := want.Outputs[i].Bip32Derivation[0].Bip32Path
			return fmt.Sprintf("output %d (the change to the merchant's .../%d/%d)", i, d[len(d)-2], d[len(d)-1])
		}
		return fmt.Sprintf("output %d", i)
	}
	for i := 0; i < len(got.TxOut) && i < len(w.TxOut); i++ {
		g, p := got.TxOut[i], w.TxOut[i]
		switch {
		case !bytes.Equal(g.PkScript, p.PkScript):
			diffs = append(diffs, fmt.Sprintf("%s pays script %x, prepared %x", name(i), g.PkScript, p.PkScript))
		case g.Value != p.Value:
			diffs = append(diffs, fmt.Sprintf("%s is %d base units, prepared %d", name(i), g.Value, p.Value))
		}
	}
	for i := len(w.TxOut); i < len(got.TxOut); i++ {
		diffs = append(diffs, fmt.Sprintf("output %d (%d base units to script %x) is added", i, got.TxOut[i].Value, got.TxOut[i].PkScript))
	}
	for i := len(got.TxOut); i < len(w.TxOut); i++ {
		diffs = append(diffs, fmt.Sprintf("%s of %d base units is missing", name(i), w.TxOut[i].Value))
	}
	if len(diffs) == 0 {
		return nil
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], fmt.Sprintf("and %d more differences", len(diffs)-5))
	}
	return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(diffs, "; "))
}

// TxID returns the id of the serialized transaction raw (what Check
// returns), hex as explorers show it.
func TxID(raw []byte) (string, error) {
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return "", fmt.Errorf("%w: the transaction does not parse: %v", ErrMalformed, err)
	}
	return tx.TxHash().String(), nil
}
