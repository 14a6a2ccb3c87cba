package jsonrpc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/http"
	"slices"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Backend is an EVM node's JSON-RPC as a chains.Backend for one ticker: a
// native coin (eth, polygon/pol) or an ERC-20 token. It is safe for
// concurrent use.
type Backend struct {
	cfg    Config
	res    resolved
	tk     chains.Ticker
	rpc    *rpc.Client
	client *http.Client
	own    bool // client is ours: Close closes its idle connections

	mu      sync.Mutex
	chainID *big.Int // cached after the first eth_chainId that passed the rule
}

var (
	_ chains.Backend = (*Backend)(nil)
	_ chains.Prober  = (*Backend)(nil)
)

// New returns a Backend for cfg (defaults applied). It does no network I/O;
// Probe checks the node. Errors wrap ErrInvalidConfig.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.WithDefaults()
	res, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, res: res, tk: cfg.Ticker}
	var client http.Client
	if cfg.Client != nil {
		client = *cfg.Client
	} else {
		b.own = true
		client.Timeout = cfg.Timeout
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	client.Transport = limitedTransport{base: base, max: cfg.MaxResponse}
	b.client = &client
	// Over HTTP, DialOptions only builds the client: no I/O, no goroutine.
	c, err := rpc.DialOptions(context.Background(), res.endpoint, rpc.WithHTTPClient(b.client))
	if err != nil {
		return nil, fmt.Errorf("%w: URL: %s", ErrInvalidConfig, quote(err.Error()))
	}
	b.rpc = c
	return b, nil
}

// Close releases the backend's idle connections (when it made its own
// client). The Backend must not be used afterwards.
func (b *Backend) Close() {
	b.rpc.Close()
	if b.own {
		b.client.CloseIdleConnections()
	}
}

// Ticker returns the backend's ticker.
func (b *Backend) Ticker() chains.Ticker { return b.tk }

// Contract returns the token contract the backend watches (Config.Contract
// or Ticker.Contract, EIP-55), "" for a native coin.
func (b *Backend) Contract() string {
	if !b.tk.Token {
		return ""
	}
	return b.res.contract.Hex()
}

// Probe implements chains.Prober: eth_chainId against the configured
// network (see Config.ChainID), web3_clientVersion and eth_blockNumber.
// Errors wrap chains.ErrWrongNetwork or chains.ErrNode.
func (b *Backend) Probe(ctx context.Context) (chains.NodeInfo, error) {
	var (
		id      hexutil.Big
		version string
		height  hexutil.Uint64
	)
	elems := []rpc.BatchElem{
		{Method: "eth_chainId", Result: &id},
		{Method: "web3_clientVersion", Result: &version},
		{Method: "eth_blockNumber", Result: &height},
	}
	if err := b.batch(ctx, elems); err != nil {
		return chains.NodeInfo{}, err
	}
	for _, i := range []int{0, 2} { // the version is optional
		if err := b.elemError(ctx, elems[i]); err != nil {
			return chains.NodeInfo{}, err
		}
	}
	if _, err := b.checkChainID(id.ToInt()); err != nil {
		return chains.NodeInfo{}, err
	}
	if uint64(height) > math.MaxInt64 {
		return chains.NodeInfo{}, b.garbage("eth_blockNumber", "height %d", uint64(height))
	}
	return chains.NodeInfo{Network: id.ToInt().String(), Version: version, Height: int64(height)}, nil
}

