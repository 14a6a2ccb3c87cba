package psbt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	bpsbt "github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
	"github.com/payhook/payhook/chains/watchonly"
)

// Errors. Every error of Prepare and Check wraps one of them and names
// what is wrong.
var (
	// ErrInvalid: a request Prepare cannot build (a bad address, an
	// amount below dust, a UTXO not on the merchant's key...).
	ErrInvalid = errors.New("invalid payout")
	// ErrInsufficient: the inputs do not cover the outputs and the fee.
	ErrInsufficient = errors.New("insufficient funds")
	// ErrMalformed: the uploaded bytes are not a PSBT.
	ErrMalformed = errors.New("not a PSBT")
	// ErrMismatch: the signed PSBT's transaction is not the prepared one.
	ErrMismatch = errors.New("signed PSBT differs from the prepared payout")
	// ErrUnsigned: an input has no valid signature.
	ErrUnsigned = errors.New("signed PSBT is not fully signed")
)

// maxAmount bounds every amount and sum, far above any coin's supply in
// base units, so that no sum overflows.
const maxAmount = int64(1) << 62

// Sequence is every input's sequence number: final (no replace-by-fee, so
// the payout payhook follows is the one that confirms) and lock time
// enabled, as Bitcoin Core's wallet writes it.
const Sequence = wire.MaxTxInSequenceNum - 1

// TxVersion is the transaction version.
const TxVersion = 2

// UTXO is an output of the merchant's to spend.
type UTXO struct {
	// TxID is the funding transaction's id, hex as explorers show it.
	TxID string
	// Vout is the output's index in it.
	Vout uint32
	// Value is its value in base units.
	Value int64
	// Script is its output script, which must pay the merchant's receive
	// address Index.
	Script []byte
	// Index is i of the receive address KEY/0/i it sits on.
	Index uint32
	// PrevTx is the whole funding transaction, serialized. Required for
	// P2PKH inputs (a non-witness signature does not commit to the value
	// spent, so signers want the transaction: Bitcoin and Litecoin Core
	// refuse to sign a P2PKH input from a witness UTXO alone); optional for
	// segwit inputs, where it is added for the hardware wallets that ask
	// for it too.
	PrevTx []byte
}

// Output is a payout's output.
type Output struct {
	Address string
	Amount  int64 // base units
}

// Request is a payout to prepare.
type Request struct {
	// Key is the merchant's watch-only key.
	Key *watchonly.Key
	// Inputs are spent in this order.
	Inputs []UTXO
	// Outputs are paid in this order; the change, if any, comes last.
	Outputs []Output
	// ChangeIndex is c of the change address KEY/1/c.
	ChangeIndex uint32
	// FeeRate is in base units per virtual byte.
	FeeRate int64
}

// Prepared is a prepared payout.
type Prepared struct {
	// PSBT is the serialized BIP 174 PSBT (binary; Base64 encodes it),
	// what Check compares the signed one with.
	PSBT []byte
	// TxID is the id of the transaction once signed (segwit and
	// non-segwit alike; for P2PKH it changes with the signatures, so it
	// is the unsigned transaction's hash there).
	TxID string
	// Fee is the fee, in base units: at least FeeRate times VSize, more
	// when a change below dust was dropped.
	Fee int64
	// Change is the change paid to ChangeAddress, 0 when dropped.
	Change int64
	// ChangeAddress is KEY/1/ChangeIndex.
	ChangeAddress string
	// VSize is the estimated virtual size, in vbytes, with the largest
	// signatures.
	VSize int64
}

