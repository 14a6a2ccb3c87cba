package psbt

import (
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/payhook/payhook/chains/watchonly"
)

// Weights (BIP 141: 4 per non-witness byte, 1 per witness byte) of the
// inputs Prepare spends, with the largest DER signature (72 bytes with its
// sighash byte), so that the fee estimate is never short: a signer's
// 71-byte low-R signature only raises the real fee rate a little.
const (
	// outpoint 36 + script length 1 + sequence 4.
	inputBase = 36 + 1 + 4
	// sigPush + pubKeyPush: push 72-byte signature, push 33-byte key.
	sigPubKey = 1 + 72 + 1 + 33
	// P2PKH: the signature and key in the script sig, 148 bytes.
	weightP2PKH = 4 * (inputBase + sigPubKey)
	// P2WPKH: an empty script sig; witness of 2 items: 41 + 108/4 = 68 vB.
	weightP2WPKH = 4*inputBase + 1 + sigPubKey
	// P2SH-P2WPKH: the script sig pushes the 22-byte redeem script: 91 vB.
	weightP2SHP2WPKH = 4*(inputBase+1+22) + 1 + sigPubKey
	// txBase is version and lock time.
	txBase = 4 + 4
)

// inputWeight is the weight of an input spending a script of type s.
func inputWeight(s watchonly.Script) (int64, error) {
	switch s {
	case watchonly.P2PKH:
		return weightP2PKH, nil
	case watchonly.P2WPKH:
		return weightP2WPKH, nil
	case watchonly.P2SHP2WPKH:
		return weightP2SHP2WPKH, nil
	}
	return 0, fmt.Errorf("%w: %s inputs are not supported: PSBT payouts spend pkh, sh(wpkh) or wpkh addresses", ErrInvalid, s)
}

// vsize is the virtual size, in vbytes, of a transaction spending nIn
// inputs of script type s and paying outputs with the given scripts.
func vsize(s watchonly.Script, nIn int, outScripts [][]byte) (int64, error) {
	in, err := inputWeight(s)
	if err != nil {
		return 0, err
	}
	w := 4 * int64(txBase+wire.VarIntSerializeSize(uint64(nIn))+wire.VarIntSerializeSize(uint64(len(outScripts))))
	w += int64(nIn) * in
	for _, script := range outScripts {
		w += 4 * int64(wire.NewTxOut(0, script).SerializeSize())
	}
	if s != watchonly.P2PKH {
		w += 2 // segwit marker and flag
	}
	return (w + 3) / 4, nil
}

// plan is the arithmetic of a payout: the inputs' total in, the outputs'
// total out, at rate base units per vbyte. With change the transaction
// has one more output, changeScript; the change is kept when it is at
// least changeDust, and otherwise dropped, its value left to the fee.
type plan struct {
	Fee    int64
	Change int64 // 0: no change output
	VSize  int64
}

func makePlan(s watchonly.Script, nIn int, in, out int64, outScripts [][]byte, changeScript []byte, changeDust, rate int64) (plan, error) {
	withChange := append(append([][]byte{}, outScripts...), changeScript)
	vWith, err := vsize(s, nIn, withChange)
	if err != nil {
		return plan{}, err
	}
	vWithout, err := vsize(s, nIn, outScripts)
	if err != nil {
		return plan{}, err
	}
	feeWith, okWith := mul(vWith, rate)
	feeWithout, okWithout := mul(vWithout, rate)
	if !okWith || !okWithout {
		return plan{}, fmt.Errorf("%w: fee rate %d per vbyte overflows", ErrInvalid, rate)
	}
	if in-out >= feeWith+changeDust {
		return plan{Fee: feeWith, Change: in - out - feeWith, VSize: vWith}, nil
	}
	if in-out < feeWithout {
		return plan{}, fmt.Errorf("%w: the inputs hold %d, the outputs need %d and the fee %d (%d vbytes at %d per vbyte): %d short",
			ErrInsufficient, in, out, feeWithout, vWithout, rate, out+feeWithout-in)
	}
	// Change below dust: no change output; the rest goes to the fee.
	return plan{Fee: in - out, VSize: vWithout}, nil
}

// mul is a*b for non-negative a, b, false on overflow.
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > maxAmount/b {
		return 0, false
	}
	return a * b, true
}
