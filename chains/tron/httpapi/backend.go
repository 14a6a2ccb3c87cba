package httpapi

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// Genesis block ids of the public networks: what Probe compares the node's
// block 0 with.
const (
	GenesisMainnet = "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc"
	GenesisNile    = "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"
	GenesisShasta  = "0000000000000000de1aa88295e1fcf982742f773e0419c5a9c134c994a9059e"
)

// Backend is a TRON full node's HTTP API as payhook sees it: one ticker
// (trx or one TRC20 token). It implements chains.Backend and
// chains.Prober, keeps no state between calls and is safe for concurrent
// use.
type Backend struct {
	cfg      Config
	ep       endpoint
	contract account // the token's contract; zero for trx
	// pending is what Mempool remembers of the node's pending pool.
	pending pendingCache
}

var (
	_ chains.Backend = (*Backend)(nil)
	_ chains.Prober  = (*Backend)(nil)
)

// New returns a Backend for cfg (after WithDefaults). It does no network
// I/O; errors wrap ErrInvalidConfig.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.WithDefaults()
	ep, err := cfg.endpoint()
	if err != nil {
		return nil, err
	}
	b := &Backend{cfg: cfg, ep: ep}
	if cfg.Ticker.Token {
		if b.contract, err = parseBase58(ep.contract); err != nil {
			return nil, fmt.Errorf("%w: contract: %v", ErrInvalidConfig, err)
		}
	}
	return b, nil
}

// Ticker returns the backend's ticker.
func (b *Backend) Ticker() chains.Ticker { return b.cfg.Ticker }

// Contract returns the token contract the backend watches (base58), ""
// for trx.
func (b *Backend) Contract() string {
	if !b.cfg.Ticker.Token {
		return ""
	}
	return b.contract.String()
}

// nowBlock fetches the head block of the full node or, with solidity, the
// solidified head.
func (b *Backend) nowBlock(ctx context.Context, solidity bool) (block, error) {
	base, path := b.ep.base, "/wallet/getnowblock"
	if solidity {
		base, path = b.ep.solidity, "/walletsolidity/getnowblock"
	}
	var bj blockJSON
	if err := b.post(ctx, base, path, struct{}{}, &bj); err != nil {
		return block{}, err
	}
	blk, found, err := parseBlock(bj)
	if err == nil && !found {
		err = fmt.Errorf("no block")
	}
	if err != nil {
		return block{}, fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
	}
	return blk, nil
}

// Head implements chains.Backend: the full node's head block
// (/wallet/getnowblock) and the solidified one (/walletsolidity/getnowblock).
// The genesis block is "before the first block": at height 0 Hash is "".
func (b *Backend) Head(ctx context.Context) (chains.Head, error) {
	solid, err := b.nowBlock(ctx, true)
	if err != nil {
		return chains.Head{}, err
	}
	tip, err := b.nowBlock(ctx, false)
	if err != nil {
		return chains.Head{}, err
	}
	h := chains.Head{Height: tip.Height, Solidified: min(solid.Height, tip.Height), Hash: tip.ID}
	if tip.Height == 0 {
		h.Hash = ""
	}
	return h, nil
}

// blockByNum fetches one block; found is false beyond the tip.
func (b *Backend) blockByNum(ctx context.Context, num int64) (block, bool, error) {
	var bj blockJSON
	if err := b.post(ctx, b.ep.base, "/wallet/getblockbynum", map[string]int64{"num": num}, &bj); err != nil {
		return block{}, false, err
	}
	blk, found, err := parseBlock(bj)
	if err == nil && found && blk.Height != num {
		err = fmt.Errorf("asked for block %d, got %d", num, blk.Height)
	}
	if err != nil {
		return block{}, false, fmt.Errorf("%w: tron /wallet/getblockbynum: %v", chains.ErrNode, err)
	}
	return blk, found, nil
}

