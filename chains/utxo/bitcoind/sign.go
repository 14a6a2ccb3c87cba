package bitcoind

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

// minRelayPerKvB is, per network, the smallest fee rate nodes relay, in
// base units per 1000 vbytes. The smallest output they accept (dust) is the
// family's rule: utxo.Family.MinOutput.
var minRelayPerKvB = map[string]int64{"btc": 1000, "ltc": 1000, "bch": 1000, "doge": 1_000_000}

// segwit reports whether the ticker's payment addresses are P2WPKH.
func (b *Backend) segwit() bool {
	return b.cfg.Ticker.Network == "btc" || b.cfg.Ticker.Network == "ltc"
}

// vsize estimates the virtual size of a transaction spending nIn of the
// payment addresses' outputs to nOut outputs.
func (b *Backend) vsize(nIn, nOut int) int64 {
	if b.segwit() {
		return 11 + 68*int64(nIn) + 31*int64(nOut)
	}
	return 10 + 148*int64(nIn) + 34*int64(nOut)
}

// dust returns the smallest output to addr the network relays, in base
// units (utxo.Family.MinOutput).
func (b *Backend) dust(addr string) (int64, error) {
	m, err := utxo.Family{}.MinOutput(b.cfg.Ticker, addr)
	if err != nil {
		return 0, err
	}
	return m.Shift(b.cfg.Ticker.Decimals).IntPart(), nil
}

// units converts a coin amount to base units; ok is false when it is not
// a positive whole number of them.
func (b *Backend) units(v decimal.Decimal) (int64, bool) {
	u := v.Shift(b.cfg.Ticker.Decimals)
	if !u.IsInteger() || u.Sign() <= 0 || !u.LessThan(decimal.New(1, 18)) {
		return 0, false
	}
	return u.IntPart(), true
}

// relayMinimum returns the smallest fee, in base units, nodes relay a
// transaction of vsize virtual bytes with (minRelayPerKvB, rounded up).
func (b *Backend) relayMinimum(vsize int64) int64 {
	return (vsize*minRelayPerKvB[b.cfg.Ticker.Network] + 999) / 1000
}

// inputSigner is the key of one input address and the script its outputs
// are locked with.
type inputSigner struct {
	priv   *btcec.PrivateKey
	script []byte
}

func invalid(f chains.Forward, format string, args ...any) error {
	return fmt.Errorf("%w: forward %q: %s", chains.ErrInvalidForward, f.ID, fmt.Sprintf(format, args...))
}

// SignsOffline implements chains.OfflineSigner: Sign builds and signs
// with the backend's own keys and asks the node nothing (a watch-only
// backend, which cannot sign, answers false).
func (b *Backend) SignsOffline() bool { return b.cfg.Keys != nil }

