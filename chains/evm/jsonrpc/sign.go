package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// transferGas is the gas of a plain value transfer to an account without
// code.
const transferGas = 21000

// revertCode is the JSON-RPC error code of an execution that reverted
// (geth, anvil, erigon, reth).
const revertCode = 3

// Selectors of the ERC-20 functions the backend calls.
var (
	selectorTransfer  = []byte{0xa9, 0x05, 0x9c, 0xbb} // transfer(address,uint256)
	selectorBalanceOf = []byte{0x70, 0xa0, 0x82, 0x31} // balanceOf(address)
)

// feeParams is what a transaction offers for gas.
type feeParams struct {
	legacy bool     // no base fee: a legacy transaction at cap
	tip    *big.Int // priority fee per gas (EIP-1559)
	cap    *big.Int // max fee per gas (EIP-1559) or gas price (legacy)
	base   *big.Int // the latest block's base fee; nil when legacy
}

// fees returns the fee parameters for a transaction now: on a chain with a
// base fee, an EIP-1559 fee cap of twice the latest base fee plus the
// priority fee (eth_maxPriorityFeePerGas, or eth_gasPrice less the base
// fee where the node lacks it), so the transaction stays includable while
// the base fee doubles; elsewhere eth_gasPrice.
func (b *Backend) fees(ctx context.Context) (feeParams, error) {
	var (
		h             *header
		price, tipAsk hexutil.Big
	)
	elems := []rpc.BatchElem{
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &h},
		{Method: "eth_gasPrice", Result: &price},
		{Method: "eth_maxPriorityFeePerGas", Result: &tipAsk},
	}
	if err := b.batch(ctx, elems); err != nil {
		return feeParams{}, err
	}
	if err := b.elemError(ctx, elems[0]); err != nil {
		return feeParams{}, err
	}
	if h == nil {
		return feeParams{}, b.garbage("eth_getBlockByNumber", "no latest block")
	}
	if h.BaseFee == nil {
		if err := b.elemError(ctx, elems[1]); err != nil {
			return feeParams{}, err
		}
		if price.ToInt().Sign() <= 0 {
			return feeParams{}, b.garbage("eth_gasPrice", "gas price %s", price.ToInt())
		}
		return feeParams{legacy: true, cap: new(big.Int).Set(price.ToInt())}, nil
	}
	base := new(big.Int).Set(h.BaseFee.ToInt())
	var tip *big.Int
	switch {
	case elems[2].Error == nil:
		tip = new(big.Int).Set(tipAsk.ToInt())
	case elems[1].Error == nil:
		tip = new(big.Int).Sub(price.ToInt(), base)
		if tip.Sign() < 0 {
			tip.SetInt64(0)
		}
	default:
		return feeParams{}, b.elemError(ctx, elems[1])
	}
	capFee := new(big.Int).Add(new(big.Int).Lsh(base, 1), tip)
	if capFee.Sign() <= 0 {
		capFee.SetInt64(1)
	}
	return feeParams{tip: tip, cap: capFee, base: base}, nil
}

// at returns p offering percent of its gas price (a priority's share,
// chains.Priority.GasPercent): the tip and the cap (or the legacy price)
// scaled, rounded down, the cap kept at or above the base fee so the
// transaction stays includable; p itself for 0 or 100.
func (p feeParams) at(percent int) feeParams {
	if percent <= 0 || percent == 100 {
		return p
	}
	scale := func(v *big.Int) *big.Int {
		if v == nil {
			return nil
		}
		return new(big.Int).Div(new(big.Int).Mul(v, big.NewInt(int64(percent))), big.NewInt(100))
	}
	out := feeParams{legacy: p.legacy, tip: scale(p.tip), cap: scale(p.cap), base: p.base}
	if out.base != nil && out.cap.Cmp(out.base) < 0 {
		out.cap = new(big.Int).Set(out.base)
	}
	if out.tip != nil && out.cap.Cmp(out.tip) < 0 {
		out.tip = new(big.Int).Set(out.cap)
	}
	return out
}

