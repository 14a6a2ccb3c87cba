package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// signedRaw is what Signed.Raw holds: a forward's transactions in the
// order Send broadcasts them.
type signedRaw struct {
	Transactions []signedTx `json:"transactions"`
}

// signedTx is one signed transaction.
type signedTx struct {
	// TxID is sha256 of its raw_data.
	TxID string `json:"txID"`
	// Hex is the signed protocol.Transaction, exactly as
	// /wallet/broadcasthex takes it.
	Hex string `json:"transaction"`
}

// Sign implements chains.Backend. One transaction per output, all from
// f.From and signed with the key of f.FromIndex: a TransferContract
// (/wallet/createtransaction) for trx, a call of the token's
// transfer(address,uint256) (/wallet/triggersmartcontract) for a token.
// The node builds each transaction; Sign checks that its txID is the
// sha256 of its raw_data_hex and that the decoded raw data is exactly what
// was asked (owner, recipient, amount, contract, call data, fee limit, no
// extra fields) before extending its expiration (Config.Expiration) and
// signing it.
//
// A token forward's energy and bandwidth are paid in TRX by f.From: when
// f.From holds less TRX than the transfers may burn (fee_limit and
// bandwidth each), the first transaction is a TRX transfer from the
// operator's address (the signer's OperatorAddress) topping f.From up to
// that. Signed.TxID is the first transfer to an output.
//
// Errors wrap chains.ErrInvalidForward for a forward that cannot be
// signed as it is (no ID, bad addresses, amounts that are not positive
// whole base units or do not fit, inputs that do not cover the outputs
// (and, for trx, the fee), a FromIndex whose key does not control f.From,
// or a trx balance on chain that does not cover the outputs and the
// bandwidth), ErrWatchOnly without keys, and chains.ErrNode for the node's
// failures (including a transaction built other than asked).
func (b *Backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	tk := b.cfg.Ticker
	invalid := func(format string, a ...any) (chains.Signed, error) {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q: %s", chains.ErrInvalidForward, tk.Ticker, f.ID, fmt.Sprintf(format, a...))
	}
	if b.cfg.Signer == nil {
		return chains.Signed{}, fmt.Errorf("%w: cannot sign %s forward %q", ErrWatchOnly, tk.Ticker, f.ID)
	}
	if f.ID == "" {
		return invalid("no ID")
	}
	if err := chains.ValidateAddress(tk, f.From); err != nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q: from: %w", chains.ErrInvalidForward, tk.Ticker, f.ID, err)
	}
	from, err := parseBase58(f.From)
	if err != nil {
		return invalid("from: %v", err)
	}
	if len(f.Outputs) == 0 {
		return invalid("no outputs")
	}
	type output struct {
		to     account
		amount *big.Int
	}
	outs := make([]output, len(f.Outputs))
	sumOut := new(big.Int)
	for i, o := range f.Outputs {
		if err := chains.ValidateAddress(tk, o.Address); err != nil {
			return chains.Signed{}, fmt.Errorf("%w: %s forward %q: output %d: %w", chains.ErrInvalidForward, tk.Ticker, f.ID, i, err)
		}
		to, err := parseBase58(o.Address)
		if err != nil {
			return invalid("output %d: %v", i, err)
		}
		if to == from {
			return invalid("output %d pays the address the funds leave", i)
		}
		amount, err := b.units(o.Amount, true)
		if err != nil {
			return invalid("output %d: %v", i, err)
		}
		if !tk.Token && !amount.IsInt64() {
			return invalid("output %d: %s does not fit a TRON amount", i, o.Amount)
		}
		outs[i] = output{to, amount}
		sumOut.Add(sumOut, amount)
	}
	sumIn := new(big.Int)
	for i, in := range f.Inputs {
		if in.To != "" && in.To != f.From {
			return invalid("input %d (%s) paid %s, not the forward's address", i, in.TxID, in.To)
		}
		v, err := b.units(in.Value, false)
		if err != nil {
			return invalid("input %d: %v", i, err)
		}
		sumIn.Add(sumIn, v)
	}
	fee, err := b.units(f.NetworkFee, false)
	if err != nil {
		return invalid("network fee: %v", err)
	}
	needIn := new(big.Int).Set(sumOut)
	if !tk.Token {
		needIn.Add(needIn, fee) // a token's fee is paid in TRX by the operator
	}
	if sumIn.Cmp(needIn) < 0 {
		return invalid("inputs of %s base units do not cover %s", sumIn, needIn)
	}
	// The signer's signature is checked to be of From's key (sign).
	key := signingKey{ctx: f.SignContext(tk), ref: chains.KeyRef{Index: f.FromIndex}, addr: f.From, own: f.OwnKeys()}

	pr, err := b.fees(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	balance, err := b.balance(ctx, from)
	if err != nil {
		return chains.Signed{}, err
	}
	n := int64(len(outs))
	var txs []signedTx
	if !tk.Token {
		need := new(big.Int).Add(sumOut, big.NewInt(n*pr.perByte*DefaultTransferBytes))
		if big.NewInt(balance).Cmp(need) < 0 {
			return invalid("%s holds %d sun, the transfers need %s with their bandwidth", f.From, balance, need)
		}
		for _, o := range outs {
			tx, err := b.transfer(ctx, from, o.to, o.amount.Int64(), key)
			if err != nil {
				return chains.Signed{}, fmt.Errorf("%s forward %q: %w", tk.Ticker, f.ID, err)
			}
			txs = append(txs, tx)
		}
	} else {
		feeLimit := b.cfg.TokenEnergy * pr.perEnergy
		if need := n * (feeLimit + pr.perByte*DefaultTriggerBytes); balance < need {
			opAddr, err := b.cfg.Signer.OperatorAddress(ctx, tk)
			if err != nil {
				return chains.Signed{}, fmt.Errorf("%s forward %q: operator address: %w", tk.Ticker, f.ID, err)
			}
			// The top-up pays From, a payment address: the seed's own key.
			op := signingKey{ctx: key.ctx, ref: chains.KeyRef{Operator: true}, addr: opAddr, own: []chains.KeyRef{{Index: f.FromIndex}}}
			opAcc, _ := parseBase58(opAddr)
			topUp, err := b.transfer(ctx, opAcc, from, need-balance, op)
			if err != nil {
				return chains.Signed{}, fmt.Errorf("%s forward %q: gas top-up from the operator's %s: %w", tk.Ticker, f.ID, opAddr, err)
			}
			txs = append(txs, topUp)
		}
		for _, o := range outs {
			tx, err := b.tokenTransfer(ctx, from, o.to, o.amount, feeLimit, key)
			if err != nil {
				return chains.Signed{}, fmt.Errorf("%s forward %q: %w", tk.Ticker, f.ID, err)
			}
			txs = append(txs, tx)
		}
	}
	raw, err := json.Marshal(signedRaw{Transactions: txs})
	if err != nil {
		return chains.Signed{}, fmt.Errorf("%s forward %q: %w", tk.Ticker, f.ID, err)
	}
	return chains.Signed{TxID: txs[len(txs)-len(outs)].TxID, Raw: raw}, nil
}