// Sign implements chains.Backend. The transaction spends exactly f.Inputs,
// each an output of its address Inputs[i].To (f.From when empty), signed
// with that address's key: f.FromIndex's for f.From, f.Keys' for another
// (an input on an address that is neither, or whose key does not control
// it, is refused). It pays each of f.Outputs exactly, pays f.NetworkFee as
// its fee (raised to the relay minimum for its size if the budget is below
// it, from the change), and returns the rest (the service fee) to the
// change address, unless it is dust, which then goes to the fee. An output
// below the network's dust limit for its address (utxo.Family.MinOutput)
// is refused. Every input's signature is verified before the transaction
// is returned: by txscript's engine, or for bch, whose SIGHASH_FORKID
// digest the engine does not know, against the digest.
func (b *Backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	t := b.cfg.Ticker
	if b.cfg.Keys == nil {
		return chains.Signed{}, fmt.Errorf("%w: %s backend is watch-only (no seed)", chains.ErrInvalidForward, t.Ticker)
	}
	if f.ID == "" {
		return chains.Signed{}, fmt.Errorf("%w: %s forward without an ID", chains.ErrInvalidForward, t.Ticker)
	}
	if err := chains.ValidateAddress(t, f.From); err != nil {
		return chains.Signed{}, invalid(f, "from: %v", err)
	}
	if len(f.Outputs) == 0 {
		return chains.Signed{}, invalid(f, "no outputs")
	}
	if len(f.Inputs) == 0 {
		return chains.Signed{}, invalid(f, "no inputs")
	}
	// Each input spends an output of its address (Inputs[i].To, or From
	// when empty), signed with the key f.KeyOf names for it; each address's
	// key is derived, and checked to control it, once.
	signers := map[string]*inputSigner{}
	signerOf := func(addr string, index uint32) (*inputSigner, error) {
		if s, ok := signers[addr]; ok {
			return s, nil
		}
		priv, err := b.cfg.Keys.Secp256k1(t, index)
		if err != nil {
			return nil, fmt.Errorf("key %d: %v", index, err)
		}
		if a, err := chains.PubKeyAddress(t, priv.PubKey()); err != nil || a != addr {
			return nil, fmt.Errorf("the key of index %d does not control %s", index, addr)
		}
		decoded, err := utxo.DecodeAddress(t, addr)
		if err != nil {
			return nil, fmt.Errorf("address %s: %v", addr, err)
		}
		script, err := txscript.PayToAddrScript(decoded)
		if err != nil {
			return nil, fmt.Errorf("script of %s: %v", addr, err)
		}
		s := &inputSigner{priv: priv, script: script}
		signers[addr] = s
		return s, nil
	}
	if _, err := signerOf(f.From, f.FromIndex); err != nil {
		return chains.Signed{}, invalid(f, "%v", err)
	}

	tx := wire.NewMsgTx(2)
	prevOuts := txscript.NewMultiPrevOutFetcher(nil)
	privs := make([]*btcec.PrivateKey, len(f.Inputs))
	scripts := make([][]byte, len(f.Inputs))
	var in int64
	seen := map[wire.OutPoint]bool{}
	for i, p := range f.Inputs {
		h, err := chainhash.NewHashFromStr(p.TxID)
		if err != nil || !isHash(p.TxID) || p.Index < 0 || p.Index > 1<<31 {
			return chains.Signed{}, invalid(f, "input %d: outpoint %s:%d", i, p.TxID, p.Index)
		}
		v, ok := b.units(p.Value)
		if !ok {
			return chains.Signed{}, invalid(f, "input %d: value %s", i, p.Value)
		}
		op := wire.OutPoint{Hash: *h, Index: uint32(p.Index)}
		if seen[op] {
			return chains.Signed{}, invalid(f, "input %d: outpoint %s spent twice", i, op)
		}
		seen[op] = true
		addr := p.To
		if addr == "" {
			addr = f.From
		}
		index, ok := f.KeyOf(addr)
		if !ok {
			return chains.Signed{}, invalid(f, "input %d: address %s is neither from nor in keys: no key signs it", i, addr)
		}
		if addr != f.From {
			if err := chains.ValidateAddress(t, addr); err != nil {
				return chains.Signed{}, invalid(f, "input %d: address: %v", i, err)
			}
		}
		s, err := signerOf(addr, index)
		if err != nil {
			return chains.Signed{}, invalid(f, "input %d: %v", i, err)
		}
		privs[i], scripts[i] = s.priv, s.script
		tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
		prevOuts.AddPrevOut(op, wire.NewTxOut(v, s.script))
		in += v
	}
	var out int64
	for i, o := range f.Outputs {
		a, err := utxo.DecodeAddress(t, o.Address)
		if err != nil {
			return chains.Signed{}, invalid(f, "output %d: %v", i, err)
		}
		v, ok := b.units(o.Amount)
		if !ok {
			return chains.Signed{}, invalid(f, "output %d: amount %s is not a positive whole number of base units", i, o.Amount)
		}
		dust, err := b.dust(o.Address)
		if err != nil {
			return chains.Signed{}, invalid(f, "output %d: %v", i, err)
		}
		if v < dust {
			return chains.Signed{}, invalid(f, "output %d: %s is below the network's dust limit (%s for that address)", i, o.Amount, decimal.New(dust, -t.Decimals))
		}
		script, err := txscript.PayToAddrScript(a)
		if err != nil {
			return chains.Signed{}, invalid(f, "output %d: %v", i, err)
		}
		tx.AddTxOut(wire.NewTxOut(v, script))
		out += v
	}
	fee := int64(0)
	if !f.NetworkFee.IsZero() {
		var ok bool
		if fee, ok = b.units(f.NetworkFee); !ok {
			return chains.Signed{}, invalid(f, "network fee %s", f.NetworkFee)
		}
	}
	fee = max(fee, b.relayMinimum(b.vsize(len(f.Inputs), len(f.Outputs)+1)))
	change := in - out - fee
	if change < 0 {
		return chains.Signed{}, invalid(f, "inputs of %d base units do not cover outputs of %d and a fee of %d", in, out, fee)
	}
	changeAddr := b.cfg.ChangeAddress
	if changeAddr == "" {
		var err error
		if changeAddr, err = b.cfg.Keys.OperatorAddress(t); err != nil {
			return chains.Signed{}, invalid(f, "change address: %v", err)
		}
	}
	changeDust, err := b.dust(changeAddr)
	if err != nil {
		return chains.Signed{}, invalid(f, "change address: %v", err)
	}
	if change >= changeDust {
		a, err := utxo.DecodeAddress(t, changeAddr)
		if err != nil {
			return chains.Signed{}, invalid(f, "change address: %v", err)
		}
		script, _ := txscript.PayToAddrScript(a)
		tx.AddTxOut(wire.NewTxOut(change, script))
	}

	if err := b.signInputs(tx, prevOuts, privs, scripts); err != nil {
		return chains.Signed{}, invalid(f, "%v", err)
	}
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		return chains.Signed{}, invalid(f, "serialize: %v", err)
	}
	return chains.Signed{TxID: tx.TxHash().String(), Raw: buf.Bytes()}, ctx.Err()
}

