package bitcoind

import (
	"context"
	"errors"
	"sync"

	"github.com/payhook/payhook/chains"
)

// MaxMempoolDecode bounds how many mempool transactions one Mempool call
// decodes (getrawtransaction): a busy mainnet mempool holds far more than
// a poll should read. The rest are decoded by the next calls, so on a
// node whose mempool grows faster than this per poll a sighting may come
// late, or only with the block (which reports the payment anyway).
const MaxMempoolDecode = 2000

// mempoolBatch is how many getrawtransaction calls share one request.
const mempoolBatch = 100

// mempoolCache is what Mempool remembers of the node's mempool: each
// transaction it decoded, with its outputs to the addresses watched then,
// so each transaction is decoded once while it waits. Transactions that
// left the mempool (mined, replaced, evicted) are forgotten at the next
// call.
type mempoolCache struct {
	mu   sync.Mutex
	seen map[string]mempoolTx
}

// mempoolTx is one decoded mempool transaction.
type mempoolTx struct {
	// outs are its outputs to addresses watched when it was decoded.
	outs []chains.Transfer
	// all: outs holds every standard output (decoded without a filter).
	all bool
}

// Mempool implements chains.MempoolReader: getrawmempool lists the
// transactions waiting, and getrawtransaction (verbose, batched) decodes
// those not decoded by an earlier call, at most MaxMempoolDecode per call.
// Outputs are read as Transfers reads a block's (standard scripts, one
// address, no coinbase), with Height 0. An output to an address first
// watched after its transaction was decoded is reported from its block
// only (payment addresses are handed out before they are paid). A
// transaction that leaves the mempool between the two calls is skipped.
func (b *Backend) Mempool(ctx context.Context, watched func(string) bool) ([]chains.Transfer, error) {
	var ids []string
	if err := b.rpc.Call(ctx, &ids, "getrawmempool"); err != nil {
		return nil, nodeErr("getrawmempool", err)
	}
	c := &b.pool
	c.mu.Lock()
	defer c.mu.Unlock()
	current := make(map[string]mempoolTx, len(ids))
	var todo []string
	for _, id := range ids {
		if !isHash(id) {
			return nil, errors.Join(chains.ErrNode, errors.New("getrawmempool: not a transaction id"))
		}
		if seen, ok := c.seen[id]; ok && (seen.all || watched != nil) {
			current[id] = seen
			continue
		}
		if len(todo) < MaxMempoolDecode {
			todo = append(todo, id)
		}
	}
	for i := 0; i < len(todo); i += mempoolBatch {
		chunk := todo[i:min(i+mempoolBatch, len(todo))]
		txs := make([]verboseTx, len(chunk))
		calls := make([]*Batch, len(chunk))
		for j, id := range chunk {
			calls[j] = &Batch{Method: "getrawtransaction", Params: []any{id, true}, Out: &txs[j]}
		}
		if err := b.rpc.CallBatch(ctx, calls); err != nil {
			return nil, err
		}
		for j, call := range calls {
			var re *RPCError
			if errors.As(call.Err, &re) && (re.Code == codeInvalidAddress || re.Code == codeInvalidParameter) {
				continue // mined or evicted since getrawmempool: no longer waiting
			}
			if call.Err != nil {
				return nil, nodeErr("getrawtransaction", call.Err)
			}
			if txs[j].TxID != chunk[j] {
				return nil, errors.Join(chains.ErrNode, errors.New("getrawtransaction: the node answered another transaction"))
			}
			outs, err := b.txTransfers(txs[j], watched)
			if err != nil {
				return nil, err
			}
			current[chunk[j]] = mempoolTx{outs: outs, all: watched == nil}
		}
	}
	c.seen = current
	var out []chains.Transfer
	for _, id := range ids {
		for _, t := range current[id].outs {
			if watched == nil || watched(t.To) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}
