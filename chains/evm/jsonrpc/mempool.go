package jsonrpc

import (
	"bytes"
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

var _ chains.MempoolReader = (*Backend)(nil)

// pendingBlock is eth_getBlockByNumber("pending", true), the parts
// Mempool reads.
type pendingBlock struct {
	Transactions []pendingTx `json:"transactions"`
}

// pendingTx is a transaction of the pending block, with its call data.
type pendingTx struct {
	Hash  *common.Hash    `json:"hash"`
	From  *common.Address `json:"from"`
	To    *common.Address `json:"to"`
	Value *hexutil.Big    `json:"value"`
	Input hexutil.Bytes   `json:"input"`
}

// selectorTransferFrom is the 4-byte selector of ERC-20
// transferFrom(address,address,uint256).
var selectorTransferFrom = []byte{0x23, 0xb8, 0x72, 0xdd}

// Mempool implements chains.MempoolReader with the node's pending block
// (eth_getBlockByNumber("pending", true)): for a native coin, each
// transaction with value to a watched address (not the operator's gas
// top-ups), as Transfers reads a block's; for a token, each call of the
// contract's transfer(to, amount) or transferFrom(from, to, amount) to a
// watched address, read from the call data because no log exists before
// execution (so a call that will fail is reported too; Index is 0). A
// node that answers "pending" with its latest block reports transactions
// already mined, which the caller knows as payments; one that serves no
// pending block reports nothing.
func (b *Backend) Mempool(ctx context.Context, watched func(string) bool) ([]chains.Transfer, error) {
	var blk *pendingBlock
	if err := b.call(ctx, &blk, "eth_getBlockByNumber", "pending", true); err != nil {
		return nil, err
	}
	if blk == nil {
		return nil, nil
	}
	if watched == nil {
		watched = func(string) bool { return true }
	}
	var operator *common.Address
	if b.cfg.Signer != nil {
		if op, err := b.cfg.Signer.OperatorAddress(ctx, b.tk); err == nil {
			a := common.HexToAddress(op)
			operator = &a
		}
	}
	var out []chains.Transfer
	for _, tx := range blk.Transactions {
		if tx.Hash == nil || tx.To == nil {
			continue // a contract creation, or not a transaction object
		}
		if b.tk.Token {
			if *tx.To != b.res.contract {
				continue
			}
			to, amount, ok := tokenCall(tx.Input)
			if !ok || amount.Sign() <= 0 || !watched(to.Hex()) {
				continue
			}
			out = append(out, chains.Transfer{TxID: tx.Hash.Hex(), To: to.Hex(), Value: decimal.NewFromBigInt(amount, -b.tk.Decimals)})
			continue
		}
		if tx.Value == nil || tx.Value.ToInt().Sign() <= 0 {
			continue
		}
		if operator != nil && tx.From != nil && *tx.From == *operator {
			continue // payhook's gas top-up
		}
		if to := tx.To.Hex(); watched(to) {
			out = append(out, chains.Transfer{TxID: tx.Hash.Hex(), To: to, Value: decimal.NewFromBigInt(tx.Value.ToInt(), -b.tk.Decimals)})
		}
	}
	return out, nil
}

// tokenCall decodes ERC-20 transfer(to, amount) and transferFrom(from, to,
// amount) call data: the recipient and amount. ok is false for any other
// call, or arguments that are not a left-padded address and a uint256.
func tokenCall(data []byte) (to common.Address, amount *big.Int, ok bool) {
	if len(data) < 4 {
		return to, nil, false
	}
	var words [][]byte
	switch sel := data[:4]; {
	case bytes.Equal(sel, selectorTransfer) && len(data) == 4+64:
		words = [][]byte{data[4:36], data[36:68]}
	case bytes.Equal(sel, selectorTransferFrom) && len(data) == 4+96:
		words = [][]byte{data[36:68], data[68:100]}
	default:
		return to, nil, false
	}
	if !bytes.Equal(words[0][:12], make([]byte, 12)) {
		return to, nil, false
	}
	return common.BytesToAddress(words[0][12:]), new(big.Int).SetBytes(words[1]), true
}