// signInputs signs input i of tx, which spends an output locked with
// scripts[i], with privs[i], and checks each signature with txscript's
// engine.
func (b *Backend) signInputs(tx *wire.MsgTx, prevOuts *txscript.MultiPrevOutFetcher, privs []*btcec.PrivateKey, scripts [][]byte) error {
	if len(privs) != len(tx.TxIn) || len(scripts) != len(tx.TxIn) {
		return fmt.Errorf("%d inputs, %d keys and %d scripts", len(tx.TxIn), len(privs), len(scripts))
	}
	hashes := txscript.NewTxSigHashes(tx, prevOuts)
	if b.cfg.Ticker.Network == "bch" {
		return signForkID(tx, hashes, prevOuts, privs, scripts)
	}
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
		if b.segwit() {
			w, err := txscript.WitnessSignature(tx, hashes, i, prev.Value, scripts[i], txscript.SigHashAll, privs[i], true)
			if err != nil {
				return fmt.Errorf("sign input %d: %w", i, err)
			}
			in.Witness = w
		} else {
			s, err := txscript.SignatureScript(tx, i, scripts[i], txscript.SigHashAll, privs[i], true)
			if err != nil {
				return fmt.Errorf("sign input %d: %w", i, err)
			}
			in.SignatureScript = s
		}
	}
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
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

// Send implements chains.Backend (sendrawtransaction). A transaction the
// node already has, in its mempool or in a block, is success.
func (b *Backend) Send(ctx context.Context, s chains.Signed) error {
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(s.Raw)); err != nil {
		return fmt.Errorf("%w: %s: not a serialised transaction: %v", chains.ErrInvalidForward, s.TxID, err)
	}
	if got := tx.TxHash().String(); s.TxID != "" && got != s.TxID {
		return fmt.Errorf("%w: the bytes are transaction %s, not %s", chains.ErrInvalidForward, got, s.TxID)
	}
	var txid string
	err := b.rpc.Call(ctx, &txid, "sendrawtransaction", hex.EncodeToString(s.Raw))
	var re *RPCError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re) && (re.Code == codeAlreadyInChain ||
		strings.Contains(re.Message, "already in block chain") ||
		strings.Contains(re.Message, "txn-already-in-mempool") ||
		strings.Contains(re.Message, "txn-already-known") ||
		strings.Contains(re.Message, "already in utxo set")):
		return nil
	case errors.As(err, &re):
		// Sent before a crash and mined, its outputs (change included)
		// spent since: the node answers "missing inputs", not "already in
		// chain". It is sent when its block is in the best chain.
		if st, serr := b.State(ctx, chains.Transfer{TxID: s.TxID}); serr == nil && st.Present {
			return nil
		}
		return fmt.Errorf("%w: sendrawtransaction %s: the node rejected it: %s", chains.ErrNode, s.TxID, re.Message)
	}
	return nodeErr("sendrawtransaction", err)
}

// sigHashAllForkID is Bitcoin Cash's SIGHASH_ALL | SIGHASH_FORKID with fork
// id 0 (BCH-UAHF): the only hash type its nodes accept for new signatures.
const sigHashAllForkID = txscript.SigHashType(0x41)

// forkIDSigHash is the digest a Bitcoin Cash signature of input i signs:
// the BIP143 algorithm (which btcd implements for segwit v0) over the
// P2PKH script, with the FORKID hash type.
func forkIDSigHash(tx *wire.MsgTx, hashes *txscript.TxSigHashes, i int, script []byte, amount int64) ([]byte, error) {
	return txscript.CalcWitnessSigHash(script, hashes, sigHashAllForkID, tx, i, amount)
}

// signForkID signs every P2PKH input of tx for Bitcoin Cash, input i (of
// an output locked with scripts[i]) with privs[i], and checks each
// signature against its digest.
func signForkID(tx *wire.MsgTx, hashes *txscript.TxSigHashes, prevOuts *txscript.MultiPrevOutFetcher, privs []*btcec.PrivateKey, scripts [][]byte) error {
	if len(privs) != len(tx.TxIn) || len(scripts) != len(tx.TxIn) {
		return fmt.Errorf("%d inputs, %d keys and %d scripts", len(tx.TxIn), len(privs), len(scripts))
	}
	for i, in := range tx.TxIn {
		prev := prevOuts.FetchPrevOutput(in.PreviousOutPoint)
		digest, err := forkIDSigHash(tx, hashes, i, scripts[i], prev.Value)
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
			AddData(append(sig.Serialize(), byte(sigHashAllForkID))).
			AddData(pub.SerializeCompressed()).Script()
		if err != nil {
			return fmt.Errorf("sign input %d: %w", i, err)
		}
		in.SignatureScript = script
	}
	return nil
}
