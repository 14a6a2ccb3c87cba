package bitcoind

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/keysign"
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

func invalid(f chains.Forward, format string, args ...any) error {
	return fmt.Errorf("%w: forward %q: %s", chains.ErrInvalidForward, f.ID, fmt.Sprintf(format, args...))
}

// SignsOffline implements chains.OfflineSigner: Sign builds the
// transaction and asks the node nothing; it signs offline when its signer
// does (the process's own keys, not a remote signer). A watch-only
// backend, which cannot sign, answers false.
func (b *Backend) SignsOffline() bool { return b.cfg.Signer != nil && b.cfg.Signer.Offline() }

// Sign implements chains.Backend. The transaction spends exactly f.Inputs,
// each an output of its address Inputs[i].To (f.From when empty), signed
// with that address's key: f.FromIndex's for f.From, f.Keys' for another
// (an input on an address that is neither is refused; the signer refuses
// a key that does not control its input). It pays each of f.Outputs
// exactly, pays f.NetworkFee as its fee (raised to the relay minimum for
// its size if the budget is below it, from the change), and returns the
// rest (the service fee) to the change address, unless it is dust, which
// then goes to the fee. An output below the network's dust limit for its
// address (utxo.Family.MinOutput) is refused.
//
// The unsigned transaction goes to the signer whole, with each input's
// spent output and key and the outputs that pay the seed's own keys (the
// operator's change, an output to From or to an address of f.Keys); what
// it returns is checked to be that transaction, every input's signature
// verified (txscript's engine, or for bch, whose SIGHASH_FORKID digest the
// engine does not know, against the digest), before it is returned.
func (b *Backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	t := b.cfg.Ticker
	if b.cfg.Signer == nil {
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
	// when empty), signed with the key f.KeyOf names for it.
	scripts := map[string][]byte{}
	scriptOf := func(addr string) ([]byte, error) {
		if s, ok := scripts[addr]; ok {
			return s, nil
		}
		decoded, err := utxo.DecodeAddress(t, addr)
		if err != nil {
			return nil, fmt.Errorf("address %s: %v", addr, err)
		}
		s, err := txscript.PayToAddrScript(decoded)
		if err != nil {
			return nil, fmt.Errorf("script of %s: %v", addr, err)
		}
		scripts[addr] = s
		return s, nil
	}

	tx := wire.NewMsgTx(2)
	req := chains.UTXOSignRequest{Context: f.SignContext(t), Inputs: make([]chains.UTXOInput, len(f.Inputs))}
	values := make([]int64, len(f.Inputs))
	inScripts := make([][]byte, len(f.Inputs))
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
		script, err := scriptOf(addr)
		if err != nil {
			return chains.Signed{}, invalid(f, "input %d: %v", i, err)
		}
		tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
		req.Inputs[i] = chains.UTXOInput{Value: v, Script: script, Key: index}
		values[i], inScripts[i] = v, script
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
		if o.Key != nil {
			// A payhook address the planner named (a sweep into a payout
			// wallet).
			req.Own = append(req.Own, chains.UTXOOwnOutput{Output: len(tx.TxOut), Key: chains.KeyRef{Index: *o.Key}})
		} else if index, ok := f.KeyOf(o.Address); ok {
			// Back to a payhook address (a payout's change to its wallet).
			req.Own = append(req.Own, chains.UTXOOwnOutput{Output: len(tx.TxOut), Key: chains.KeyRef{Index: index}})
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
	changeAddr, operator := b.cfg.ChangeAddress, false
	if changeAddr == "" {
		var err error
		if changeAddr, err = b.cfg.Signer.OperatorAddress(ctx, t); err != nil {
			return chains.Signed{}, fmt.Errorf("%s forward %q: change address: %w", t.Ticker, f.ID, err)
		}
		operator = true
	}
	changeDust, err := b.dust(changeAddr)
	if err != nil {
		return chains.Signed{}, invalid(f, "change address: %v", err)
	}
	if change >= changeDust {
		script, err := scriptOf(changeAddr)
		if err != nil {
			return chains.Signed{}, invalid(f, "change address: %v", err)
		}
		if operator {
			req.Own = append(req.Own, chains.UTXOOwnOutput{Output: len(tx.TxOut), Key: chains.KeyRef{Operator: true}})
		}
		tx.AddTxOut(wire.NewTxOut(change, script))
	}

	var unsigned bytes.Buffer
	if err := tx.SerializeNoWitness(&unsigned); err != nil {
		return chains.Signed{}, invalid(f, "serialize: %v", err)
	}
	req.Tx = unsigned.Bytes()
	raw, err := b.cfg.Signer.SignUTXO(ctx, req)
	if err != nil {
		return chains.Signed{}, fmt.Errorf("%s forward %q: sign: %w", t.Ticker, f.ID, err)
	}
	signed := new(wire.MsgTx)
	if err := signed.Deserialize(bytes.NewReader(raw)); err != nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q: the signer answered no transaction: %v", chains.ErrSignerUnavailable, t.Ticker, f.ID, err)
	}
	if err := keysign.VerifyUTXO(t, tx, signed, values, inScripts); err != nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q: the signer's answer: %v", chains.ErrSignerUnavailable, t.Ticker, f.ID, err)
	}
	return chains.Signed{TxID: signed.TxHash().String(), Raw: raw}, ctx.Err()
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