// blocks fetches the blocks after..upTo with getblockbylimitnext, in
// batches, and checks that they form one chain: a reorganisation between
// two batches is reported (wrapping chains.ErrNode) rather than mixed in.
func (b *Backend) blocks(ctx context.Context, after, upTo int64) ([]block, error) {
	if after < 0 || upTo < after {
		return nil, fmt.Errorf("%w: after %d up to %d", ErrInvalidRange, after, upTo)
	}
	const path = "/wallet/getblockbylimitnext"
	out := make([]block, 0, min(upTo-after, 1024))
	for start := after + 1; start <= upTo; {
		end := min(start+int64(b.cfg.BatchBlocks), upTo+1) // exclusive
		var resp struct {
			Block []blockJSON `json:"block"`
		}
		if err := b.post(ctx, b.ep.base, path, map[string]int64{"startNum": start, "endNum": end}, &resp); err != nil {
			return nil, err
		}
		for i, bj := range resp.Block {
			blk, found, err := parseBlock(bj)
			if err == nil && (!found || blk.Height != start+int64(i)) {
				err = fmt.Errorf("asked for blocks %d to %d, block %d of the answer is %d", start, end-1, i, blk.Height)
			}
			if err == nil && len(out) > 0 && blk.Parent != out[len(out)-1].ID {
				err = fmt.Errorf("block %d does not follow block %d (the chain changed while it was read)", blk.Height, blk.Height-1)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: tron %s: %v", chains.ErrNode, path, err)
			}
			out = append(out, blk)
		}
		if got := int64(len(resp.Block)); got < end-start {
			return nil, fmt.Errorf("%w: after %d up to %d: the node's tip is %d", ErrInvalidRange, after, upTo, start+got-1)
		}
		start = end
	}
	return out, nil
}

// Blocks implements chains.Backend. Block 1's Parent is "" (the genesis
// block is not reported, as Head reports no hash at height 0). Errors wrap
// ErrInvalidRange for a range beyond the tip and chains.ErrNode for the
// node's failures.
func (b *Backend) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	bs, err := b.blocks(ctx, after, upTo)
	if err != nil {
		return nil, err
	}
	out := make([]chains.Block, len(bs))
	for i, blk := range bs {
		out[i] = chains.Block{Height: blk.Height, Hash: blk.ID, Parent: blk.Parent}
		if blk.Height == 1 {
			out[i].Parent = ""
		}
	}
	return out, nil
}

// Transfers implements chains.Backend. For trx: the TransferContract
// transactions of the blocks to watched addresses, Index 0, failed ones
// included (State reports them not executed). For a token: the Transfer
// logs of the contract in successful transactions
// (gettransactioninfobyblocknum, asked only for blocks with a contract
// call), Index being the log's position in its transaction's logs; a
// transfer of 0 is left out (it moves nothing; address-poisoning spam
// sends them).
func (b *Backend) Transfers(ctx context.Context, after, upTo int64, watched func(address string) bool) ([]chains.Transfer, error) {
	bs, err := b.blocks(ctx, after, upTo)
	if err != nil {
		return nil, err
	}
	dec := b.cfg.Ticker.Decimals
	var out []chains.Transfer
	// The operator's address tops payhook's own addresses up for token
	// transfers: those are payhook's, never payments.
	operator := ""
	if b.cfg.Signer != nil {
		operator, _ = b.cfg.Signer.OperatorAddress(ctx, b.cfg.Ticker)
	}
	for _, blk := range bs {
		if !b.cfg.Ticker.Token {
			for _, tx := range blk.Txs {
				if tx.Type != "TransferContract" || (operator != "" && tx.Owner.String() == operator) {
					continue
				}
				to := tx.To.String()
				if watched == nil || watched(to) {
					out = append(out, chains.Transfer{TxID: tx.ID, To: to, Value: decimal.New(tx.Amount, -dec), Height: blk.Height, BlockHash: blk.ID})
				}
			}
			continue
		}
		infos, err := b.blockInfos(ctx, blk)
		if err != nil {
			return nil, err
		}
		for _, tx := range blk.Txs {
			in, ok := infos[tx.ID]
			if !ok {
				continue
			}
			ts, err := in.tokenTransfers(b.contract)
			if err != nil {
				return nil, fmt.Errorf("%w: tron block %d: %v", chains.ErrNode, blk.Height, err)
			}
			for _, tt := range ts {
				to := tt.To.String()
				if tt.Value.Sign() == 0 || (watched != nil && !watched(to)) {
					continue
				}
				out = append(out, chains.Transfer{TxID: tx.ID, Index: tt.Index, To: to, Value: decimal.NewFromBigInt(tt.Value, -dec), Height: blk.Height, BlockHash: blk.ID})
			}
		}
	}
	return out, nil
}