// units converts an amount to base units, refusing negative amounts,
// amounts finer than the ticker's decimals and, with positive, zero.
func (b *Backend) units(v decimal.Decimal, positive bool) (*big.Int, error) {
	dec := b.cfg.Ticker.Decimals
	switch s := v.Shift(dec); {
	case v.Sign() < 0 || (positive && v.Sign() == 0):
		return nil, fmt.Errorf("amount %s is not positive", v)
	case !s.IsInteger():
		return nil, fmt.Errorf("amount %s has more than %d decimal places", v, dec)
	default:
		return s.BigInt(), nil
	}
}

// balance returns an account's TRX balance in sun; 0 for an account not
// on chain yet.
func (b *Backend) balance(ctx context.Context, a account) (int64, error) {
	var acc accountJSON
	if err := b.post(ctx, b.ep.base, "/wallet/getaccount", map[string]string{"address": a.Hex()}, &acc); err != nil {
		return 0, err
	}
	if acc.Balance < 0 {
		return 0, fmt.Errorf("%w: tron /wallet/getaccount: balance %d", chains.ErrNode, acc.Balance)
	}
	return acc.Balance, nil
}

// built checks what a build endpoint returned: a txID that is the sha256
// of raw_data_hex, which decodes to one contract of the wanted type. It
// returns the raw bytes and their decoding.
func built(path string, bt builtJSON, typ int64, typeURL string) ([]byte, rawTx, error) {
	fail := func(format string, a ...any) ([]byte, rawTx, error) {
		return nil, rawTx{}, fmt.Errorf("%w: tron %s: %s", chains.ErrNode, path, fmt.Sprintf(format, a...))
	}
	raw, err := hex.DecodeString(bt.RawDataHex)
	if err != nil || len(raw) == 0 {
		return fail("raw_data_hex is not hex")
	}
	id := sha256.Sum256(raw)
	if normHash(bt.TxID) != hex.EncodeToString(id[:]) {
		return fail("txID %s is not the sha256 of raw_data_hex", clip(bt.TxID))
	}
	r, err := decodeRaw(raw)
	if err != nil {
		return fail("raw_data_hex: %v", err)
	}
	if r.Type != typ || r.TypeURL != typeURL || r.PermissionID != 0 {
		return fail("built contract type %d (%s, permission %d), want %d", r.Type, clip(r.TypeURL), r.PermissionID, typ)
	}
	return raw, r, nil
}