// Prepare builds the payout's unsigned transaction and its PSBT.
func Prepare(r Request) (*Prepared, error) {
	if r.Key == nil {
		return nil, fmt.Errorf("%w: no watch-only key", ErrInvalid)
	}
	t := r.Key.Ticker()
	script := r.Key.Script()
	if t.Family != chains.FamilyUTXO {
		return nil, fmt.Errorf("%w: %s is not a UTXO coin: PSBT payouts are for btc, ltc and doge", ErrInvalid, t.Ticker)
	}
	if t.Network == "bch" {
		return nil, fmt.Errorf("%w: %s signatures use SIGHASH_FORKID, which PSBT payouts do not support", ErrInvalid, t.Ticker)
	}
	if _, err := inputWeight(script); err != nil {
		return nil, err
	}
	switch {
	case len(r.Inputs) == 0:
		return nil, fmt.Errorf("%w: no inputs to spend", ErrInvalid)
	case len(r.Outputs) == 0:
		return nil, fmt.Errorf("%w: no outputs to pay", ErrInvalid)
	case r.FeeRate <= 0:
		return nil, fmt.Errorf("%w: fee rate %d: must be at least 1 base unit per vbyte", ErrInvalid, r.FeeRate)
	}

	tx := wire.NewMsgTx(TxVersion)
	var in int64
	seen := map[wire.OutPoint]int{}
	prevTxs := make([]*wire.MsgTx, len(r.Inputs))
	children := make([]watchonly.Child, len(r.Inputs))
	for n, u := range r.Inputs {
		op, prev, child, err := checkInput(t, r.Key, n, u)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[op]; dup {
			return nil, fmt.Errorf("%w: inputs %d and %d both spend %s", ErrInvalid, first, n, op)
		}
		seen[op] = n
		if in += u.Value; in > maxAmount {
			return nil, fmt.Errorf("%w: the inputs' total overflows", ErrInvalid)
		}
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: op, Sequence: Sequence})
		prevTxs[n], children[n] = prev, child
	}

	var out int64
	outScripts := make([][]byte, 0, len(r.Outputs))
	for n, o := range r.Outputs {
		s, dust, err := outputScript(t, o.Address)
		if err != nil {
			return nil, fmt.Errorf("%w: output %d: %w", ErrInvalid, n, err)
		}
		switch {
		case o.Amount <= 0 || o.Amount > maxAmount:
			return nil, fmt.Errorf("%w: output %d to %s: amount %d base units must be positive", ErrInvalid, n, o.Address, o.Amount)
		case o.Amount < dust:
			return nil, fmt.Errorf("%w: output %d to %s: %d base units is below the network's dust threshold %d", ErrInvalid, n, o.Address, o.Amount, dust)
		}
		if out += o.Amount; out > maxAmount {
			return nil, fmt.Errorf("%w: the outputs' total overflows", ErrInvalid)
		}
		outScripts = append(outScripts, s)
		tx.AddTxOut(wire.NewTxOut(o.Amount, s))
	}

	change, err := r.Key.Child(watchonly.ChangeChain, r.ChangeIndex)
	if err != nil {
		return nil, fmt.Errorf("%w: change index: %w", ErrInvalid, err)
	}
	changeScript, changeDust, err := outputScript(t, change.Address)
	if err != nil {
		return nil, fmt.Errorf("%w: change address %s: %w", ErrInvalid, change.Address, err)
	}
	p, err := makePlan(script, len(r.Inputs), in, out, outScripts, changeScript, changeDust, r.FeeRate)
	if err != nil {
		return nil, err
	}
	if p.Change > 0 {
		tx.AddTxOut(wire.NewTxOut(p.Change, changeScript))
	}

	packet, err := bpsbt.NewFromUnsignedTx(tx)
	if err != nil {
		return nil, fmt.Errorf("build PSBT: %w", err)
	}
	up, err := bpsbt.NewUpdater(packet)
	if err != nil {
		return nil, fmt.Errorf("build PSBT: %w", err)
	}
	for n, u := range r.Inputs {
		c := children[n]
		if script == watchonly.P2PKH {
			err = up.AddInNonWitnessUtxo(prevTxs[n], n)
		} else {
			err = up.AddInWitnessUtxo(wire.NewTxOut(u.Value, u.Script), n)
			packet.Inputs[n].NonWitnessUtxo = prevTxs[n]
		}
		if err == nil && script == watchonly.P2SHP2WPKH {
			err = up.AddInRedeemScript(redeemScript(c.PubKey), n)
		}
		if err == nil {
			err = up.AddInBip32Derivation(fingerprint(c), c.Path, c.PubKey, n)
		}
		if err != nil {
			return nil, fmt.Errorf("build PSBT input %d: %w", n, err)
		}
	}
	if p.Change > 0 {
		n := len(tx.TxOut) - 1
		if script == watchonly.P2SHP2WPKH {
			err = up.AddOutRedeemScript(redeemScript(change.PubKey), n)
		}
		if err == nil {
			err = up.AddOutBip32Derivation(fingerprint(change), change.Path, change.PubKey, n)
		}
		if err != nil {
			return nil, fmt.Errorf("build PSBT change output: %w", err)
		}
	}
	var b bytes.Buffer
	if err := packet.Serialize(&b); err != nil {
		return nil, fmt.Errorf("serialize PSBT: %w", err)
	}
	return &Prepared{PSBT: b.Bytes(), TxID: tx.TxHash().String(), Fee: p.Fee, Change: p.Change,
		ChangeAddress: change.Address, VSize: p.VSize}, nil
}

