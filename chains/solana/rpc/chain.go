package rpc

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/payhook/payhook/chains"
)

// Searching below a slot for the newest block.
const (
	// firstWindow is the first range searched; later ones double.
	firstWindow = 64
	// maxWindow bounds one getBlocks request of the search.
	maxWindow = 4096
	// maxSearch bounds how far below a slot the search goes: far more than
	// any run of skipped slots.
	maxSearch = 100_000
)

// skippedHash is the hash Blocks gives a slot without a block: it names
// the slot and the hash of the newest block below it ("" when there is
// none above slot 0), so it commits to the chain below as real hashes do,
// differs from slot to slot, and changes when a reorganisation replaces
// the block below or puts a block in the slot. It cannot be mistaken for a
// blockhash, which is base58 without dashes.
func skippedHash(slot int64, below string) string {
	return "skipped-" + strconv.FormatInt(slot, 10) + "-" + below
}

// Watch implements chains.AddressWatcher: Transfers asks the node about
// these addresses (and, for SPL tokens, their associated token accounts).
func (b *Backend) Watch(addresses ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range addresses {
		b.watched[a] = true
	}
}

// addresses returns the watched addresses that watched accepts (all of
// them when watched is nil), sorted.
func (b *Backend) addresses(watched func(string) bool) []string {
	b.mu.Lock()
	all := make([]string, 0, len(b.watched))
	for a := range b.watched {
		all = append(all, a)
	}
	b.mu.Unlock()
	out := all[:0]
	for _, a := range all {
		if watched == nil || watched(a) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// Head implements chains.Backend: the newest block at the confirmed
// commitment (Height is its slot; Solidified equals Height).
func (b *Backend) Head(ctx context.Context) (chains.Head, error) {
	tip, err := b.getSlot(ctx, confirmed)
	if err != nil {
		return chains.Head{}, fmt.Errorf("%s head: %w", b.ticker.Ticker, err)
	}
	slot, h, err := b.lastBlock(ctx, tip, -1)
	if err != nil {
		return chains.Head{}, fmt.Errorf("%s head: %w", b.ticker.Ticker, err)
	}
	if h == nil {
		return chains.Head{}, nil
	}
	return chains.Head{Height: slot, Solidified: slot, Hash: h.Blockhash}, nil
}

// lastBlock returns the newest block in 1..at (slot 0, the genesis block,
// is outside the chain as the backend presents it) and its header; slot 0
// and a nil header when there is none. floor is the first slot whose block
// the node holds, -1 when not yet asked.
func (b *Backend) lastBlock(ctx context.Context, at, floor int64) (int64, *blockHeader, error) {
	hi, w := at, int64(firstWindow)
	for hi >= 1 {
		lo := max(1, hi-w+1, floor)
		slots, err := b.getBlocks(ctx, lo, hi)
		if err != nil {
			return 0, nil, err
		}
		if n := len(slots); n > 0 {
			h, err := b.getBlock(ctx, slots[n-1])
			if err != nil {
				return 0, nil, err
			}
			return slots[n-1], h, nil
		}
		if floor < 0 {
			if floor, err = b.getFirstAvailableBlock(ctx); err != nil {
				return 0, nil, err
			}
		}
		if lo <= max(floor, 1) {
			if floor > 1 {
				return 0, nil, nodeError("getBlocks", "no block between the node's first available block %d and slot %d", floor, at)
			}
			return 0, nil, nil
		}
		if at-lo >= maxSearch {
			return 0, nil, nodeError("getBlocks", "no block in the %d slots below %d", maxSearch, at)
		}
		hi, w = lo-1, min(w*2, maxWindow)
	}
	return 0, nil, nil
}

// Blocks implements chains.Backend: one Block per slot after+1..upTo at
// the confirmed commitment. A slot with a block has its blockhash; a
// skipped slot has skippedHash. Parent is the hash of the slot below ("" for
// slot 1). Errors wrap ErrInvalidRange (after < 0, upTo < after, upTo
// beyond the node's confirmed slot) or chains.ErrNode (including a node
// whose ledger no longer reaches after, and blocks that do not link up:
// the chain moved while they were read).
func (b *Backend) Blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	if after < 0 || upTo < after {
		return nil, fmt.Errorf("%w: %s blocks after %d up to %d", ErrInvalidRange, b.ticker.Ticker, after, upTo)
	}
	if upTo == after {
		return []chains.Block{}, nil
	}
	tip, err := b.getSlot(ctx, confirmed)
	if err != nil {
		return nil, fmt.Errorf("%s blocks: %w", b.ticker.Ticker, err)
	}
	if upTo > tip {
		return nil, fmt.Errorf("%w: %s blocks after %d up to %d: the node's confirmed slot is %d", ErrInvalidRange, b.ticker.Ticker, after, upTo, tip)
	}
	bs, err := b.blocks(ctx, after, upTo)
	if err != nil {
		return nil, fmt.Errorf("%s blocks after %d up to %d: %w", b.ticker.Ticker, after, upTo, err)
	}
	return bs, nil
}

func (b *Backend) blocks(ctx context.Context, after, upTo int64) ([]chains.Block, error) {
	first, err := b.getFirstAvailableBlock(ctx)
	if err != nil {
		return nil, err
	}
	if after < first && !(after == 0 && first <= 1) {
		return nil, nodeError("getFirstAvailableBlock", "the node's ledger starts at slot %d and does not reach back to slot %d", first, after)
	}
	// The newest block at or below after: the parent of what follows.
	var (
		lastSlot int64
		lastHash string
		prev     string // the hash of slot after
	)
	if after >= 1 {
		s, h, err := b.lastBlock(ctx, after, first)
		if err != nil {
			return nil, err
		}
		if h != nil {
			lastSlot, lastHash = s, h.Blockhash
		}
		prev = lastHash
		if s != after {
			prev = skippedHash(after, lastHash)
		}
	}
	slots, err := b.getBlocks(ctx, after+1, upTo)
	if err != nil {
		return nil, err
	}
	headers, err := b.getBlocksConcurrently(ctx, slots)
	if err != nil {
		return nil, err
	}
	out := make([]chains.Block, 0, upTo-after)
	for s := after + 1; s <= upTo; s++ {
		h, ok := headers[s]
		if !ok {
			hash := skippedHash(s, lastHash)
			out = append(out, chains.Block{Height: s, Hash: hash, Parent: prev})
			prev = hash
			continue
		}
		if lastSlot >= 1 && (int64(*h.ParentSlot) != lastSlot || h.PreviousBlockhash != lastHash) {
			return nil, nodeError("getBlock", "block %d has parent slot %d (%s), but the block below it is slot %d (%s): the chain moved while it was read",
				s, *h.ParentSlot, h.PreviousBlockhash, lastSlot, lastHash)
		}
		out = append(out, chains.Block{Height: s, Hash: h.Blockhash, Parent: prev})
		prev, lastSlot, lastHash = h.Blockhash, s, h.Blockhash
	}
	return out, nil
}

// sortTransfers orders transfers by slot, keeping the order within one.
func sortTransfers(ts []chains.Transfer) {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].Height < ts[j].Height })
}