// transfer builds and signs a TRX transfer.
func (b *Backend) transfer(ctx context.Context, owner, to account, amount int64, key signingKey) (signedTx, error) {
	const path = "/wallet/createtransaction"
	var bt builtJSON
	req := map[string]any{"owner_address": owner.Hex(), "to_address": to.Hex(), "amount": amount}
	if err := b.post(ctx, b.ep.base, path, req, &bt); err != nil {
		return signedTx{}, err
	}
	raw, r, err := built(path, bt, typeTransfer, typeURLTransfer)
	if err != nil {
		return signedTx{}, err
	}
	c, err := decodeTransfer(r.Value)
	if err != nil || !bytes.Equal(c.Owner, owner[:]) || !bytes.Equal(c.To, to[:]) || c.Amount != amount || r.FeeLimit != 0 {
		return signedTx{}, fmt.Errorf("%w: tron %s: the node built another transfer than %d sun from %s to %s", chains.ErrNode, path, amount, owner, to)
	}
	return b.sign(ctx, path, raw, r, key)
}

// tokenTransfer builds and signs a call of the token's
// transfer(address,uint256).
func (b *Backend) tokenTransfer(ctx context.Context, owner, to account, amount *big.Int, feeLimit int64, key signingKey) (signedTx, error) {
	const path = "/wallet/triggersmartcontract"
	if amount.BitLen() > 256 {
		return signedTx{}, fmt.Errorf("%w: amount %s does not fit uint256", chains.ErrInvalidForward, amount)
	}
	param := append(to.word(), amount.FillBytes(make([]byte, 32))...)
	req := map[string]any{
		"owner_address":     owner.Hex(),
		"contract_address":  b.contract.Hex(),
		"function_selector": "transfer(address,uint256)",
		"parameter":         hex.EncodeToString(param),
		"fee_limit":         feeLimit,
		"call_value":        0,
	}
	var tr triggerJSON
	if err := b.post(ctx, b.ep.base, path, req, &tr); err != nil {
		return signedTx{}, err
	}
	if !tr.Result.Result {
		return signedTx{}, fmt.Errorf("%w: tron %s: %s %s", chains.ErrNode, path, clip(tr.Result.Code), broadcastJSON{Message: tr.Result.Message}.text())
	}
	raw, r, err := built(path, tr.Transaction, typeTrigger, typeURLTrigger)
	if err != nil {
		return signedTx{}, err
	}
	sel, _ := hex.DecodeString(transferSelector)
	c, err := decodeTrigger(r.Value)
	if err != nil || !bytes.Equal(c.Owner, owner[:]) || !bytes.Equal(c.Contract, b.contract[:]) ||
		c.CallValue != 0 || c.CallTokenValue != 0 || c.TokenID != 0 ||
		!bytes.Equal(c.Data, append(sel, param...)) || r.FeeLimit != feeLimit {
		return signedTx{}, fmt.Errorf("%w: tron %s: the node built another call than transfer(%s, %s) on %s from %s with fee limit %d",
			chains.ErrNode, path, to, amount, b.contract, owner, feeLimit)
	}
	return b.sign(ctx, path, raw, r, key)
}

// signingKey is the key a transaction is signed with, what for, and the
// address it controls.
type signingKey struct {
	ctx  chains.SignContext
	ref  chains.KeyRef
	addr string
	// own are the seed's keys the transaction may pay (chains.TronSignRequest.Own).
	own []chains.KeyRef
}

// sign extends raw's expiration to Config.Expiration after its
// construction and has the signer sign it (its sha256, the transaction
// id, as TRON expects: 65 bytes r || s || v with v = 27 + the recovery
// id); the signature must recover key's address.
func (b *Backend) sign(ctx context.Context, path string, raw []byte, r rawTx, key signingKey) (signedTx, error) {
	tk := b.cfg.Ticker
	built := r.Timestamp
	if built == 0 {
		built = r.Expiration - 60_000 // java-tron's default lifetime
	}
	exp := max(r.Expiration, built+b.cfg.Expiration.Milliseconds())
	raw, err := withExpiration(raw, exp)
	if err != nil {
		return signedTx{}, fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
	}
	sig, err := b.cfg.Signer.SignTron(ctx, chains.TronSignRequest{Context: key.ctx, RawData: raw, Key: key.ref, Own: key.own})
	if err != nil {
		return signedTx{}, fmt.Errorf("sign: %w", err)
	}
	id := sha256.Sum256(raw)
	if len(sig) != 65 {
		return signedTx{}, fmt.Errorf("%w: %s: the signer answered %d bytes, not a signature", chains.ErrSignerUnavailable, tk.Ticker, len(sig))
	}
	compact := append([]byte{sig[64]}, sig[:64]...) // v || r || s
	pub, _, err := ecdsa.RecoverCompact(compact, id[:])
	if err != nil {
		return signedTx{}, fmt.Errorf("%w: %s: the signer's signature does not verify: %v", chains.ErrSignerUnavailable, tk.Ticker, err)
	}
	if addr, err := chains.PubKeyAddress(tk, pub); err != nil || addr != key.addr {
		if key.ref.Operator {
			return signedTx{}, fmt.Errorf("%w: %s: the operator's key does not control %s", chains.ErrSignerUnavailable, tk.Ticker, key.addr)
		}
		return signedTx{}, fmt.Errorf("%w: %s forward %q: the key of index %d does not control %s", chains.ErrInvalidForward, tk.Ticker, key.ctx.Key, key.ref.Index, key.addr)
	}
	return signedTx{TxID: hex.EncodeToString(id[:]), Hex: hex.EncodeToString(encodeSigned(raw, sig))}, nil
}

