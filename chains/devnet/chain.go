package devnet

import (
	"context"
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/internal/clock"
)

// Defaults applied by Options.WithDefaults.
const (
	// DefaultTronSolidLag is how many blocks TRON's solidified head lags the
	// tip: 19 blocks, the number of super representatives beyond two thirds
	// of 27 that must build on a block before it is irreversible.
	DefaultTronSolidLag = 19
	// DefaultSolanaConfirmedDepth is the slot depth at which a Solana
	// transaction reaches the confirmed commitment.
	DefaultSolanaConfirmedDepth = 2
	// DefaultSolanaFinalizedDepth is the slot depth at which a Solana
	// transaction reaches the finalized commitment. Mainnet needs about 32
	// slots; the devnet is quicker so that tests and demos are short.
	DefaultSolanaFinalizedDepth = 3
)

// MaxMine is the largest number of blocks one Mine call produces.
const MaxMine = 1000

// Options tune a simulated chain. The zero value is usable: WithDefaults
// fills every zero field.
type Options struct {
	// TronSolidLag is how many blocks the TRON solidified head lags the tip
	// (Head.Solidified = max(0, Height-TronSolidLag)). Zero means
	// DefaultTronSolidLag. Ignored by other families.
	TronSolidLag int64
	// SolanaConfirmedDepth is the depth (slots since inclusion, counting the
	// including slot as 1) at which a Solana transaction reaches the
	// confirmed commitment; below it, it is processed. Zero means
	// DefaultSolanaConfirmedDepth.
	SolanaConfirmedDepth int64
	// SolanaFinalizedDepth is the depth at which a Solana transaction is
	// finalized. Zero means DefaultSolanaFinalizedDepth. It must not be
	// below SolanaConfirmedDepth.
	SolanaFinalizedDepth int64
	// Clock stamps new blocks. Nil means clock.Now.
	Clock func() time.Time
	// Seed makes transaction hashes deterministic: two chains of one ticker
	// with the same seed, driven alike, produce the same hashes. Empty means
	// a random seed, so that hashes of separate devnet runs never collide in
	// a database that outlives them.
	Seed []byte
}

// WithDefaults returns o with every zero field replaced by its default. A
// missing Seed is left empty: NewChain and New draw a random one.
func (o Options) WithDefaults() Options {
	if o.TronSolidLag == 0 {
		o.TronSolidLag = DefaultTronSolidLag
	}
	if o.SolanaConfirmedDepth == 0 {
		o.SolanaConfirmedDepth = DefaultSolanaConfirmedDepth
	}
	if o.SolanaFinalizedDepth == 0 {
		o.SolanaFinalizedDepth = DefaultSolanaFinalizedDepth
	}
	if o.Clock == nil {
		o.Clock = clock.Now
	}
	return o
}

// Validate reports the first field of o (after WithDefaults) that is out of
// range, wrapping ErrInvalidOptions.
func (o Options) Validate() error {
	o = o.WithDefaults()
	switch {
	case o.TronSolidLag < 0:
		return fmt.Errorf("%w: TronSolidLag must not be negative, got %d", ErrInvalidOptions, o.TronSolidLag)
	case o.SolanaConfirmedDepth < 1:
		return fmt.Errorf("%w: SolanaConfirmedDepth must be at least 1, got %d", ErrInvalidOptions, o.SolanaConfirmedDepth)
	case o.SolanaFinalizedDepth < o.SolanaConfirmedDepth:
		return fmt.Errorf("%w: SolanaFinalizedDepth (%d) must not be below SolanaConfirmedDepth (%d)",
			ErrInvalidOptions, o.SolanaFinalizedDepth, o.SolanaConfirmedDepth)
	}
	return nil
}

// tx is one simulated transaction paying one transfer.
type tx struct {
	id     string
	to     string
	value  decimal.Decimal
	failed bool  // execution fails (EVM, TRON): included, but no value moves
	height int64 // including block; 0 while waiting or once reorganised out
	index  int64 // Transfer.Index, set at inclusion
	gone   bool  // reorganised out; never included again
}

// block is one simulated block (slot).
type block struct {
	height int64
	hash   string // unique per chain: a replaced block never gets its hash back
	parent string // the hash of the block below; "" for the first
	time   time.Time
	txs    []*tx
}

// forward is one forward sent.
type forward struct {
	f    chains.Forward
	txid string
}

