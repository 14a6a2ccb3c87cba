package payment

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/db/chaincursor"
	entpayment "github.com/payhook/payhook/ent/db/payment"
)

// RescanDepth is how many blocks below its cursor a watcher scans again on
// every poll, so transfers in blocks replaced by a short reorganisation are
// seen. Applying an observation twice is harmless.
const RescanDepth = 12

// Watcher follows one ticker's chain from a durable cursor.
type Watcher struct {
	svc      *Service
	ticker   chains.Ticker
	backend  chains.Backend
	interval time.Duration
	logger   *slog.Logger

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	// The payment addresses of the ticker, loaded incrementally: each poll
	// reads only those created since the previous one.
	addrMu     sync.RWMutex
	watched    map[string]bool
	lastAddrID int64
}

// NewWatcher returns a watcher of t on backend polling every interval.
func (s *Service) NewWatcher(t chains.Ticker, interval time.Duration) (*Watcher, error) {
	b, ok := s.backends[t.Ticker]
	if !ok {
		return nil, fmt.Errorf("watch %s: no backend", t.Ticker)
	}
	return &Watcher{svc: s, ticker: t, backend: b, interval: interval, logger: s.logger.With("ticker", t.Ticker)}, nil
}

// PollOnce scans the blocks since the cursor (less RescanDepth) for
// transfers to payhook's addresses, re-reads every payment that is not
// final, applies what it saw, finishes open forwards and advances the
// cursor.
func (w *Watcher) PollOnce(ctx context.Context) error {
	head, err := w.backend.Head(ctx)
	if err != nil {
		return fmt.Errorf("%s head: %w", w.ticker.Ticker, err)
	}
	db := w.svc.db.Client
	cur, err := db.ChainCursor.Query().Where(chaincursor.Ticker(w.ticker.Ticker)).Only(ctx)
	if err != nil && !entdb.IsNotFound(err) {
		return fmt.Errorf("%s cursor: %w", w.ticker.Ticker, err)
	}
	from := int64(0)
	if cur != nil {
		from = max(0, min(cur.Height, head.Height)-RescanDepth)
	}
	if err := w.loadAddresses(ctx); err != nil {
		return err
	}
	transfers, err := w.backend.Transfers(ctx, from, head.Height, w.isWatched)
	if err != nil {
		return fmt.Errorf("%s transfers: %w", w.ticker.Ticker, err)
	}
	seen := map[[2]string]bool{}
	for _, tr := range transfers {
		if err := w.observe(ctx, tr); err != nil {
			return err
		}
		seen[key(tr.TxID, tr.Index)] = true
	}
	// Payments that are not final: their depth, receipt and presence change
	// after the blocks that held them were scanned.
	open, err := db.Payment.Query().
		Where(
			entpayment.Ticker(w.ticker.Ticker),
			entpayment.StatusIn(entpayment.StatusPending, entpayment.StatusConfirmed),
			// Credited payments that will never be forwarded are final.
			entpayment.Not(entpayment.And(entpayment.StatusEQ(entpayment.StatusConfirmed), entpayment.NoteHasPrefix(NotForwardedPrefix))),
		).
		WithAddress().
		All(ctx)
	if err != nil {
		return fmt.Errorf("%s open payments: %w", w.ticker.Ticker, err)
	}
	for _, p := range open {
		if seen[key(p.TxidIn, p.OutputIndex)] {
			continue
		}
		tr := chains.Transfer{TxID: p.TxidIn, Index: p.OutputIndex, To: p.Edges.Address.AddressIn, Value: p.ValueCoin}
		if err := w.observe(ctx, tr); err != nil {
			return err
		}
	}
	// Open forwards are finished after the cursor is saved: one that keeps
	// failing must not hold the cursor back.
	defer func() {
		if err := w.svc.Reconcile(ctx, w.ticker); err != nil {
			w.logger.Error("finish open forwards; retried at the next poll", "error", err)
		}
	}()
	now := w.svc.now()
	if cur == nil {
		return db.ChainCursor.Create().SetTicker(w.ticker.Ticker).SetHeight(head.Height).SetCreatedAt(now).SetUpdatedAt(now).
			OnConflictColumns(chaincursor.FieldTicker).UpdateNewValues().Exec(ctx)
	}
	return db.ChainCursor.UpdateOne(cur).SetHeight(head.Height).SetUpdatedAt(now).Exec(ctx)
}

// loadAddresses adds the ticker's addresses created since the last load.
// Reading by id is safe because address creation is serialised (the
// derivation-index lock in server/address; SQLite's single writer), so ids
// become visible in increasing order.
func (w *Watcher) loadAddresses(ctx context.Context) error {
	w.addrMu.Lock()
	defer w.addrMu.Unlock()
	rows, err := w.svc.db.Client.Address.Query().
		Where(entaddress.Ticker(w.ticker.Ticker), entaddress.IDGT(w.lastAddrID)).
		Order(entdb.Asc(entaddress.FieldID)).
		Select(entaddress.FieldID, entaddress.FieldAddressIn).
		All(ctx)
	if err != nil {
		return fmt.Errorf("%s addresses: %w", w.ticker.Ticker, err)
	}
	if w.watched == nil {
		w.watched = make(map[string]bool, len(rows))
	}
	for _, a := range rows {
		w.watched[a.AddressIn] = true
		w.lastAddrID = a.ID
	}
	return nil
}

func (w *Watcher) isWatched(address string) bool {
	w.addrMu.RLock()
	defer w.addrMu.RUnlock()
	return w.watched[address]
}

func key(txid string, index int64) [2]string { return [2]string{txid, fmt.Sprint(index)} }

func (w *Watcher) observe(ctx context.Context, tr chains.Transfer) error {
	st, err := w.backend.State(ctx, tr)
	if err != nil {
		return fmt.Errorf("%s state of %s: %w", w.ticker.Ticker, tr.TxID, err)
	}
	if err := w.svc.Apply(ctx, w.ticker, chains.Observation{Transfer: tr, State: st}); err != nil {
		return fmt.Errorf("%s apply %s: %w", w.ticker.Ticker, tr.TxID, err)
	}
	return nil
}

// Start polls in the background until Stop.
func (w *Watcher) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel, w.done = cancel, make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(w.interval)
		defer t.Stop()
		for {
			if err := w.PollOnce(ctx); err != nil && ctx.Err() == nil {
				w.logger.Error("chain watcher poll", "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop ends polling and waits; it is idempotent.
func (w *Watcher) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cancel = nil
}