// Send implements chains.Backend: it broadcasts Signed.Raw's transactions
// in order with /wallet/broadcasthex (the node parses exactly the signed
// bytes) and stops at the first that fails, so a token transfer is never
// sent without its gas top-up. A transaction the node already has
// (DUP_TRANSACTION_ERROR, or found by gettransactionbyid or in the pending
// pool) counts as sent. Errors wrap chains.ErrInvalidForward for bytes
// Sign did not produce, ErrRejected for the node's refusal (signature,
// validation, TaPoS, expiration; see ErrRejected), and chains.ErrNode
// otherwise.
func (b *Backend) Send(ctx context.Context, s chains.Signed) error {
	var sr signedRaw
	if err := json.Unmarshal(s.Raw, &sr); err != nil || len(sr.Transactions) == 0 {
		return fmt.Errorf("%w: %s: not a forward signed by this backend", chains.ErrInvalidForward, b.cfg.Ticker.Ticker)
	}
	for i, tx := range sr.Transactions {
		data, err := hex.DecodeString(tx.Hex)
		if err != nil {
			return fmt.Errorf("%w: %s: transaction %d is not hex", chains.ErrInvalidForward, b.cfg.Ticker.Ticker, i)
		}
		if _, id, err := decodeSigned(data); err != nil || hex.EncodeToString(id[:]) != tx.TxID {
			return fmt.Errorf("%w: %s: transaction %d is not the signed transaction %s", chains.ErrInvalidForward, b.cfg.Ticker.Ticker, i, tx.TxID)
		}
	}
	for _, tx := range sr.Transactions {
		if err := b.broadcast(ctx, tx, len(sr.Transactions) == 1); err != nil {
			return err
		}
	}
	return nil
}

// transient reports broadcast codes that say nothing about the
// transaction: the node is busy, unconnected, or failed on its own.
func transient(code string) bool {
	switch code {
	case "SERVER_BUSY", "NO_CONNECTION", "NOT_ENOUGH_EFFECTIVE_CONNECTION", "BLOCK_UNSOLIDIFIED", "OTHER_ERROR", "":
		return true
	}
	return false
}

// broadcast sends one transaction of a forward; only is true when it is the
// forward's only transaction: when that one expired unseen, the forward can
// never move funds, and the error also wraps chains.ErrNeverLands, so the
// forward is signed anew. A forward of several transactions (a token top-up
// and the transfer, or several outputs) is never declared dead: an earlier
// attempt may have sent a later transaction, which lands on its own.
func (b *Backend) broadcast(ctx context.Context, tx signedTx, only bool) error {
	const path = "/wallet/broadcasthex"
	var r broadcastJSON
	if err := b.post(ctx, b.ep.base, path, map[string]string{"transaction": tx.Hex}, &r); err != nil {
		return err
	}
	if r.TxID != "" && normHash(r.TxID) != tx.TxID {
		return fmt.Errorf("%w: tron %s: sent %s, the node names it %s", chains.ErrNode, path, tx.TxID, clip(r.TxID))
	}
	if r.Result || r.Code == "DUP_TRANSACTION_ERROR" {
		return nil
	}
	// Expired or TaPoS-failed bytes may be in a block already.
	inBlock, pending, err := b.known(ctx, tx.TxID)
	if err != nil {
		return err
	}
	if inBlock || pending {
		return nil
	}
	if transient(r.Code) {
		return fmt.Errorf("%w: tron %s: %s: %s %s", chains.ErrNode, path, tx.TxID, clip(r.Code), r.text())
	}
	if only && r.Code == "TRANSACTION_EXPIRATION_ERROR" {
		return fmt.Errorf("%w: %w: %s: %s %s", ErrRejected, chains.ErrNeverLands, tx.TxID, clip(r.Code), r.text())
	}
	return fmt.Errorf("%w: %s: %s %s", ErrRejected, tx.TxID, clip(r.Code), r.text())
}