// Chain is an in-process simulated chain of one ticker that behaves like its
// family (see the package documentation). It implements chains.Backend and
// is safe for concurrent use.
type Chain struct {
	ticker chains.Ticker
	opts   Options
	seed   []byte

	mu       sync.Mutex
	counter  uint64 // hashes issued, for unique txids
	mined    uint64 // blocks ever mined, for unique block hashes
	blocks   []*block
	waiting  []*tx // mempool (UTXO, EVM, TRON) or next slot (Solana)
	byID     map[string]*tx
	forwards []forward
	fwdByID  map[string]int // Forward.ID -> index in forwards
	changed  chan struct{}  // closed and replaced whenever the height changes
}

var (
	_ chains.Backend       = (*Chain)(nil)
	_ chains.MempoolReader = (*Chain)(nil)
)

// NewChain returns an empty chain (height 0, no blocks) of t. It panics if
// opts fails Validate or t's family is unknown: both are programming errors,
// and tickers from a chains.Registry always have a known family.
func NewChain(t chains.Ticker, opts Options) *Chain {
	if err := opts.Validate(); err != nil {
		panic("devnet: " + err.Error())
	}
	switch t.Family {
	case chains.FamilyUTXO, chains.FamilyEVM, chains.FamilyTron, chains.FamilySolana:
	default:
		panic(fmt.Sprintf("devnet: ticker %q has unknown family %q", t.Ticker, t.Family))
	}
	opts = opts.WithDefaults()
	seed := slices.Clone(opts.Seed)
	if len(seed) == 0 {
		seed = randomSeed()
	}
	return &Chain{
		ticker:  t,
		opts:    opts,
		seed:    seed,
		byID:    make(map[string]*tx),
		fwdByID: make(map[string]int),
		changed: make(chan struct{}),
	}
}

func randomSeed() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

// Ticker returns the chain's ticker.
func (c *Chain) Ticker() chains.Ticker { return c.ticker }

// Height returns the tip's height; 0 before the first block.
func (c *Chain) Height() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.height()
}

func (c *Chain) height() int64 { return int64(len(c.blocks)) }

// BlockTime returns the Clock reading at which the block at height was
// mined, and false when there is no such block.
func (c *Chain) BlockTime(height int64) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if height < 1 || height > c.height() {
		return time.Time{}, false
	}
	return c.blocks[height-1].time, true
}

// WaitHeight blocks until the tip is at height or above, or ctx ends, and
// returns the tip's height. It is the signal tests wait on instead of
// sleeping.
func (c *Chain) WaitHeight(ctx context.Context, height int64) (int64, error) {
	for {
		c.mu.Lock()
		h, ch := c.height(), c.changed
		c.mu.Unlock()
		if h >= height {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return h, fmt.Errorf("wait for %s height %d (at %d): %w", c.ticker.Ticker, height, h, ctx.Err())
		case <-ch:
		}
	}
}

