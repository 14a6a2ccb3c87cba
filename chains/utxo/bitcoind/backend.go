package bitcoind

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/utxo"
)

// Defaults of Config.
const (
	// DefaultTimeout bounds one node request.
	DefaultTimeout = 10 * time.Second
	// DefaultConfTarget is the estimatesmartfee target, in blocks.
	DefaultConfTarget = 6
	// MaxBlocksPerBatch bounds the blocks one batch of getblock asks for.
	MaxBlocksPerBatch = 20
)

// DefaultFallbackFee is the fee rate (coin per 1000 virtual bytes) a
// forward pays when the node has no estimate (always on regtest, and on a
// node that has just started). Operators change it with
// --fallback-fee TICKER=RATE.
var DefaultFallbackFee = map[string]decimal.Decimal{
	"btc":  decimal.RequireFromString("0.0002"), // 20 sat/vB
	"ltc":  decimal.RequireFromString("0.0001"), // 10 lit/vB
	"bch":  decimal.RequireFromString("0.00001"),
	"doge": decimal.RequireFromString("0.01"),
}

// Config configures a Backend.
type Config struct {
	// Ticker is the UTXO ticker, with the node's network in Ticker.Net.
	Ticker chains.Ticker
	// URL is the node's JSON-RPC endpoint, credentials in the userinfo:
	// http://user:pass@127.0.0.1:19443/ (a /wallet/NAME path is kept; no
	// wallet is needed). Options in the query are read by ParseNodeURL,
	// not here.
	URL string
	// Signer signs forwards (chains.Signer: the process's own keys, or a
	// remote signer); nil makes the backend watch-only, unless Keys is set.
	Signer chains.Signer
	// Keys, when Signer is nil, signs through keysign.New(Keys).
	Keys *chains.Keys
	// Client is the HTTP client; nil builds one with Timeout.
	Client *http.Client
	// Timeout bounds one request (DefaultTimeout when zero).
	Timeout time.Duration
	// FallbackFee is the fee rate in coin per 1000 vbytes used when the
	// node has no estimate; zero means DefaultFallbackFee of the ticker.
	FallbackFee decimal.Decimal
	// ConfTarget is estimatesmartfee's target (DefaultConfTarget when 0).
	ConfTarget int
	// ChangeAddress receives a forward's change (the service fee); ""
	// means the signer's OperatorAddress.
	ChangeAddress string
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Signer == nil && c.Keys != nil {
		c.Signer = keysign.New(c.Keys)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.FallbackFee.IsZero() {
		c.FallbackFee = DefaultFallbackFee[c.Ticker.Network]
	}
	if c.ConfTarget == 0 {
		c.ConfTarget = DefaultConfTarget
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.Timeout}
	}
	return c
}

// Validate names the first field that is wrong.
func (c Config) Validate() error {
	if c.Ticker.Family != chains.FamilyUTXO {
		return fmt.Errorf("bitcoind: ticker %q is not of the utxo family", c.Ticker.Ticker)
	}
	if _, ok := utxo.Params(c.Ticker); !ok {
		return fmt.Errorf("bitcoind: ticker %q: unsupported network", c.Ticker.Ticker)
	}
	if _, err := NewClient(c.URL, nil); err != nil {
		return fmt.Errorf("bitcoind %s: %w", c.Ticker.Ticker, err)
	}
	if i := strings.IndexByte(c.URL, '?'); i >= 0 && c.URL[i+1:] != "" {
		return fmt.Errorf("bitcoind %s: node URL: UTXO nodes take no options (only network=, which the server reads)", c.Ticker.Ticker)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("bitcoind %s: timeout must not be negative", c.Ticker.Ticker)
	}
	if c.FallbackFee.Sign() < 0 || c.FallbackFee.GreaterThan(decimal.NewFromInt(1)) {
		return fmt.Errorf("bitcoind %s: fallback fee %s: want 0 to 1 coin per 1000 vbytes", c.Ticker.Ticker, c.FallbackFee)
	}
	if c.ConfTarget < 0 || c.ConfTarget > 1008 {
		return fmt.Errorf("bitcoind %s: conf target %d: want 1 to 1008", c.Ticker.Ticker, c.ConfTarget)
	}
	if c.ChangeAddress != "" {
		if err := chains.ValidateAddress(c.Ticker, c.ChangeAddress); err != nil {
			return fmt.Errorf("bitcoind %s: change address: %w", c.Ticker.Ticker, err)
		}
	}
	return nil
}