// NetworkFeeAt implements chains.PriorityFees: NetworkFee at p's share of
// the gas price (a token's: the ticker's estimate scaled, as NetworkFee
// takes the estimate).
func (b *Backend) NetworkFeeAt(ctx context.Context, p chains.Priority) (decimal.Decimal, error) {
	if b.tk.Token {
		if err := ctx.Err(); err != nil {
			return decimal.Decimal{}, err
		}
		return p.Scale(b.tk.NetworkFeeEstimate, b.tk.Decimals), nil
	}
	f, err := b.fees(ctx)
	if err != nil {
		return decimal.Decimal{}, err
	}
	f = f.at(p.GasPercent)
	wei := new(big.Int).Mul(f.cap, big.NewInt(transferGas))
	return decimal.NewFromBigInt(wei, -b.tk.Decimals), nil
}

// output is one checked forward output.
type output struct {
	to     common.Address
	amount *big.Int // base units
}

// invalidForward wraps chains.ErrInvalidForward.
func (b *Backend) invalidForward(f chains.Forward, format string, args ...any) error {
	return fmt.Errorf("%w: %s forward %q: %s", chains.ErrInvalidForward, b.tk.Ticker, f.ID, fmt.Sprintf(format, args...))
}

// checkForward validates f without I/O.
func (b *Backend) checkForward(f chains.Forward) (common.Address, []output, error) {
	if f.ID == "" {
		return common.Address{}, nil, b.invalidForward(f, "no ID")
	}
	if err := chains.ValidateAddress(b.tk, f.From); err != nil {
		return common.Address{}, nil, b.invalidForward(f, "from: %v", err)
	}
	if len(f.Outputs) == 0 {
		return common.Address{}, nil, b.invalidForward(f, "no outputs")
	}
	if f.NetworkFee.Sign() < 0 {
		return common.Address{}, nil, b.invalidForward(f, "negative network fee %s", f.NetworkFee)
	}
	outs := make([]output, len(f.Outputs))
	for i, o := range f.Outputs {
		if err := chains.ValidateAddress(b.tk, o.Address); err != nil {
			return common.Address{}, nil, b.invalidForward(f, "output %d: %v", i, err)
		}
		units := o.Amount.Shift(b.tk.Decimals)
		if o.Amount.Sign() <= 0 || !units.IsInteger() {
			return common.Address{}, nil, b.invalidForward(f, "output %d: amount %s is not a positive whole number of %d-decimal units", i, o.Amount, b.tk.Decimals)
		}
		outs[i] = output{to: common.HexToAddress(o.Address), amount: units.BigInt()}
	}
	return common.HexToAddress(f.From), outs, nil
}