// blockInfos returns the transaction infos of blk's contract calls, by
// transaction id; none when blk has no contract call. It checks that the
// infos belong to blk (a reorganisation between the two requests is an
// error wrapping chains.ErrNode).
func (b *Backend) blockInfos(ctx context.Context, blk block) (map[string]infoJSON, error) {
	calls := map[string]bool{}
	for _, tx := range blk.Txs {
		if tx.Type == "TriggerSmartContract" || tx.Type == "CreateSmartContract" {
			calls[tx.ID] = true
		}
	}
	if len(calls) == 0 {
		return nil, nil
	}
	const path = "/wallet/gettransactioninfobyblocknum"
	var infos []infoJSON
	if err := b.post(ctx, b.ep.base, path, map[string]int64{"num": blk.Height}, &infos); err != nil {
		return nil, err
	}
	inBlock := map[string]bool{}
	for _, tx := range blk.Txs {
		inBlock[tx.ID] = true
	}
	out := make(map[string]infoJSON, len(infos))
	for _, in := range infos {
		id := normHash(in.ID)
		if in.BlockNumber != blk.Height || !inBlock[id] {
			return nil, fmt.Errorf("%w: tron %s %d: transaction %s is not in block %s (the chain changed while it was read)",
				chains.ErrNode, path, blk.Height, clip(in.ID), blk.ID)
		}
		out[id] = in
	}
	for id := range calls {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("%w: tron %s %d: no info for contract call %s", chains.ErrNode, path, blk.Height, id)
		}
	}
	return out, nil
}

// txInfo fetches a transaction's info from the full node or, with
// solidity, from the solidified chain; found is false when the node has
// none (not in a block, or not solidified).
func (b *Backend) txInfo(ctx context.Context, txid string, solidity bool) (infoJSON, bool, error) {
	base, path := b.ep.base, "/wallet/gettransactioninfobyid"
	if solidity {
		base, path = b.ep.solidity, "/walletsolidity/gettransactioninfobyid"
	}
	var in infoJSON
	if err := b.post(ctx, base, path, map[string]string{"value": txid}, &in); err != nil {
		return infoJSON{}, false, err
	}
	if in.ID == "" {
		return infoJSON{}, false, nil
	}
	if normHash(in.ID) != txid || in.BlockNumber < 1 {
		return infoJSON{}, false, fmt.Errorf("%w: tron %s: asked for %s, got %s in block %d", chains.ErrNode, path, txid, clip(in.ID), in.BlockNumber)
	}
	return in, true, nil
}

// known reports whether the node has txid in a block or in its pending
// pool (gettransactionbyid, gettransactionfrompending).
func (b *Backend) known(ctx context.Context, txid string) (inBlock, pending bool, err error) {
	for i, path := range []string{"/wallet/gettransactionbyid", "/wallet/gettransactionfrompending"} {
		var tj txJSON
		if err := b.post(ctx, b.ep.base, path, map[string]string{"value": txid}, &tj); err != nil {
			return false, false, err
		}
		if normHash(tj.TxID) == txid {
			return i == 0, i == 1, nil
		}
	}
	return false, false, nil
}

// State implements chains.Backend. A transaction in no block is Present
// only while the node holds it pending (0 confirmations). In a block, the
// block at its height must still contain it (else it was reorganised out:
// not Present); Confirmations is the depth; Executed requires a
// successful result (TRX: contractRet SUCCESS; tokens: a SUCCESS receipt
// and, at t.Index, a Transfer log of the contract to t.To); Solidified
// requires the block at or below the solidified head and the receipt
// from /walletsolidity, which then decides Executed.
func (b *Backend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	txid := normHash(t.TxID)
	if !isHex64(txid) {
		return chains.TxState{}, nil // no such transaction can exist
	}
	head, err := b.Head(ctx)
	if err != nil {
		return chains.TxState{}, err
	}
	in, found, err := b.txInfo(ctx, txid, false)
	if err != nil {
		return chains.TxState{}, err
	}
	if !found {
		inBlock, pending, err := b.known(ctx, txid)
		if err != nil {
			return chains.TxState{}, err
		}
		// In a block whose infos the node has not written yet: counted
		// from the next call.
		return chains.TxState{Present: inBlock || pending}, nil
	}
	h := in.BlockNumber
	if h > head.Height {
		return chains.TxState{Present: true}, nil // in a block newer than the head read
	}
	blk, ok, err := b.blockByNum(ctx, h)
	if err != nil || !ok {
		return chains.TxState{}, err
	}
	var tx *blockTx
	for i := range blk.Txs {
		if blk.Txs[i].ID == txid {
			tx = &blk.Txs[i]
		}
	}
	if tx == nil {
		return chains.TxState{}, nil // the node's info outlived a reorganisation
	}
	s := chains.TxState{Present: true, Confirmations: head.Height - h + 1}
	if h <= head.Solidified {
		sin, found, err := b.txInfo(ctx, txid, true)
		if err != nil {
			return chains.TxState{}, err
		}
		if found && sin.BlockNumber == h {
			s.Solidified, in = true, sin
		}
	}
	if s.Executed, err = b.executed(in, *tx, t); err != nil {
		return chains.TxState{}, err
	}
	return s, nil
}