// Backend is a chains.Backend over a bitcoind-compatible node's JSON-RPC.
// It is safe for concurrent use.
type Backend struct {
	cfg    Config
	rpc    *Client
	params *chaincfg.Params
	// pool is what Mempool remembers of the node's mempool.
	pool mempoolCache
}

var (
	_ chains.Backend   = (*Backend)(nil)
	_ chains.Prober    = (*Backend)(nil)
	_ chains.FeeQuoter = (*Backend)(nil)

	_ chains.MempoolReader = (*Backend)(nil)
)

// New returns a Backend. It does no I/O.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rpc, err := NewClient(cfg.URL, cfg.Client)
	if err != nil {
		return nil, err
	}
	params, _ := utxo.Params(cfg.Ticker)
	return &Backend{cfg: cfg, rpc: rpc, params: params}, nil
}

// RPC returns the backend's JSON-RPC client.
func (b *Backend) RPC() *Client { return b.rpc }

// chainNames maps a Net to getblockchaininfo's "chain".
var chainNames = map[chains.Net]string{"": "main", chains.Mainnet: "main", chains.Testnet: "test", chains.Regtest: "regtest"}

// Probe implements chains.Prober: getblockchaininfo's chain must be the
// ticker's network, and the transaction index must be on (State finds any
// transaction with it).
func (b *Backend) Probe(ctx context.Context) (chains.NodeInfo, error) {
	var info struct {
		Chain         string `json:"chain"`
		Blocks        int64  `json:"blocks"`
		BestBlockHash string `json:"bestblockhash"`
	}
	if err := b.rpc.Call(ctx, &info, "getblockchaininfo"); err != nil {
		return chains.NodeInfo{}, nodeErr("getblockchaininfo", err)
	}
	want := chainNames[b.cfg.Ticker.Net]
	if info.Chain != want {
		return chains.NodeInfo{}, fmt.Errorf("%w: %s node at %s is on %q, but %s is configured for %s (%q)",
			chains.ErrWrongNetwork, b.cfg.Ticker.Ticker, b.rpc.Endpoint(), info.Chain, b.cfg.Ticker.Ticker, b.cfg.Ticker.Net, want)
	}
	var netInfo struct {
		Subversion string `json:"subversion"`
	}
	_ = b.rpc.Call(ctx, &netInfo, "getnetworkinfo")
	var idx map[string]struct {
		Synced bool `json:"synced"`
	}
	err := b.rpc.Call(ctx, &idx, "getindexinfo", "txindex")
	var re *RPCError
	switch {
	case errors.As(err, &re) && re.Code == codeMethodNotFound:
		// Older nodes (Dogecoin Core 1.14) lack getindexinfo: State then
		// relies on getrawtransaction failing without -txindex.
	case err != nil:
		return chains.NodeInfo{}, nodeErr("getindexinfo", err)
	case len(idx) == 0:
		return chains.NodeInfo{}, fmt.Errorf("%w: %s node at %s runs without -txindex=1, which payhook needs to follow its payments' transactions", chains.ErrNode, b.cfg.Ticker.Ticker, b.rpc.Endpoint())
	}
	return chains.NodeInfo{Network: info.Chain, Version: strings.Trim(netInfo.Subversion, "/"), Height: info.Blocks}, nil
}

// nodeErr wraps err so that it names the call and wraps chains.ErrNode.
func nodeErr(method string, err error) error {
	if errors.Is(err, chains.ErrNode) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", chains.ErrNode, method, err)
}