// checkChainID checks id against the configured rule and caches it.
func (b *Backend) checkChainID(id *big.Int) (*big.Int, error) {
	if id.Sign() <= 0 || !id.IsUint64() {
		return nil, b.garbage("eth_chainId", "chain id %s", id)
	}
	if err := b.res.chainID.check(id.Uint64()); err != nil {
		return nil, fmt.Errorf("%s on %s at %s: %w", b.tk.Ticker, b.tk.Net, b.res.host, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.chainID = new(big.Int).Set(id)
	return b.chainID, nil
}

// chainIDFor returns the node's chain id, asked once and then cached.
func (b *Backend) chainIDFor(ctx context.Context) (*big.Int, error) {
	b.mu.Lock()
	id := b.chainID
	b.mu.Unlock()
	if id != nil {
		return id, nil
	}
	var got hexutil.Big
	if err := b.call(ctx, &got, "eth_chainId"); err != nil {
		return nil, err
	}
	return b.checkChainID(got.ToInt())
}

// Head implements chains.Backend: the latest block's number and hash.
// Solidified equals Height.
func (b *Backend) Head(ctx context.Context) (chains.Head, error) {
	var h *header
	if err := b.call(ctx, &h, "eth_getBlockByNumber", "latest", false); err != nil {
		return chains.Head{}, err
	}
	if h == nil {
		return chains.Head{}, b.garbage("eth_getBlockByNumber", "no latest block")
	}
	n, err := b.checkHeader(h, "eth_getBlockByNumber", -1)
	if err != nil {
		return chains.Head{}, err
	}
	return chains.Head{Height: n, Solidified: n, Hash: h.Hash.Hex()}, nil
}

// checkRange reports an invalid (after, upTo] range.
func (b *Backend) checkRange(what string, after, upTo int64) error {
	if after < 0 || upTo < after {
		return fmt.Errorf("%w: %s %s after %d up to %d", ErrInvalidRange, b.tk.Ticker, what, after, upTo)
	}
	return nil
}

// beyondTip reports a block the node does not have.
func (b *Backend) beyondTip(what string, n int64) error {
	return fmt.Errorf("%w: %s %s: block %d is beyond the node's tip", ErrInvalidRange, b.tk.Ticker, what, n)
}

// Blocks implements chains.Backend: the headers after..upTo, fetched in
// batches of Config.BatchSize. The parent of block 1 is the genesis hash.
// Errors wrap ErrInvalidRange (also when upTo is beyond the tip) or
// chains.ErrNode.
func (b *Backend) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if err := b.checkRange("blocks", after, upTo); err != nil {
		return nil, err
	}
	out := make([]chains.Block, 0, upTo-after)
	for from := after + 1; from <= upTo; from += int64(b.cfg.BatchSize) {
		to := min(upTo, from+int64(b.cfg.BatchSize)-1)
		hs := make([]*header, to-from+1)
		elems := make([]rpc.BatchElem, len(hs))
		for i := range hs {
			elems[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{blockArg(from + int64(i)), false}, Result: &hs[i]}
		}
		if err := b.batch(ctx, elems); err != nil {
			return nil, err
		}
		for i, h := range hs {
			n := from + int64(i)
			if err := b.elemError(ctx, elems[i]); err != nil {
				return nil, err
			}
			if h == nil {
				return nil, b.beyondTip("blocks", n)
			}
			if _, err := b.checkHeader(h, "eth_getBlockByNumber", n); err != nil {
				return nil, err
			}
			out = append(out, chains.Block{Height: n, Hash: h.Hash.Hex(), Parent: h.ParentHash.Hex()})
		}
	}
	return out, nil
}

// Transfers implements chains.Backend. For a native coin it reads the
// blocks after..upTo with their transactions (batches of Config.BatchSize)
// and reports every transaction with a positive value whose recipient is
// watched, Index 0, whether or not it executed (State tells). For a token
// it reads the contract's Transfer logs (eth_getLogs, at most
// Config.LogRange blocks at a time) and reports those with a positive
// value to a watched address, Index the log's index in its block; a failed
// token transfer emits no log and is never reported. Transfers are in
// block order, then transaction (log) order. Errors wrap ErrInvalidRange
// (also when upTo is beyond the tip) or chains.ErrNode.
func (b *Backend) Transfers(ctx context.Context, after, upTo int64, watched func(address string) bool) ([]chains.Transfer, error) {
	if err := b.checkRange("transfers", after, upTo); err != nil {
		return nil, err
	}
	if after == upTo {
		return nil, nil
	}
	if watched == nil {
		watched = func(string) bool { return true }
	}
	if b.tk.Token {
		return b.tokenTransfers(ctx, after, upTo, watched)
	}
	return b.nativeTransfers(ctx, after, upTo, watched)
}

func (b *Backend) nativeTransfers(ctx context.Context, after, upTo int64, watched func(string) bool) ([]chains.Transfer, error) {
	const method = "eth_getBlockByNumber"
	var out []chains.Transfer
	// The operator's gas address tops payhook's own addresses up for token
	// transfers: those are payhook's, never payments.
	var operator *common.Address
	if b.cfg.Signer != nil {
		if op, err := b.cfg.Signer.OperatorAddress(ctx, b.tk); err == nil {
			a := common.HexToAddress(op)
			operator = &a
		}
	}
	for from := after + 1; from <= upTo; from += int64(b.cfg.BatchSize) {
		to := min(upTo, from+int64(b.cfg.BatchSize)-1)
		blocks := make([]*fullBlock, to-from+1)
		elems := make([]rpc.BatchElem, len(blocks))
		for i := range blocks {
			elems[i] = rpc.BatchElem{Method: method, Args: []any{blockArg(from + int64(i)), true}, Result: &blocks[i]}
		}
		if err := b.batch(ctx, elems); err != nil {
			return nil, err
		}
		for i, blk := range blocks {
			n := from + int64(i)
			if err := b.elemError(ctx, elems[i]); err != nil {
				return nil, err
			}
			if blk == nil {
				return nil, b.beyondTip("transfers", n)
			}
			if _, err := b.checkHeader(&blk.header, method, n); err != nil {
				return nil, err
			}
			for _, tx := range blk.Transactions {
				if tx.Hash == nil || tx.Value == nil {
					return nil, b.garbage(method, "block %d: transaction without hash or value", n)
				}
				if tx.To == nil || tx.Value.ToInt().Sign() <= 0 {
					continue // a contract creation, or no value
				}
				if operator != nil && tx.From != nil && *tx.From == *operator {
					continue // payhook's gas top-up
				}
				to := tx.To.Hex()
				if !watched(to) {
					continue
				}
				out = append(out, chains.Transfer{
					TxID:      tx.Hash.Hex(),
					To:        to,
					Value:     decimal.NewFromBigInt(tx.Value.ToInt(), -b.tk.Decimals),
					Height:    n,
					BlockHash: blk.Hash.Hex(),
				})
			}
		}
	}
	return out, nil
}

func (b *Backend) tokenTransfers(ctx context.Context, after, upTo int64, watched func(string) bool) ([]chains.Transfer, error) {
	var tip hexutil.Uint64
	if err := b.call(ctx, &tip, "eth_blockNumber"); err != nil {
		return nil, err
	}
	if uint64(tip) < uint64(upTo) {
		return nil, b.beyondTip("transfers", upTo)
	}
	var out []chains.Transfer
	for from := after + 1; from <= upTo; {
		to := min(upTo, from+b.cfg.LogRange-1)
		logs, err := b.logs(ctx, from, to)
		if err != nil {
			return nil, err
		}
		for i := range logs {
			l := &logs[i]
			if l.Removed {
				continue
			}
			if l.BlockNumber == nil || l.BlockHash == nil || l.TxHash == nil || l.Index == nil || l.Address == nil {
				return nil, b.garbage("eth_getLogs", "log without block, transaction or index")
			}
			if n := int64(*l.BlockNumber); uint64(*l.BlockNumber) > math.MaxInt64 || n < from || n > to {
				return nil, b.garbage("eth_getLogs", "log of block %d, asked for %d to %d", uint64(*l.BlockNumber), from, to)
			}
			recipient, value, ok := tokenTransfer(l, b.res.contract)
			if !ok || value.Sign() <= 0 || !watched(recipient.Hex()) {
				continue
			}
			if uint64(*l.Index) > math.MaxInt64 {
				return nil, b.garbage("eth_getLogs", "log index %d", uint64(*l.Index))
			}
			out = append(out, chains.Transfer{
				TxID:      l.TxHash.Hex(),
				Index:     int64(*l.Index),
				To:        recipient.Hex(),
				Value:     decimal.NewFromBigInt(value, -b.tk.Decimals),
				Height:    int64(*l.BlockNumber),
				BlockHash: l.BlockHash.Hex(),
			})
		}
		from = to + 1
	}
	slices.SortStableFunc(out, func(x, y chains.Transfer) int {
		if c := cmp.Compare(x.Height, y.Height); c != 0 {
			return c
		}
		return cmp.Compare(x.Index, y.Index)
	})
	return out, nil
}

// logs returns the contract's Transfer logs of blocks from..to. A range
// the node refuses with an error of its own or answers with a body over
// Config.MaxResponse (providers cap the blocks or results of one query)
// is split in halves, down to single blocks; a node that is down or slow
// is not asked again.
func (b *Backend) logs(ctx context.Context, from, to int64) ([]logJSON, error) {
	const method = "eth_getLogs"
	filter := map[string]any{
		"address":   b.res.contract,
		"fromBlock": blockArg(from),
		"toBlock":   blockArg(to),
		"topics":    []any{transferTopic},
	}
	var logs []logJSON
	cctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	err := b.rpc.CallContext(cctx, &logs, method, filter)
	cancel()
	if err == nil {
		return logs, nil
	}
	var refused rpc.Error
	if from == to || ctx.Err() != nil || !(errors.As(err, &refused) || errors.Is(err, errTooLarge)) {
		return nil, b.nodeError(ctx, method, err)
	}
	mid := from + (to-from)/2
	first, err := b.logs(ctx, from, mid)
	if err != nil {
		return nil, err
	}
	second, err := b.logs(ctx, mid+1, to)
	if err != nil {
		return nil, err
	}
	return append(first, second...), nil
}

// State implements chains.Backend from the transaction's receipt: Present
// while the node has the transaction (Confirmations 0 while it waits in
// the mempool); once in a block, Confirmations is the tip's height less
// the block's plus one, Executed is the receipt's status (and, for a
// token, a Transfer log of the contract to t.To in the receipt), and
// Solidified is true. A transaction whose receipt names a block that is no
// longer the canonical one at its height is not Present, nor is one the
// node does not know (reorganised out, or never sent). Errors wrap
// ErrInvalidTxID or chains.ErrNode.
func (b *Backend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	hash, err := txHash(t.TxID)
	if err != nil {
		return chains.TxState{}, err
	}
	var (
		rc  *receiptJSON
		tip hexutil.Uint64
	)
	elems := []rpc.BatchElem{
		{Method: "eth_getTransactionReceipt", Args: []any{hash}, Result: &rc},
		{Method: "eth_blockNumber", Result: &tip},
	}
	if err := b.batch(ctx, elems); err != nil {
		return chains.TxState{}, err
	}
	for _, e := range elems {
		if err := b.elemError(ctx, e); err != nil {
			return chains.TxState{}, err
		}
	}
	if rc == nil {
		// No receipt: waiting in the mempool, or unknown to the node. A
		// transaction in a block whose receipt the node has not indexed
		// yet counts as waiting: never judged on a missing receipt.
		var tx *txJSON
		if err := b.call(ctx, &tx, "eth_getTransactionByHash", hash); err != nil {
			return chains.TxState{}, err
		}
		return chains.TxState{Present: tx != nil}, nil
	}
	if rc.Status == nil || rc.BlockNumber == nil || rc.BlockHash == nil || uint64(*rc.BlockNumber) > math.MaxInt64 {
		return chains.TxState{}, b.garbage("eth_getTransactionReceipt", "receipt without status or block")
	}
	height := int64(*rc.BlockNumber)
	var h *header
	if err := b.call(ctx, &h, "eth_getBlockByNumber", blockArg(height), false); err != nil {
		return chains.TxState{}, err
	}
	if h == nil || h.Hash == nil || *h.Hash != *rc.BlockHash {
		return chains.TxState{}, nil // its block left the canonical chain
	}
	s := chains.TxState{
		Present:       true,
		Confirmations: max(1, int64(tip)-height+1),
		Executed:      *rc.Status == 1,
		Solidified:    true,
	}
	if s.Executed && b.tk.Token {
		s.Executed = false
		for i := range rc.Logs {
			to, v, ok := tokenTransfer(&rc.Logs[i], b.res.contract)
			if ok && v.Sign() > 0 && to.Hex() == common.HexToAddress(t.To).Hex() {
				s.Executed = true
				break
			}
		}
	}
	return s, nil
}

// txHash parses a transaction hash.
func txHash(s string) (common.Hash, error) {
	b, err := hexutil.Decode(s)
	if err != nil || len(b) != common.HashLength {
		return common.Hash{}, fmt.Errorf("%w: %s", ErrInvalidTxID, quote(s))
	}
	return common.BytesToHash(b), nil
}

// NetworkFee implements chains.Backend. For a native coin it is the most
// one transfer's gas may cost at the current fees, 21000 gas at the fee
// cap Sign offers (twice the base fee plus the priority fee; eth_gasPrice
// on a chain without a base fee), in coin units. For a token it is
// Ticker.NetworkFeeEstimate, in token units: the operator pays the gas in
// the native coin and sets that estimate to recover it (see
// docs/decisions.md).
func (b *Backend) NetworkFee(ctx context.Context) (decimal.Decimal, error) {
	if b.tk.Token {
		if err := ctx.Err(); err != nil {
			return decimal.Decimal{}, err
		}
		return b.tk.NetworkFeeEstimate, nil
	}
	f, err := b.fees(ctx)
	if err != nil {
		return decimal.Decimal{}, err
	}
	wei := new(big.Int).Mul(f.cap, big.NewInt(transferGas))
	return decimal.NewFromBigInt(wei, -b.tk.Decimals), nil
}