// Sign implements chains.Backend. It signs one transaction per output,
// from f.From with the key of f.FromIndex (the signer's: chains.Signer), for the
// chain id the node reports, with consecutive nonces from From's pending
// transaction count and the fees of fees; each pays its output exactly
// (a native value, or a token transfer(to, amount)). Gas limits come from
// eth_estimateGas (21000 for a plain transfer, the estimate plus a
// quarter otherwise).
//
// A native forward pays its gas from what stays on From: From's balance
// must cover the outputs and the gas; where it covers them only at a lower
// fee cap, the cap is lowered to fit, down to the current base fee. A
// token forward needs From's token balance to cover the outputs; its gas,
// in the native coin, comes from the operator's gas address
// (the signer's OperatorAddress): when From's native balance does not cover
// the transfers' gas, a top-up transaction from the operator to From of
// the difference comes first. A node accepts the token transfers only once
// the top-up is in a block: until then Send fails and must be called
// again.
//
// Signed.Raw is a JSON array of the raw transactions in sending order;
// Signed.TxID is the hash of the first transfer to an output. Errors wrap
// chains.ErrInvalidForward (f is malformed, From is not the address of
// FromIndex, balances do not cover the outputs and gas, or a transfer
// would revert), ErrOperatorFunds, ErrWatchOnly, chains.ErrWrongNetwork or
// chains.ErrNode. Sign a forward from an address only once the previous
// one from it is in a block: balances are read at the latest block.
func (b *Backend) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	if b.cfg.Signer == nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q", ErrWatchOnly, b.tk.Ticker, f.ID)
	}
	from, outs, err := b.checkForward(f)
	if err != nil {
		return chains.Signed{}, err
	}
	// The signer's answer is checked to be from From (tx).
	key := signingKey{ref: chains.KeyRef{Index: f.FromIndex}, addr: from, own: f.OwnKeys()}
	chainID, err := b.chainIDFor(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	fee, err := b.fees(ctx)
	if err != nil {
		return chains.Signed{}, err
	}
	fee = fee.at(f.GasPercent)
	s := &signer{b: b, f: f, signer: types.LatestSignerForChainID(chainID), chainID: chainID, fee: fee, ctx: f.SignContext(b.tk)}
	var txs []*types.Transaction
	if b.tk.Token {
		txs, err = s.token(ctx, key, from, outs)
	} else {
		txs, err = s.native(ctx, key, from, outs)
	}
	if err != nil {
		return chains.Signed{}, err
	}
	raws := make([]hexutil.Bytes, len(txs))
	for i, tx := range txs {
		if raws[i], err = tx.MarshalBinary(); err != nil {
			return chains.Signed{}, fmt.Errorf("%w: %s forward %q: encode: %v", chains.ErrInvalidForward, b.tk.Ticker, f.ID, err)
		}
	}
	raw, err := json.Marshal(raws)
	if err != nil {
		return chains.Signed{}, fmt.Errorf("%w: %s forward %q: encode: %v", chains.ErrInvalidForward, b.tk.Ticker, f.ID, err)
	}
	return chains.Signed{TxID: txs[len(txs)-len(outs)].Hash().Hex(), Raw: raw}, nil
}

// signer builds and signs one forward's transactions.
type signer struct {
	ctx     chains.SignContext
	b       *Backend
	f       chains.Forward
	signer  types.Signer
	chainID *big.Int
	fee     feeParams
}

// accountElems returns the batch elements that read addr's balance and
// pending nonce into a.
func accountElems(addr common.Address, bal *hexutil.Big, nonce *hexutil.Uint64) []rpc.BatchElem {
	return []rpc.BatchElem{
		{Method: "eth_getBalance", Args: []any{addr, "latest"}, Result: bal},
		{Method: "eth_getTransactionCount", Args: []any{addr, "pending"}, Result: nonce},
	}
}

// callMsg is an eth_call or eth_estimateGas argument.
type callMsg struct {
	From  *common.Address `json:"from,omitempty"`
	To    common.Address  `json:"to"`
	Value *hexutil.Big    `json:"value,omitempty"`
	Data  hexutil.Bytes   `json:"data,omitempty"`
}

// estimateElems returns one eth_estimateGas per message.
func estimateElems(msgs []callMsg, gas []hexutil.Uint64) []rpc.BatchElem {
	elems := make([]rpc.BatchElem, len(msgs))
	for i := range msgs {
		elems[i] = rpc.BatchElem{Method: "eth_estimateGas", Args: []any{msgs[i]}, Result: &gas[i]}
	}
	return elems
}

// gasLimits turns estimates into limits: a plain transfer's 21000 as is,
// anything else with a quarter more. An estimate that reverted means the
// transfer would revert: the forward is invalid.
func (s *signer) gasLimits(ctx context.Context, elems []rpc.BatchElem, gas []hexutil.Uint64) ([]uint64, error) {
	out := make([]uint64, len(gas))
	for i, e := range elems {
		if e.Error != nil {
			var re rpc.Error
			if errors.As(e.Error, &re) && re.ErrorCode() == revertCode {
				return nil, s.b.invalidForward(s.f, "output %d would revert: %s", i, quote(re.Error()))
			}
			return nil, s.b.elemError(ctx, e)
		}
		g := uint64(gas[i])
		switch {
		case g < transferGas || g > 1<<40:
			return nil, s.b.garbage("eth_estimateGas", "%d gas", g)
		case g > transferGas:
			g += g / 4
		}
		out[i] = g
	}
	return out, nil
}