// checkInput checks UTXO n against the merchant's key.
func checkInput(t chains.Ticker, k *watchonly.Key, n int, u UTXO) (wire.OutPoint, *wire.MsgTx, watchonly.Child, error) {
	fail := func(format string, a ...any) (wire.OutPoint, *wire.MsgTx, watchonly.Child, error) {
		return wire.OutPoint{}, nil, watchonly.Child{}, fmt.Errorf("%w: input %d: %s", ErrInvalid, n, fmt.Sprintf(format, a...))
	}
	if len(u.TxID) != 2*chainhash.HashSize {
		return fail("txid %q is not 64 hex characters", clip(u.TxID))
	}
	h, err := chainhash.NewHashFromStr(u.TxID)
	if err != nil {
		return fail("txid %q is not hex", clip(u.TxID))
	}
	op := wire.OutPoint{Hash: *h, Index: u.Vout}
	if u.Value <= 0 || u.Value > maxAmount {
		return fail("%s: value %d base units must be positive", op, u.Value)
	}
	child, err := k.Child(watchonly.ReceiveChain, u.Index)
	if err != nil {
		return fail("%s: receive index: %v", op, err)
	}
	want, _, err := outputScript(t, child.Address)
	if err != nil {
		return fail("%s: %v", op, err)
	}
	if !bytes.Equal(u.Script, want) {
		return fail("%s: its script %x does not pay the merchant's receive address %d (%s): the merchant's wallet could not sign it", op, u.Script, u.Index, child.Address)
	}
	var prev *wire.MsgTx
	if len(u.PrevTx) > 0 {
		prev = new(wire.MsgTx)
		if err := prev.Deserialize(bytes.NewReader(u.PrevTx)); err != nil {
			return fail("%s: the previous transaction does not parse: %v", op, err)
		}
		switch {
		case prev.TxHash() != *h:
			return fail("the previous transaction given is %s, not %s", prev.TxHash(), h)
		case int(u.Vout) >= len(prev.TxOut):
			return fail("%s: the previous transaction has %d outputs", op, len(prev.TxOut))
		case prev.TxOut[u.Vout].Value != u.Value || !bytes.Equal(prev.TxOut[u.Vout].PkScript, u.Script):
			return fail("%s: the previous transaction's output is %d to %x, not %d to %x", op, prev.TxOut[u.Vout].Value, prev.TxOut[u.Vout].PkScript, u.Value, u.Script)
		}
	} else if k.Script() == watchonly.P2PKH {
		return fail("%s: a P2PKH input needs its previous transaction (PrevTx): signers refuse a non-witness input without it", op)
	}
	return op, prev, child, nil
}

// outputScript is the script addr pays to and its dust threshold in base
// units.
func outputScript(t chains.Ticker, addr string) ([]byte, int64, error) {
	a, err := utxo.DecodeAddress(t, addr)
	if err != nil {
		return nil, 0, err
	}
	s, err := txscript.PayToAddrScript(a)
	if err != nil {
		return nil, 0, fmt.Errorf("address %s: %w", addr, err)
	}
	min, err := utxo.Family{}.MinOutput(t, addr)
	if err != nil {
		return nil, 0, err
	}
	return s, min.Shift(t.Decimals).IntPart(), nil
}

// redeemScript is the P2SH-P2WPKH redeem script of pub: OP_0 <hash160>.
func redeemScript(pub []byte) []byte {
	hash := btcutil.Hash160(pub)
	return append([]byte{txscript.OP_0, txscript.OP_DATA_20}, hash...)
}

// fingerprint is c's fingerprint as btcd's PSBT stores it: a uint32 it
// writes little-endian, so that the bytes on the wire are the fingerprint's.
func fingerprint(c watchonly.Child) uint32 { return binary.LittleEndian.Uint32(c.Fingerprint[:]) }

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 70 {
		return s[:70] + "..."
	}
	return s
}