// executed judges a transaction's execution from its info and its entry in
// the block.
func (b *Backend) executed(in infoJSON, tx blockTx, t chains.Transfer) (bool, error) {
	if !b.cfg.Ticker.Token {
		return tx.Type == "TransferContract" && tx.Ret == "SUCCESS" && in.succeeded(false), nil
	}
	if tx.Ret != "SUCCESS" {
		return false, nil
	}
	ts, err := in.tokenTransfers(b.contract)
	if err != nil {
		return false, fmt.Errorf("%w: tron transaction %s: %v", chains.ErrNode, tx.ID, err)
	}
	for _, tt := range ts {
		if tt.Index == t.Index && (t.To == "" || tt.To.String() == t.To) {
			return true, nil
		}
	}
	return false, nil
}

// chainParams fetches /wallet/getchainparameters.
func (b *Backend) chainParams(ctx context.Context) (chainParamsJSON, error) {
	var p chainParamsJSON
	err := b.post(ctx, b.ep.base, "/wallet/getchainparameters", struct{}{}, &p)
	return p, err
}

// fees are the chain's prices, in sun.
type fees struct {
	perByte   int64 // getTransactionFee: sun per byte of bandwidth
	perEnergy int64 // getEnergyFee: sun per unit of energy
}

func (b *Backend) fees(ctx context.Context) (fees, error) {
	p, err := b.chainParams(ctx)
	if err != nil {
		return fees{}, err
	}
	perByte, ok1 := p.param("getTransactionFee")
	perEnergy, ok2 := p.param("getEnergyFee")
	if !ok1 || !ok2 || perByte < 0 || perEnergy < 0 || perByte > 1e9 || perEnergy > 1e9 {
		return fees{}, fmt.Errorf("%w: tron /wallet/getchainparameters: no usable getTransactionFee and getEnergyFee", chains.ErrNode)
	}
	return fees{perByte: perByte, perEnergy: perEnergy}, nil
}

// NetworkFee implements chains.Backend. For trx: the bandwidth of one
// transfer (DefaultTransferBytes) at the chain's getTransactionFee, burnt
// from the payment address (free bandwidth is not counted on). For a
// token the cost is TRX the operator pays, which only a price converts
// into the token: the ticker's NetworkFeeEstimate.
func (b *Backend) NetworkFee(ctx context.Context) (decimal.Decimal, error) {
	if b.cfg.Ticker.Token {
		if err := ctx.Err(); err != nil {
			return decimal.Decimal{}, err
		}
		return b.cfg.Ticker.NetworkFeeEstimate, nil
	}
	f, err := b.fees(ctx)
	if err != nil {
		return decimal.Decimal{}, err
	}
	return decimal.New(f.perByte*DefaultTransferBytes, -b.cfg.Ticker.Decimals), nil
}

// Probe implements chains.Prober: the network is told by the genesis
// block's id (mainnet, the Nile and Shasta testnets; any other is a
// private network, which is what Regtest means for TRON), the version by
// /wallet/getnodeinfo, the height by Head. Errors wrap
// chains.ErrWrongNetwork when the network is not the ticker's Net.
func (b *Backend) Probe(ctx context.Context) (chains.NodeInfo, error) {
	g, found, err := b.blockByNum(ctx, 0)
	if err != nil {
		return chains.NodeInfo{}, err
	}
	if !found {
		return chains.NodeInfo{}, fmt.Errorf("%w: tron node has no genesis block", chains.ErrNode)
	}
	var network string
	var net chains.Net
	switch g.ID {
	case GenesisMainnet:
		network, net = "mainnet", chains.Mainnet
	case GenesisNile:
		network, net = "nile", chains.Testnet
	case GenesisShasta:
		network, net = "shasta", chains.Testnet
	default:
		network, net = "private", chains.Regtest
	}
	want := b.cfg.Ticker.Net
	if want == "" {
		want = chains.Mainnet
	}
	if net != want {
		return chains.NodeInfo{}, fmt.Errorf("%w: %s is configured for %s, the node's genesis block %s is %s's",
			chains.ErrWrongNetwork, b.cfg.Ticker.Ticker, want, g.ID, network)
	}
	head, err := b.Head(ctx)
	if err != nil {
		return chains.NodeInfo{}, err
	}
	info := chains.NodeInfo{Network: network, Height: head.Height}
	var ni nodeInfoJSON
	// The version is a courtesy: some providers do not serve getnodeinfo.
	if b.post(ctx, b.ep.base, "/wallet/getnodeinfo", struct{}{}, &ni) == nil && ni.ConfigNodeInfo.CodeVersion != "" {
		info.Version = "java-tron " + strings.TrimSpace(clip(ni.ConfigNodeInfo.CodeVersion))
	}
	return info, nil
}