// signingKey is the key a transaction is signed with, and the address it
// must come from.
type signingKey struct {
	ref  chains.KeyRef
	addr common.Address
	// own are the seed's keys the transaction may pay (chains.EVMSignRequest.Own).
	own []chains.KeyRef
}

// tx builds one transaction and has the signer sign it with key; the
// answer must be that transaction, from key's address.
func (s *signer) tx(ctx context.Context, key signingKey, nonce uint64, to common.Address, value *big.Int, gas uint64, data []byte) (*types.Transaction, error) {
	var inner types.TxData
	if s.fee.legacy {
		inner = &types.LegacyTx{Nonce: nonce, GasPrice: s.fee.cap, Gas: gas, To: &to, Value: value, Data: data}
	} else {
		inner = &types.DynamicFeeTx{ChainID: s.chainID, Nonce: nonce, GasTipCap: s.fee.tip, GasFeeCap: s.fee.cap, Gas: gas, To: &to, Value: value, Data: data}
	}
	unsigned := types.NewTx(inner)
	raw, err := unsigned.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("%w: %s forward %q: encode: %v", chains.ErrInvalidForward, s.b.tk.Ticker, s.f.ID, err)
	}
	signed, err := s.b.cfg.Signer.SignEVM(ctx, chains.EVMSignRequest{Context: s.ctx, Tx: raw, ChainID: s.chainID.String(), Key: key.ref, Own: key.own})
	if err != nil {
		return nil, fmt.Errorf("%s forward %q: sign: %w", s.b.tk.Ticker, s.f.ID, err)
	}
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(signed); err != nil {
		return nil, fmt.Errorf("%w: %s forward %q: the signer answered no transaction: %v", chains.ErrSignerUnavailable, s.b.tk.Ticker, s.f.ID, err)
	}
	if s.signer.Hash(tx) != s.signer.Hash(unsigned) {
		return nil, fmt.Errorf("%w: %s forward %q: the signer signed another transaction", chains.ErrSignerUnavailable, s.b.tk.Ticker, s.f.ID)
	}
	if sender, err := types.Sender(s.signer, tx); err != nil || sender != key.addr {
		if key.ref.Operator {
			return nil, fmt.Errorf("%w: %s: %s is not the operator's address", ErrOperatorFunds, s.b.tk.Ticker, key.addr.Hex())
		}
		return nil, s.b.invalidForward(s.f, "%s is not the address of index %d", key.addr.Hex(), key.ref.Index)
	}
	return tx, nil
}

// native signs one value transfer per output.
func (s *signer) native(ctx context.Context, key signingKey, from common.Address, outs []output) ([]*types.Transaction, error) {
	b := s.b
	var (
		bal   hexutil.Big
		nonce hexutil.Uint64
	)
	msgs := make([]callMsg, len(outs))
	sum := new(big.Int)
	for i, o := range outs {
		msgs[i] = callMsg{From: &from, To: o.to, Value: (*hexutil.Big)(o.amount)}
		sum.Add(sum, o.amount)
	}
	gas := make([]hexutil.Uint64, len(outs))
	elems := append(accountElems(from, &bal, &nonce), estimateElems(msgs, gas)...)
	if err := b.batch(ctx, elems); err != nil {
		return nil, err
	}
	for _, e := range elems[:2] {
		if err := b.elemError(ctx, e); err != nil {
			return nil, err
		}
	}
	limits, err := s.gasLimits(ctx, elems[2:], gas)
	if err != nil {
		return nil, err
	}
	var gasTotal uint64
	for _, g := range limits {
		gasTotal += g
	}
	balance := bal.ToInt()
	need := new(big.Int).Add(sum, new(big.Int).Mul(s.fee.cap, new(big.Int).SetUint64(gasTotal)))
	if balance.Cmp(need) < 0 {
		// Lower the fee cap to what is left after the outputs, but not
		// below the base fee: such a transaction could not be included.
		left := new(big.Int).Sub(balance, sum)
		fit := new(big.Int).Div(left, new(big.Int).SetUint64(gasTotal))
		if left.Sign() <= 0 || s.fee.legacy || fit.Cmp(s.fee.base) < 0 || fit.Sign() <= 0 {
			return nil, b.invalidForward(s.f, "balance %s of %s does not cover the outputs (%s) and %d gas at %s per gas",
				wei(balance, b.tk), s.f.From, wei(sum, b.tk), gasTotal, nativeWei(s.fee.cap))
		}
		s.fee.cap = fit
		if s.fee.tip.Cmp(fit) > 0 {
			s.fee.tip = new(big.Int).Set(fit)
		}
	}
	txs := make([]*types.Transaction, len(outs))
	for i, o := range outs {
		if txs[i], err = s.tx(ctx, key, uint64(nonce)+uint64(i), o.to, o.amount, limits[i], nil); err != nil {
			return nil, err
		}
	}
	return txs, nil
}

