package payment

import (
	"context"
	"time"

	"github.com/payhook/payhook/chains"
)

// Mempool sightings: what the hosted pages show a payer between the
// broadcast and the first block ("payment detected"). They are kept in
// memory only, per instance: a sighting is not a payment (it may never be
// mined), so it is never stored, credited or notified; the block that
// includes the transaction makes it a payment as it always did.
//
// The instance that watches a ticker (it holds the lease) reads the
// node's mempool at each poll, after the blocks, so a transaction mined
// meanwhile is already a payment when its sighting goes. Another instance
// serving a page reads the mempool itself when asked, at most once per
// watch interval per ticker (its watcher's addresses, the same backend),
// so every instance answers the same without a table or a message between
// them; such reads happen only while payers poll pages on that instance.

// mempoolView is a watcher's last read of its node's mempool.
type mempoolView struct {
	// at is when the last read ended (the service's clock); zero before
	// the first.
	at time.Time
	// byAddress are the transfers waiting, by address.
	byAddress map[string][]chains.Transfer
}

// scanMempool reads the node's mempool for the watched addresses (loading
// those created since the last load first: a payer pays a fresh address)
// and replaces the view. A backend without a mempool does nothing; a
// failure is logged and keeps the previous view until it is stale.
// w.memMu must be held.
func (w *Watcher) scanMempool(ctx context.Context) {
	m, ok := w.backend.(chains.MempoolReader)
	if !ok {
		return
	}
	defer func() { w.mem.at = w.svc.now() }()
	if err := w.loadAddresses(ctx); err != nil {
		w.logger.Warn("mempool: load addresses", "error", err)
		return
	}
	ts, err := m.Mempool(ctx, w.isWatched)
	if err != nil {
		w.logger.Warn("mempool: read the node's waiting transactions; payers see them from their block", "error", err)
		return
	}
	by := make(map[string][]chains.Transfer, len(ts))
	for _, t := range ts {
		by[t.To] = append(by[t.To], t)
	}
	w.mem.byAddress = by
}

// pollMempool is the scan of a poll that holds the lease.
func (w *Watcher) pollMempool(ctx context.Context) {
	w.memMu.Lock()
	defer w.memMu.Unlock()
	w.scanMempool(ctx)
}

// Detected returns the transfers to address waiting in the mempool of the
// watcher's chain, from the last read. The instance that holds the
// ticker's lease reads at every poll; any other reads now when its last
// read is older than the watch interval (concurrent callers share one
// read). Nothing here is a payment: see the package's mempool notes.
func (w *Watcher) Detected(ctx context.Context, address string) []chains.Transfer {
	w.memMu.Lock()
	defer w.memMu.Unlock()
	if !w.svc.lease.isHeld(w.ticker.Ticker) && w.svc.now().Sub(w.mem.at) >= w.interval {
		w.scanMempool(ctx)
	}
	return append([]chains.Transfer(nil), w.mem.byAddress[address]...)
}

// Detected returns the transfers to address of ticker waiting in its
// chain's mempool (Watcher.Detected); none for a ticker nothing watches.
func (s *Service) Detected(ctx context.Context, ticker, address string) []chains.Transfer {
	s.watchersMu.RLock()
	w := s.watchers[ticker]
	s.watchersMu.RUnlock()
	if w == nil {
		return nil
	}
	return w.Detected(ctx, address)
}