// signal wakes WaitHeight callers; c.mu must be held.
func (c *Chain) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Pay submits a transaction paying value to `to` and returns its hash. The
// transaction waits in the mempool (UTXO, EVM, TRON) or for the next slot
// (Solana) and is included by the next Mine. With failExecution (EVM and
// TRON only) it is included but its execution fails: State reports
// Executed false and no value moves.
//
// Errors wrap ErrInvalidPayment: `to` is not a valid address of the ticker
// (the error also wraps chains.ErrInvalidAddress), value is not positive or
// has more decimal places than the ticker, or failExecution is set on a UTXO
// or Solana chain, whose included transfers always succeed.
func (c *Chain) Pay(to string, value decimal.Decimal, failExecution bool) (string, error) {
	tk := c.ticker
	if err := chains.ValidateAddress(tk, to); err != nil {
		return "", fmt.Errorf("%w: pay %s: %w", ErrInvalidPayment, tk.Ticker, err)
	}
	if err := checkAmount(tk, value); err != nil {
		return "", fmt.Errorf("%w: pay %s to %s: %w", ErrInvalidPayment, tk.Ticker, to, err)
	}
	if failExecution && !canFail(tk.Family) {
		return "", fmt.Errorf("%w: pay %s: a failed execution exists only on evm and tron chains, not %s",
			ErrInvalidPayment, tk.Ticker, tk.Family)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &tx{id: c.newHash("pay"), to: to, value: value, failed: failExecution}
	c.byID[t.id] = t
	c.waiting = append(c.waiting, t)
	return t.id, nil
}

func canFail(f chains.FamilyName) bool { return f == chains.FamilyEVM || f == chains.FamilyTron }

// checkAmount reports an amount that is not positive or not a whole number
// of the ticker's smallest unit.
func checkAmount(tk chains.Ticker, v decimal.Decimal) error {
	if v.Sign() <= 0 {
		return fmt.Errorf("amount must be positive, got %s", v)
	}
	if !v.Shift(tk.Decimals).IsInteger() {
		return fmt.Errorf("amount %s has more than %d decimal places", v, tk.Decimals)
	}
	return nil
}

// Mine produces blocks (1..MaxMine) and returns the new height. The first
// new block includes every waiting transaction, in submission order.
func (c *Chain) Mine(blocks int) (int64, error) {
	if blocks < 1 || blocks > MaxMine {
		return 0, fmt.Errorf("%w: mine %d blocks of %s: want 1 to %d", ErrInvalidCount, blocks, c.ticker.Ticker, MaxMine)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range blocks {
		b := &block{height: c.height() + 1, time: c.opts.Clock(), parent: c.tipHash()}
		c.mined++
		b.hash = c.hash("block", c.mined, b.parent)
		if i == 0 {
			c.include(b)
		}
		c.blocks = append(c.blocks, b)
	}
	c.signal()
	return c.height(), nil
}

// include moves the waiting transactions into b, assigning Transfer.Index:
// the block-wide log index for successful token transfers, 0 otherwise
// (UTXO output 0, native EVM/TRON value, Solana instruction 0, and failed
// token transfers, which emit no log).
func (c *Chain) include(b *block) {
	var logIndex int64
	for _, t := range c.waiting {
		t.height = b.height
		if c.ticker.Token && c.ticker.Family != chains.FamilySolana && !t.failed {
			t.index = logIndex
			logIndex++
		}
		b.txs = append(b.txs, t)
	}
	c.waiting = nil
}

// tipHash returns the newest block's hash, "" before the first block;
// c.mu must be held.
func (c *Chain) tipHash() string {
	if len(c.blocks) == 0 {
		return ""
	}
	return c.blocks[len(c.blocks)-1].hash
}

// Reorg drops the newest depth blocks (1..Height) and returns the new
// height. Their transactions leave the chain for good: they are not
// included again, so State reports them not Present. Transactions still
// waiting are unaffected and go into the next block. The blocks mined next
// at the dropped heights get new hashes: a dropped hash never comes back.
func (c *Chain) Reorg(depth int) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if depth < 1 || int64(depth) > c.height() {
		return 0, fmt.Errorf("%w: reorganise %d blocks of %s at height %d: want 1 to the height",
			ErrInvalidCount, depth, c.ticker.Ticker, c.height())
	}
	keep := len(c.blocks) - depth
	for _, b := range c.blocks[keep:] {
		for _, t := range b.txs {
			t.gone, t.height = true, 0
		}
	}
	clear(c.blocks[keep:])
	c.blocks = c.blocks[:keep]
	c.signal()
	return c.height(), nil
}

// Ephemeral implements chains.Ephemeral: the chain lives in memory, with
// hashes from a random seed, and a new process starts a new one.
func (c *Chain) Ephemeral() bool { return true }

// Head implements chains.Backend. Solidified lags Height by TronSolidLag on
// TRON and equals Height elsewhere.
func (c *Chain) Head(ctx context.Context) (chains.Head, error) {
	if err := ctx.Err(); err != nil {
		return chains.Head{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return chains.Head{Height: c.height(), Solidified: c.solidified(), Hash: c.tipHash()}, nil
}

func (c *Chain) solidified() int64 {
	if c.ticker.Family != chains.FamilyTron {
		return c.height()
	}
	return max(0, c.height()-c.opts.TronSolidLag)
}

// Transfers implements chains.Backend: the transfers in blocks after..upTo
// (after exclusive) to watched addresses (every address when watched is
// nil), in block order and, within a block, inclusion order. A failed EVM or
// TRON execution is reported too, so the payment is recorded and then
// judged reverted: State says Executed false. Errors wrap ErrInvalidRange
// when after is negative, upTo is below after, or upTo is beyond the tip.
func (c *Chain) Transfers(ctx context.Context, after, upTo int64, watched func(address string) bool) ([]chains.Transfer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if after < 0 || upTo < after || upTo > c.height() {
		return nil, fmt.Errorf("%w: %s transfers after %d up to %d at height %d",
			ErrInvalidRange, c.ticker.Ticker, after, upTo, c.height())
	}
	var out []chains.Transfer
	for _, b := range c.blocks[after:upTo] {
		for _, t := range b.txs {
			if watched != nil && !watched(t.to) {
				continue
			}
			out = append(out, chains.Transfer{TxID: t.id, Index: t.index, To: t.to, Value: t.value, Height: b.height, BlockHash: b.hash})
		}
	}
	return out, nil
}

// Mempool implements chains.MempoolReader: the transactions waiting for
// the next block (UTXO, EVM, TRON), to watched addresses (all when watched
// is nil), in submission order, with Height 0. A Solana chain has no
// mempool (its transactions wait for the next slot, which the family
// reports from processed on): it reports none. A waiting EVM or TRON
// transaction meant to fail is reported too: a node cannot tell before it
// executes.
func (c *Chain) Mempool(ctx context.Context, watched func(address string) bool) ([]chains.Transfer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.ticker.Family == chains.FamilySolana {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []chains.Transfer
	for _, t := range c.waiting {
		if watched != nil && !watched(t.to) {
			continue
		}
		out = append(out, chains.Transfer{TxID: t.id, To: t.to, Value: t.value})
	}
	return out, nil
}

// Blocks implements chains.Backend: the blocks after..upTo (after
// exclusive), in height order. Errors wrap ErrInvalidRange as Transfers'.
func (c *Chain) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if after < 0 || upTo < after || upTo > c.height() {
		return nil, fmt.Errorf("%w: %s blocks after %d up to %d at height %d",
			ErrInvalidRange, c.ticker.Ticker, after, upTo, c.height())
	}
	out := make([]chains.Block, 0, upTo-after)
	for _, b := range c.blocks[after:upTo] {
		out = append(out, chains.Block{Height: b.height, Hash: b.hash, Parent: b.parent})
	}
	return out, nil
}

// State implements chains.Backend. It looks the transaction up by TxID; a
// hash the chain does not know, or one reorganised out, is not Present (a
// node cannot tell them apart either). A transaction still waiting is
// Present with 0 confirmations. Confirmations is the depth (Solana too);
// Executed is false for a failed EVM/TRON execution and for one not yet
// included; Solidified is true for an included transaction at or below
// Head.Solidified (so always, once included, off TRON); Commitment follows
// Options on Solana and is CommitmentNone elsewhere.
func (c *Chain) State(ctx context.Context, tr chains.Transfer) (chains.TxState, error) {
	if err := ctx.Err(); err != nil {
		return chains.TxState{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.byID[tr.TxID]
	if !ok || t.gone {
		return chains.TxState{}, nil
	}
	if t.height == 0 {
		return chains.TxState{Present: true, Executed: !canFail(c.ticker.Family)}, nil
	}
	depth := c.height() - t.height + 1
	s := chains.TxState{
		Present:       true,
		Confirmations: depth,
		Executed:      !t.failed,
		Solidified:    t.height <= c.solidified(),
	}
	if c.ticker.Family == chains.FamilySolana {
		switch {
		case depth >= c.opts.SolanaFinalizedDepth:
			s.Commitment = chains.CommitmentFinalized
		case depth >= c.opts.SolanaConfirmedDepth:
			s.Commitment = chains.CommitmentConfirmed
		default:
			s.Commitment = chains.CommitmentProcessed
		}
	}
	return s, nil
}

// NetworkFee implements chains.Backend: the ticker's NetworkFeeEstimate.
func (c *Chain) NetworkFee(ctx context.Context) (decimal.Decimal, error) {
	if err := ctx.Err(); err != nil {
		return decimal.Decimal{}, err
	}
	return c.ticker.NetworkFeeEstimate, nil
}

// NetworkFeeAt implements chains.PriorityFees: the ticker's
// NetworkFeeEstimate by p's static model (chains.Priority.Scale).
func (c *Chain) NetworkFeeAt(ctx context.Context, p chains.Priority) (decimal.Decimal, error) {
	f, err := c.NetworkFee(ctx)
	if err != nil {
		return f, err
	}
	return p.Scale(f, c.ticker.Decimals), nil
}

// Sign implements chains.Backend: it validates f and returns a "signed"
// forward whose TxID is a function of the chain's seed and f.ID (the same
// ID always gets the same hash) and whose Raw is f encoded as JSON. Nothing
// is recorded until Send. Errors wrap ErrInvalidForward: no ID, an invalid
// From or output address (also chains.ErrInvalidAddress), no outputs, or an
// amount that is not positive or has more decimal places than the ticker.
func (c *Chain) Sign(ctx context.Context, f chains.Forward) (chains.Signed, error) {
	if err := ctx.Err(); err != nil {
		return chains.Signed{}, err
	}
	tk := c.ticker
	if f.ID == "" {
		return chains.Signed{}, fmt.Errorf("%w: %s forward without an ID", ErrInvalidForward, tk.Ticker)
	}
	if err := chains.ValidateAddress(tk, f.From); err != nil {
		return chains.Signed{}, fmt.Errorf("%w: forward %q from: %w", ErrInvalidForward, f.ID, err)
	}
	if len(f.Outputs) == 0 {
		return chains.Signed{}, fmt.Errorf("%w: forward %q has no outputs", ErrInvalidForward, f.ID)
	}
	for i, in := range f.Inputs {
		if in.To == "" {
			continue
		}
		if _, ok := f.KeyOf(in.To); !ok {
			return chains.Signed{}, fmt.Errorf("%w: forward %q input %d is on %s, which is neither From nor in Keys", ErrInvalidForward, f.ID, i, in.To)
		}
		if in.To != f.From && tk.Family != chains.FamilyUTXO {
			return chains.Signed{}, fmt.Errorf("%w: forward %q input %d: a %s transaction leaves one account", ErrInvalidForward, f.ID, i, tk.Family)
		}
	}
	for i, o := range f.Outputs {
		if err := chains.ValidateAddress(tk, o.Address); err != nil {
			return chains.Signed{}, fmt.Errorf("%w: forward %q output %d: %w", ErrInvalidForward, f.ID, i, err)
		}
		if err := checkAmount(tk, o.Amount); err != nil {
			return chains.Signed{}, fmt.Errorf("%w: forward %q output %d: %w", ErrInvalidForward, f.ID, i, err)
		}
	}
	raw, err := json.Marshal(signedForward{ID: f.ID, From: f.From, Inputs: f.Inputs, Outputs: f.Outputs, NetworkFee: f.NetworkFee, Keys: f.Keys, GasPercent: f.GasPercent})
	if err != nil {
		return chains.Signed{}, fmt.Errorf("%w: forward %q: %w", ErrInvalidForward, f.ID, err)
	}
	return chains.Signed{TxID: c.hash("forward:"+f.ID, 0, ""), Raw: raw}, nil
}

// SignsOffline implements chains.OfflineSigner: the devnet signs in memory.
func (c *Chain) SignsOffline() bool { return true }

// signedForward is the devnet's "serialised transaction".
type signedForward struct {
	ID         string            `json:"id"`
	From       string            `json:"from"`
	Inputs     []chains.Transfer `json:"inputs,omitempty"`
	Outputs    []chains.Output   `json:"outputs"`
	NetworkFee decimal.Decimal   `json:"network_fee"`
	Keys       map[string]uint32 `json:"keys,omitempty"`
	GasPercent int               `json:"gas_percent,omitempty"`
}

// FeeFor implements chains.FeeQuoter: the devnet's fee does not depend on
// the size, so it is the ticker's NetworkFeeEstimate.
func (c *Chain) FeeFor(ctx context.Context, inputs, outputs int) (decimal.Decimal, error) {
	if inputs < 1 || outputs < 1 {
		return decimal.Zero, fmt.Errorf("%w: %s fee for %d inputs and %d outputs", ErrInvalidCount, c.ticker.Ticker, inputs, outputs)
	}
	return c.NetworkFee(ctx)
}

// Send implements chains.Backend: it records the forward of s (see
// Forwards) unless a forward of the same ID was sent already, which
// succeeds without a second record, as a node accepts a transaction it
// already has.
func (c *Chain) Send(ctx context.Context, s chains.Signed) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var sf signedForward
	if err := json.Unmarshal(s.Raw, &sf); err != nil || sf.ID == "" {
		return fmt.Errorf("%w: %s: not a transaction signed by this devnet", ErrInvalidForward, c.ticker.Ticker)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.fwdByID[sf.ID]; ok {
		return nil
	}
	c.fwdByID[sf.ID] = len(c.forwards)
	f := chains.Forward{ID: sf.ID, From: sf.From, Inputs: sf.Inputs, Outputs: sf.Outputs, NetworkFee: sf.NetworkFee, Keys: sf.Keys, GasPercent: sf.GasPercent}
	c.forwards = append(c.forwards, forward{f: f, txid: s.TxID})
	if c.ticker.Family == chains.FamilyUTXO {
		// An output back to an address the transaction spends from (a
		// payout's change) is an output to a watched address, as on a
		// real chain: it is a transfer of the next block.
		for _, o := range f.Outputs {
			if _, own := f.KeyOf(o.Address); own {
				t := &tx{id: c.newHash("change"), to: o.Address, value: o.Amount}
				c.byID[t.id] = t
				c.waiting = append(c.waiting, t)
			}
		}
		return nil
	}
	// An account chain's forward is a transaction per output: each is a
	// transfer of the next block (the first has the forward's TxID), so it
	// lands (State), and one to a watched address (a sweep to a payout
	// wallet) is a payment there.
	for i, o := range f.Outputs {
		id := s.TxID
		if i > 0 || c.byID[id] != nil {
			id = c.newHash("transfer")
		}
		t := &tx{id: id, to: o.Address, value: o.Amount}
		c.byID[t.id] = t
		c.waiting = append(c.waiting, t)
	}
	return nil
}

// Forwards returns every distinct forward sent, in the order sent. The
// slice and its outputs are copies.
func (c *Chain) Forwards() []chains.Forward {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]chains.Forward, len(c.forwards))
	for i, r := range c.forwards {
		out[i] = r.f
		out[i].Outputs = slices.Clone(r.f.Outputs)
	}
	return out
}

// Balance returns what address holds on the chain now: the transfers to it
// in the chain's blocks (not in the mempool, not failed, not reorganised
// out), less what the forwards sent from it spend, as the family spends:
// a UTXO forward spends its inputs whole, each from the address it was
// paid to (the service fee goes to the operator's change address; an
// output back to an address it spends from is a transfer of the next
// block, as Send says); an account chain's forward of the native
// coin moves its outputs and pays its network fee from the address; a
// token's forward moves its outputs (the network fee is paid in the native
// coin).
func (c *Chain) Balance(address string) decimal.Decimal {
	c.mu.Lock()
	defer c.mu.Unlock()
	sum := decimal.Zero
	for _, b := range c.blocks {
		for _, t := range b.txs {
			if t.to == address && !t.failed {
				sum = sum.Add(t.value)
			}
		}
	}
	for _, r := range c.forwards {
		if c.ticker.Family == chains.FamilyUTXO {
			for _, in := range r.f.Inputs {
				if in.To == address || in.To == "" && r.f.From == address {
					sum = sum.Sub(in.Value)
				}
			}
			continue
		}
		if r.f.From != address {
			continue
		}
		switch c.ticker.Family {
		default:
			for _, o := range r.f.Outputs {
				sum = sum.Sub(o.Amount)
			}
			if !c.ticker.Token {
				sum = sum.Sub(r.f.NetworkFee)
			}
		}
	}
	return sum
}

// newHash returns a fresh transaction hash in the family's style: 64 hex
// digits (UTXO, TRON), 0x and 64 hex digits (EVM), or the base58 of a 64-byte
// signature (Solana). It is a function of the seed, the ticker, kind and a
// counter, so unique per chain and deterministic for a given seed. c.mu must
// be held.
func (c *Chain) newHash(kind string) string {
	c.counter++
	return c.hash(kind, c.counter, "")
}

// hash returns the hash of the n-th object of kind in the family's style;
// parent (a block's parent hash) is mixed in when not empty, so a block
// commits to the chain below it.
func (c *Chain) hash(kind string, n uint64, parent string) string {
	h := sha512.New()
	h.Write(c.seed)
	h.Write([]byte{0})
	h.Write([]byte(c.ticker.Ticker))
	h.Write([]byte{0})
	h.Write([]byte(kind))
	h.Write(binary.BigEndian.AppendUint64(nil, n))
	if parent != "" {
		h.Write([]byte{0})
		h.Write([]byte(parent))
	}
	sum := h.Sum(nil)
	switch c.ticker.Family {
	case chains.FamilyEVM:
		return "0x" + hex.EncodeToString(sum[:32])
	case chains.FamilySolana:
		return base58(sum)
	}
	return hex.EncodeToString(sum[:32])
}