// Head implements chains.Backend (getblockchaininfo).
func (b *Backend) Head(ctx context.Context) (chains.Head, error) {
	var info struct {
		Blocks        *int64 `json:"blocks"`
		BestBlockHash string `json:"bestblockhash"`
	}
	if err := b.rpc.Call(ctx, &info, "getblockchaininfo"); err != nil {
		return chains.Head{}, nodeErr("getblockchaininfo", err)
	}
	if info.Blocks == nil || *info.Blocks < 0 || !isHash(info.BestBlockHash) {
		return chains.Head{}, fmt.Errorf("%w: getblockchaininfo: no height or best block hash", chains.ErrNode)
	}
	return chains.Head{Height: *info.Blocks, Solidified: *info.Blocks, Hash: info.BestBlockHash}, nil
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// checkRange validates a block range against the tip.
func (b *Backend) checkRange(ctx context.Context, after, upTo int64) error {
	if after < 0 || upTo < after {
		return fmt.Errorf("%w: blocks (%d, %d]: invalid range", chains.ErrNode, after, upTo)
	}
	h, err := b.Head(ctx)
	if err != nil {
		return err
	}
	if upTo > h.Height {
		return fmt.Errorf("%w: blocks (%d, %d]: beyond the tip %d", chains.ErrNode, after, upTo, h.Height)
	}
	return nil
}

// blockHashes returns the best chain's hashes of heights from..to.
func (b *Backend) blockHashes(ctx context.Context, from, to int64) ([]string, error) {
	calls := make([]*Batch, 0, to-from+1)
	out := make([]string, to-from+1)
	for h := from; h <= to; h++ {
		calls = append(calls, &Batch{Method: "getblockhash", Params: []any{h}, Out: &out[h-from]})
	}
	if err := b.rpc.CallBatch(ctx, calls); err != nil {
		return nil, err
	}
	for i, c := range calls {
		if c.Err != nil {
			return nil, nodeErr("getblockhash", c.Err)
		}
		if !isHash(out[i]) {
			return nil, fmt.Errorf("%w: getblockhash %d: not a block hash", chains.ErrNode, from+int64(i))
		}
	}
	return out, nil
}

// verboseBlock is getblock's verbosity-2 answer, the parts payhook reads.
type verboseBlock struct {
	Hash              string      `json:"hash"`
	Height            int64       `json:"height"`
	PreviousBlockHash string      `json:"previousblockhash"`
	Confirmations     int64       `json:"confirmations"`
	Tx                []verboseTx `json:"tx"`
}

// verboseTx is a decoded transaction, as getblock (verbosity 2) and
// getrawtransaction (verbose) print it: the parts payhook reads.
type verboseTx struct {
	TxID string `json:"txid"`
	Vin  []struct {
		Coinbase string `json:"coinbase"`
	} `json:"vin"`
	Vout []struct {
		Value        json.Number `json:"value"`
		N            *int64      `json:"n"`
		ScriptPubKey struct {
			Hex string `json:"hex"`
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

// Transfers implements chains.Backend: getblockhash and getblock
// (verbosity 2) for each block of the range, batched. Every output whose
// script pays a single address the watched function accepts (all, when
// nil) is a transfer; coinbase outputs are not (they mature only after 100
// blocks; payhook does not accept mining rewards as payments).
func (b *Backend) Transfers(ctx context.Context, after, upTo int64, watched func(string) bool) ([]chains.Transfer, error) {
	if err := b.checkRange(ctx, after, upTo); err != nil {
		return nil, err
	}
	var out []chains.Transfer
	for from := after + 1; from <= upTo; from += MaxBlocksPerBatch {
		to := min(upTo, from+MaxBlocksPerBatch-1)
		hashes, err := b.blockHashes(ctx, from, to)
		if err != nil {
			return nil, err
		}
		blocks := make([]verboseBlock, len(hashes))
		calls := make([]*Batch, len(hashes))
		for i, h := range hashes {
			calls[i] = &Batch{Method: "getblock", Params: []any{h, 2}, Out: &blocks[i]}
		}
		if err := b.rpc.CallBatch(ctx, calls); err != nil {
			return nil, err
		}
		for i, blk := range blocks {
			height := from + int64(i)
			if err := calls[i].Err; err != nil {
				return nil, nodeErr("getblock", err)
			}
			if blk.Hash != hashes[i] || blk.Height != height {
				return nil, fmt.Errorf("%w: getblock %s: the node answered block %s at height %d", chains.ErrNode, hashes[i], blk.Hash, blk.Height)
			}
			if blk.Confirmations < 1 {
				// The block left the best chain between the two calls.
				return nil, fmt.Errorf("%w: block %d changed while it was read", chains.ErrNode, height)
			}
			ts, err := b.blockTransfers(blk, watched)
			if err != nil {
				return nil, err
			}
			out = append(out, ts...)
		}
	}
	return out, nil
}

func (b *Backend) blockTransfers(blk verboseBlock, watched func(string) bool) ([]chains.Transfer, error) {
	var out []chains.Transfer
	for _, tx := range blk.Tx {
		ts, err := b.txTransfers(tx, watched)
		if err != nil {
			return nil, fmt.Errorf("block %s: %w", blk.Hash, err)
		}
		for i := range ts {
			ts[i].Height, ts[i].BlockHash = blk.Height, blk.Hash
		}
		out = append(out, ts...)
	}
	return out, nil
}

// txTransfers returns the outputs of tx that pay one standard address
// watched accepts (all, when nil), without a block; none for a coinbase.
// Errors wrap chains.ErrNode.
func (b *Backend) txTransfers(tx verboseTx, watched func(string) bool) ([]chains.Transfer, error) {
	if len(tx.Vin) > 0 && tx.Vin[0].Coinbase != "" {
		return nil, nil
	}
	if !isHash(tx.TxID) {
		return nil, fmt.Errorf("%w: a transaction without a valid txid", chains.ErrNode)
	}
	var out []chains.Transfer
	for _, o := range tx.Vout {
		if o.N == nil {
			return nil, fmt.Errorf("%w: transaction %s: an output without n", chains.ErrNode, tx.TxID)
		}
		if *o.N < 0 || *o.N > math.MaxUint32 {
			return nil, fmt.Errorf("%w: transaction %s: output n %d is not an output index", chains.ErrNode, tx.TxID, *o.N)
		}
		addr, ok := b.scriptAddress(o.ScriptPubKey.Hex)
		if !ok || (watched != nil && !watched(addr)) {
			continue
		}
		v, err := decimal.NewFromString(o.Value.String())
		if err != nil || v.Sign() <= 0 || !v.Shift(b.cfg.Ticker.Decimals).IsInteger() {
			if err == nil && v.Sign() == 0 {
				continue
			}
			return nil, fmt.Errorf("%w: transaction %s output %d: value %q", chains.ErrNode, tx.TxID, *o.N, o.Value)
		}
		out = append(out, chains.Transfer{TxID: tx.TxID, Index: *o.N, To: addr, Value: v})
	}
	return out, nil
}

// scriptAddress returns the one address a standard output script pays, in
// the ticker's encoding (CashAddr for bch).
func (b *Backend) scriptAddress(scriptHex string) (string, bool) {
	script, err := hex.DecodeString(scriptHex)
	if err != nil {
		return "", false
	}
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(script, b.params)
	if err != nil || len(addrs) != 1 {
		return "", false
	}
	switch class {
	case txscript.PubKeyHashTy, txscript.ScriptHashTy, txscript.WitnessV0PubKeyHashTy, txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
	default:
		return "", false
	}
	return utxo.EncodeAddress(b.cfg.Ticker, addrs[0])
}

// Blocks implements chains.Backend (getblockhash, getblockheader; batched).
func (b *Backend) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if err := b.checkRange(ctx, after, upTo); err != nil {
		return nil, err
	}
	if upTo == after {
		return nil, nil
	}
	hashes, err := b.blockHashes(ctx, after+1, upTo)
	if err != nil {
		return nil, err
	}
	type header struct {
		Hash              string `json:"hash"`
		Height            int64  `json:"height"`
		PreviousBlockHash string `json:"previousblockhash"`
	}
	hs := make([]header, len(hashes))
	calls := make([]*Batch, len(hashes))
	for i, h := range hashes {
		calls[i] = &Batch{Method: "getblockheader", Params: []any{h, true}, Out: &hs[i]}
	}
	if err := b.rpc.CallBatch(ctx, calls); err != nil {
		return nil, err
	}
	out := make([]chains.Block, len(hs))
	for i, h := range hs {
		if err := calls[i].Err; err != nil {
			return nil, nodeErr("getblockheader", err)
		}
		if h.Hash != hashes[i] || h.Height != after+1+int64(i) || (h.Height > 0 && !isHash(h.PreviousBlockHash)) {
			return nil, fmt.Errorf("%w: getblockheader %s: inconsistent header", chains.ErrNode, hashes[i])
		}
		out[i] = chains.Block{Height: h.Height, Hash: h.Hash, Parent: h.PreviousBlockHash}
	}
	return out, nil
}

// State implements chains.Backend: getrawtransaction (with -txindex) tells
// the block a transaction is in, and getblockheader whether that block is
// in the best chain and how deep. A transaction only in the mempool, in a
// block a reorganisation left, or unknown is not Present, with 0
// confirmations. UTXO transfers that are in a block always executed.
func (b *Backend) State(ctx context.Context, t chains.Transfer) (chains.TxState, error) {
	var tx struct {
		BlockHash string `json:"blockhash"`
	}
	err := b.rpc.Call(ctx, &tx, "getrawtransaction", t.TxID, true)
	var re *RPCError
	switch {
	case errors.As(err, &re) && (re.Code == codeInvalidAddress || re.Code == codeInvalidParameter):
		return chains.TxState{}, nil // unknown: never seen, or evicted after a reorganisation
	case err != nil:
		return chains.TxState{}, nodeErr("getrawtransaction", err)
	case tx.BlockHash == "":
		return chains.TxState{}, nil // in the mempool
	}
	var hdr struct {
		Confirmations int64 `json:"confirmations"`
	}
	if err := b.rpc.Call(ctx, &hdr, "getblockheader", tx.BlockHash, true); err != nil {
		return chains.TxState{}, nodeErr("getblockheader", err)
	}
	if hdr.Confirmations < 1 {
		// The block is not in the best chain (-1): the transaction waits in
		// the mempool, or was replaced.
		return chains.TxState{}, nil
	}
	return chains.TxState{Present: true, Confirmations: hdr.Confirmations, Executed: true}, nil
}

// feeRate returns the fee rate in coin per kvB: estimatesmartfee's at the
// configured target, or the fallback when the node has none.
func (b *Backend) feeRate(ctx context.Context) (decimal.Decimal, error) {
	return b.feeRateAt(ctx, b.cfg.ConfTarget)
}

// feeRateAt is feeRate at target blocks.
func (b *Backend) feeRateAt(ctx context.Context, target int) (decimal.Decimal, error) {
	var est struct {
		FeeRate *json.Number `json:"feerate"`
		Errors  []string     `json:"errors"`
	}
	err := b.rpc.Call(ctx, &est, "estimatesmartfee", target)
	var re *RPCError
	if err != nil && !errors.As(err, &re) {
		return decimal.Zero, nodeErr("estimatesmartfee", err)
	}
	if err == nil && est.FeeRate != nil {
		if r, err := decimal.NewFromString(est.FeeRate.String()); err == nil && r.Sign() > 0 && r.LessThan(decimal.NewFromInt(1)) {
			return r, nil
		}
	}
	return b.cfg.FallbackFee, nil
}

// NetworkFee implements chains.Backend: the fee rate (estimatesmartfee, or
// the fallback) times the virtual size of a typical forward (one input,
// two destinations and the change), rounded up to the base unit.
func (b *Backend) NetworkFee(ctx context.Context) (decimal.Decimal, error) {
	rate, err := b.feeRate(ctx)
	if err != nil {
		return decimal.Zero, err
	}
	return feeFor(rate, b.vsize(1, 3), b.cfg.Ticker.Decimals), nil
}

// NetworkFeeAt implements chains.PriorityFees: NetworkFee at p's
// confirmation target (estimatesmartfee accepts 1 to 1008 blocks; the
// configured target for a level without one).
func (b *Backend) NetworkFeeAt(ctx context.Context, p chains.Priority) (decimal.Decimal, error) {
	target := b.cfg.ConfTarget
	if p.Blocks > 0 {
		target = min(p.Blocks, 1008)
	}
	rate, err := b.feeRateAt(ctx, target)
	if err != nil {
		return decimal.Zero, err
	}
	return feeFor(rate, b.vsize(1, 3), b.cfg.Ticker.Decimals), nil
}

// maxQuoteCount bounds the inputs and outputs FeeFor quotes for: far
// above what a relayable transaction holds, low enough that its size
// cannot overflow.
const maxQuoteCount = 1 << 20

// FeeFor implements chains.FeeQuoter: the fee rate NetworkFee uses
// (estimatesmartfee, or the fallback) times the virtual size of a
// transaction spending inputs payment-address outputs into outputs
// outputs (count the change among them), rounded up to the base unit, and
// never below the relay minimum for that size (Sign's floor).
func (b *Backend) FeeFor(ctx context.Context, inputs, outputs int) (decimal.Decimal, error) {
	if inputs < 1 || outputs < 1 || inputs > maxQuoteCount || outputs > maxQuoteCount {
		return decimal.Zero, fmt.Errorf("bitcoind %s: fee of a transaction of %d inputs and %d outputs: want 1 to %d of each", b.cfg.Ticker.Ticker, inputs, outputs, maxQuoteCount)
	}
	rate, err := b.feeRate(ctx)
	if err != nil {
		return decimal.Zero, err
	}
	size := b.vsize(inputs, outputs)
	d := b.cfg.Ticker.Decimals
	return decimal.Max(feeFor(rate, size, d), decimal.New(b.relayMinimum(size), -d)), nil
}

// feeFor returns rate (coin per 1000 vbytes) x vsize, rounded up.
func feeFor(rate decimal.Decimal, vsize int64, decimals int32) decimal.Decimal {
	return rate.Mul(decimal.NewFromInt(vsize)).Div(decimal.NewFromInt(1000)).RoundUp(decimals)
}