// token signs the gas top-up (if needed) and one transfer per output.
func (s *signer) token(ctx context.Context, key signingKey, from common.Address, outs []output) ([]*types.Transaction, error) {
	b := s.b
	contract := b.res.contract
	var (
		bal      hexutil.Big
		nonce    hexutil.Uint64
		tokenBal hexutil.Bytes
	)
	msgs := make([]callMsg, len(outs))
	sum := new(big.Int)
	for i, o := range outs {
		msgs[i] = callMsg{From: &from, To: contract, Data: transferData(o.to, o.amount)}
		sum.Add(sum, o.amount)
	}
	gas := make([]hexutil.Uint64, len(outs))
	balanceOf := callMsg{To: contract, Data: append(append([]byte{}, selectorBalanceOf...), common.LeftPadBytes(from.Bytes(), 32)...)}
	elems := append(accountElems(from, &bal, &nonce), rpc.BatchElem{Method: "eth_call", Args: []any{balanceOf, "latest"}, Result: &tokenBal})
	elems = append(elems, estimateElems(msgs, gas)...)
	if err := b.batch(ctx, elems); err != nil {
		return nil, err
	}
	for _, e := range elems[:3] {
		if err := b.elemError(ctx, e); err != nil {
			return nil, err
		}
	}
	if len(tokenBal) != 32 {
		return nil, b.garbage("eth_call", "balanceOf answered %d bytes", len(tokenBal))
	}
	if have := new(big.Int).SetBytes(tokenBal); have.Cmp(sum) < 0 {
		return nil, b.invalidForward(s.f, "token balance %s of %s does not cover the outputs (%s)", wei(have, b.tk), s.f.From, wei(sum, b.tk))
	}
	limits, err := s.gasLimits(ctx, elems[3:], gas)
	if err != nil {
		return nil, err
	}
	var gasTotal uint64
	for _, g := range limits {
		gasTotal += g
	}
	var txs []*types.Transaction
	deficit := new(big.Int).Sub(new(big.Int).Mul(s.fee.cap, new(big.Int).SetUint64(gasTotal)), bal.ToInt())
	if deficit.Sign() > 0 {
		top, err := s.topUp(ctx, from, deficit)
		if err != nil {
			return nil, err
		}
		txs = append(txs, top)
	}
	for i, o := range outs {
		tx, err := s.tx(ctx, key, uint64(nonce)+uint64(i), contract, new(big.Int), limits[i], transferData(o.to, o.amount))
		if err != nil {
			return nil, err
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// topUp signs the operator's transfer of amount (wei) to from.
func (s *signer) topUp(ctx context.Context, from common.Address, amount *big.Int) (*types.Transaction, error) {
	b := s.b
	opAddr, err := b.cfg.Signer.OperatorAddress(ctx, b.tk)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: operator address: %w", ErrOperatorFunds, b.tk.Ticker, err)
	}
	op := common.HexToAddress(opAddr)
	var (
		bal   hexutil.Big
		nonce hexutil.Uint64
	)
	elems := accountElems(op, &bal, &nonce)
	if err := b.batch(ctx, elems); err != nil {
		return nil, err
	}
	for _, e := range elems {
		if err := b.elemError(ctx, e); err != nil {
			return nil, err
		}
	}
	need := new(big.Int).Add(amount, new(big.Int).Mul(s.fee.cap, big.NewInt(transferGas)))
	if bal.ToInt().Cmp(need) < 0 {
		return nil, fmt.Errorf("%w: %s forward %q: %s has %s, the top-up of %s needs %s with its gas",
			ErrOperatorFunds, b.tk.Ticker, s.f.ID, op.Hex(), nativeWei(bal.ToInt()), nativeWei(amount), nativeWei(need))
	}
	// The top-up pays From, a payment address: the seed's own key.
	top := signingKey{ref: chains.KeyRef{Operator: true}, addr: op, own: []chains.KeyRef{{Index: s.f.FromIndex}}}
	return s.tx(ctx, top, uint64(nonce), from, amount, transferGas, nil)
}

// transferData is the call data of transfer(to, amount).
func transferData(to common.Address, amount *big.Int) []byte {
	data := append([]byte{}, selectorTransfer...)
	data = append(data, common.LeftPadBytes(to.Bytes(), 32)...)
	return append(data, common.LeftPadBytes(amount.Bytes(), 32)...)
}

// wei formats base units of the ticker in coin units.
func wei(v *big.Int, tk chains.Ticker) string {
	return decimal.NewFromBigInt(v, -tk.Decimals).String() + " " + tk.Coin
}

// nativeWei formats wei of the network's native coin.
func nativeWei(v *big.Int) string { return v.String() + " wei" }

// Send implements chains.Backend: eth_sendRawTransaction of each
// transaction of s in order. A transaction the node refuses but knows
// (eth_getTransactionByHash: in its mempool or in a block, "already known"
// or "nonce too low" for bytes sent before) counts as sent, so Send is
// idempotent. A refusal of a transaction the node does not know stops
// Send with an error wrapping chains.ErrNode: the transfers of a token
// forward are refused until its gas top-up is in a block, so call Send
// again after the next block. Bytes this backend did not sign wrap
// chains.ErrInvalidForward.
func (b *Backend) Send(ctx context.Context, s chains.Signed) error {
	var raws []hexutil.Bytes
	if err := json.Unmarshal(s.Raw, &raws); err != nil || len(raws) == 0 {
		return fmt.Errorf("%w: %s: not transactions signed by this backend", chains.ErrInvalidForward, b.tk.Ticker)
	}
	for i, raw := range raws {
		tx := new(types.Transaction)
		if err := tx.UnmarshalBinary(raw); err != nil {
			return fmt.Errorf("%w: %s: transaction %d of %d: %v", chains.ErrInvalidForward, b.tk.Ticker, i+1, len(raws), err)
		}
		var got common.Hash
		err := b.call(ctx, &got, "eth_sendRawTransaction", raw)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return err
		}
		var known *txJSON
		kerr := b.call(ctx, &known, "eth_getTransactionByHash", tx.Hash())
		if kerr == nil && known != nil {
			continue
		}
		if kerr == nil && b.nonceTaken(ctx, tx) {
			// Not chains.ErrNeverLands: a node that prunes its transaction
			// index answers null for an old mined transaction too, and
			// later transactions of the forward may have been mined. An
			// operator looks (doc.go).
			return fmt.Errorf("%w: %s: transaction %d of %d, %s: the node does not know it and its nonce %d is used: it was mined long ago (pruned index) or replaced; check the sender's history before signing anew",
				chains.ErrNode, b.tk.Ticker, i+1, len(raws), tx.Hash().Hex(), tx.Nonce())
		}
		return fmt.Errorf("%s: transaction %d of %d, %s: %w", b.tk.Ticker, i+1, len(raws), tx.Hash().Hex(), err)
	}
	return nil
}

// nonceTaken reports whether the sender of tx has a mined transaction
// count beyond tx's nonce.
func (b *Backend) nonceTaken(ctx context.Context, tx *types.Transaction) bool {
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		return false
	}
	var n hexutil.Uint64
	if err := b.call(ctx, &n, "eth_getTransactionCount", from, "latest"); err != nil {
		return false
	}
	return uint64(n) > tx.Nonce()
}
