package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// maxSlotRange is the widest range getBlocks serves.
const maxSlotRange = 500_000

// getSlot returns the node's slot at commitment c.
func (b *Backend) getSlot(ctx context.Context, c string) (int64, error) {
	var slot *uint64
	if err := b.rpc.call(ctx, "getSlot", []any{commitment(c)}, &slot); err != nil {
		return 0, err
	}
	if slot == nil || *slot > 1<<62 {
		return 0, nodeError("getSlot", "no slot in the answer")
	}
	return int64(*slot), nil
}

// getBlockHeight returns the node's block height at commitment c.
func (b *Backend) getBlockHeight(ctx context.Context, c string) (int64, error) {
	var h *uint64
	if err := b.rpc.call(ctx, "getBlockHeight", []any{commitment(c)}, &h); err != nil {
		return 0, err
	}
	if h == nil || *h > 1<<62 {
		return 0, nodeError("getBlockHeight", "no height in the answer")
	}
	return int64(*h), nil
}

// getFirstAvailableBlock returns the lowest slot whose block the node's
// ledger still holds.
func (b *Backend) getFirstAvailableBlock(ctx context.Context) (int64, error) {
	var s *uint64
	if err := b.rpc.call(ctx, "getFirstAvailableBlock", nil, &s); err != nil {
		return 0, err
	}
	if s == nil || *s > 1<<62 {
		return 0, nodeError("getFirstAvailableBlock", "no slot in the answer")
	}
	return int64(*s), nil
}

// getBlocks returns the slots in lo..hi that hold a confirmed block, in
// order.
func (b *Backend) getBlocks(ctx context.Context, lo, hi int64) ([]int64, error) {
	var out []int64
	for start := lo; start <= hi; start += maxSlotRange {
		end := min(hi, start+maxSlotRange-1)
		var slots *[]uint64
		if err := b.rpc.call(ctx, "getBlocks", []any{start, end, commitment(confirmed)}, &slots); err != nil {
			return nil, err
		}
		if slots == nil {
			return nil, nodeError("getBlocks", "null result")
		}
		prev := start - 1
		for _, s := range *slots {
			if int64(s) <= prev || int64(s) > end || s > 1<<62 {
				return nil, nodeError("getBlocks", "slot %d out of order or outside %d..%d", s, start, end)
			}
			prev = int64(s)
			out = append(out, int64(s))
		}
	}
	return out, nil
}

// errNoBlock reports a slot the node says holds no block.
var errNoBlock = errors.New("no block in this slot")

// getBlock returns the header of the block in slot. A slot the node says
// was skipped, or whose block it does not have (yet, or any more), gives an
// error wrapping chains.ErrNode and errNoBlock: the caller asked for it
// because getBlocks listed it.
func (b *Backend) getBlock(ctx context.Context, slot int64) (*blockHeader, error) {
	cfg := commitment(confirmed, "transactionDetails", "none", "rewards", false, "maxSupportedTransactionVersion", 0)
	var h *blockHeader
	err := b.rpc.call(ctx, "getBlock", []any{slot, cfg}, &h)
	var re *RPCError
	if errors.As(err, &re) && (re.Code == codeBlockNotAvailable || re.Code == codeSlotSkipped || re.Code == codeLongTermSkipped) {
		return nil, fmt.Errorf("%w (%w)", err, errNoBlock)
	}
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w (%w)", nodeError("getBlock", "slot %d: null", slot), errNoBlock)
	}
	if err := h.check(slot); err != nil {
		return nil, nodeError("getBlock", "%v", err)
	}
	return h, nil
}

// getBlocksConcurrently returns the headers of the blocks in slots, with
// at most b.concurrency requests in flight.
func (b *Backend) getBlocksConcurrently(ctx context.Context, slots []int64) (map[int64]*blockHeader, error) {
	out := make(map[int64]*blockHeader, len(slots))
	var mu sync.Mutex
	err := parallel(ctx, len(slots), b.concurrency, func(ctx context.Context, i int) error {
		h, err := b.getBlock(ctx, slots[i])
		if err != nil {
			return err
		}
		mu.Lock()
		out[slots[i]] = h
		mu.Unlock()
		return nil
	})
	return out, err
}

// parallel runs f(0..n-1) with at most limit calls at once and returns the
// first error; after an error the calls not started are skipped. Every
// goroutine it starts has returned when it returns.
func parallel(ctx context.Context, n, limit int, f func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for range min(max(limit, 1), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
