package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/chainblock"
	"github.com/payhook/payhook/ent/db/chaincursor"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entwatched "github.com/payhook/payhook/ent/db/watchedtransfer"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/startstop"
)

// Watcher tuning.
const (
	// KeepBlocks is how many of the newest processed blocks a watcher keeps
	// the hashes of, with the transfers they include: the deepest
	// reorganisation it rolls back exactly. A deeper one is logged and
	// rescanned from the oldest block kept.
	KeepBlocks = 128
	// BatchSize is the most observations one transaction applies.
	BatchSize = 500
	// StartRescan is how far below a node's tip a ticker's first poll
	// starts (Config.StartNearHead).
	StartRescan = 6
	// BlockChunk is the most blocks one Transfers call covers.
	BlockChunk = 100
	// ReopenLanded is how far back a rollback looks for outgoing
	// transactions seen landed: those it finds are followed again (their
	// block may be one it forgot), see rollback.
	ReopenLanded = 24 * time.Hour
)

// errChainMoved: the chain changed while a poll read it (the blocks and
// transfers it read do not belong together). The poll stops without
// recording those blocks; the next one reads them again.
var errChainMoved = errors.New("the chain changed during the poll; read again at the next poll")

// Watcher follows one ticker's chain. A poll costs what is new: the blocks
// since the last one (and their transfers to payhook's addresses), and the
// transfers whose depth reached a value that changes something (the next
// confirmation count of a pending payment, TRON's distribution depth, a
// Solana commitment); a poll that finds the tip it left does nothing at all.
// Block hashes are stored, so a reorganisation is noticed at the next poll
// and rolled back to the common ancestor.
type Watcher struct {
	svc      *Service
	ticker   chains.Ticker
	backend  chains.Backend
	interval time.Duration
	logger   *slog.Logger

	startstop.Base
	wake chan struct{} // buffered: a wake while polling polls again after

	// pollMu makes polls of one watcher one at a time; it guards known and
	// reconcile.
	pollMu sync.Mutex
	// known is the tip the last poll processed, while this instance has held
	// the lease since; nil when unknown.
	known *chains.Head
	// reconcile: finish open forwarding intents at the next poll (the lease
	// was just taken, or a forward failed).
	reconcile bool
	// forwarding is the forward of the last batch applied, running while
	// the next batch applies (apply); nil when none runs. Polls wait for
	// it before they return (finishForward).
	forwarding chan bool
	// forwardingTo are the addresses of that batch's observations: a batch
	// with a transfer to one of them applies after the forward.
	forwardingTo map[string]bool
	// probed: the node answered Probe (chains.Prober) for the ticker.
	probed bool
	// follower: another instance held the lease at the last poll; polls
	// try the lease before they read the node.
	follower bool
	// resetChecked: the first poll looked for a reset of an ephemeral
	// chain (chainReset).
	resetChecked bool

	// Progress, for WaitHeight.
	progMu     sync.Mutex
	started    uint64        // polls started
	finished   uint64        // the start number of the last poll that succeeded
	processed  int64         // the chain height that poll processed
	progressed chan struct{} // closed and replaced when a poll succeeds

	// Health, for /healthz and the metrics.
	healthMu sync.Mutex
	health   Health

	// same and other are the tickers whose addresses the watcher watches
	// beside its own (Service.watchedTickers); bookPos is how far the
	// address book's rows were handed to an AddressWatcher backend,
	// guarded by addrMu.
	same, other []string
	addrMu      sync.Mutex
	bookPos     int

	// memMu guards mem and serialises mempool reads (mempool.go).
	memMu sync.Mutex
	mem   mempoolView
}

// NewWatcher returns a watcher of t on backend polling every interval.
func (s *Service) NewWatcher(t chains.Ticker, interval time.Duration) (*Watcher, error) {
	b, ok := s.backends[t.Ticker]
	if !ok {
		return nil, fmt.Errorf("watch %s: no backend", t.Ticker)
	}
	w := &Watcher{
		svc: s, ticker: t, backend: b, interval: interval, logger: s.logger.With("ticker", t.Ticker),
		wake: make(chan struct{}, 1), progressed: make(chan struct{}),
	}
	w.same, w.other = s.watchedTickers(t)
	s.watchersMu.Lock()
	if s.watchers == nil {
		s.watchers = map[string]*Watcher{}
	}
	s.watchers[t.Ticker] = w
	s.watchersMu.Unlock()
	return w, nil
}

// PollOnce brings the payments of the watcher's ticker up to the chain's
// tip. It returns at once when the tip is the one the last poll processed,
// or when another instance holds the ticker's lease (that instance polls).
// Otherwise it rolls back what a reorganisation replaced, applies the new
// blocks' transfers (one transaction per BatchSize observations; the last of
// a block range also records the blocks' hashes and the cursor), then the
// transfers that are due, forwards what may be forwarded and, when needed,
// finishes open forwards. Polls of one watcher run one at a time.
func (w *Watcher) PollOnce(ctx context.Context) (err error) {
	w.pollMu.Lock()
	defer w.pollMu.Unlock()
	defer func() { w.recordPoll(err) }()
	w.progMu.Lock()
	w.started++
	seq := w.started
	w.progMu.Unlock()

	if !w.probed {
		// A node is asked who it is before anything is read from it: a
		// node of another network than the ticker's is never watched.
		if p, ok := w.backend.(chains.Prober); ok {
			if _, err := p.Probe(ctx); err != nil {
				return fmt.Errorf("%s node: %w", w.ticker.Ticker, err)
			}
		}
		w.probed = true
	}
	if w.follower {
		// Another instance watches the ticker: this one asks the node
		// nothing until it takes the lease over, so N instances cost the
		// node what one does.
		held, _, err := w.svc.lease.hold(ctx, w.ticker.Ticker)
		if err != nil {
			return err
		}
		if !held {
			return nil
		}
		w.follower, w.known, w.reconcile = false, nil, true
	}
	head, err := w.backend.Head(ctx)
	if err != nil {
		return fmt.Errorf("%s head: %w", w.ticker.Ticker, err)
	}
	w.healthMu.Lock()
	w.health.Head = head.Height
	w.healthMu.Unlock()
	if w.svc.out.Left(w.ticker) {
		// A send of another caller (a payout) failed: finish it now.
		w.reconcile = true
	}
	if w.known != nil && *w.known == head && !w.reconcile {
		w.pollMempool(ctx)
		w.svc.afterPoll(ctx, w.ticker, w.logger)
		w.progress(seq, head.Height)
		return nil
	}
	held, fresh, err := w.svc.lease.hold(ctx, w.ticker.Ticker)
	if err != nil {
		return err
	}
	if !held {
		w.known, w.follower = nil, true
		return nil
	}
	if fresh {
		w.known, w.reconcile = nil, true
	}
	if err := w.poll(ctx, head); err != nil {
		w.known = nil
		return err
	}
	w.known = &head
	// Transactions left by a crash, a failed send or another instance
	// (a payout planned by an instance that does not watch the ticker):
	// at every poll that read a new block, and at the next poll whatever
	// it reads after a failure (one indexed query when there are none).
	open, err := w.svc.out.Resume(ctx, w.ticker)
	if err != nil {
		w.logger.Error("finish open outgoing transactions; retried at the next poll", "error", err)
	}
	w.reconcile = open || err != nil
	// After the blocks: a transaction mined since the last read is a
	// payment by now, and leaves the mempool view.
	w.pollMempool(ctx)
	w.svc.afterPoll(ctx, w.ticker, w.logger)
	w.progress(seq, head.Height)
	return nil
}

// Wake has the background loop poll now instead of at its next tick. It
// does not wait; a watcher that is not started ignores it.
func (w *Watcher) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// WaitHeight wakes the watcher and waits until a poll that started after
// the call has processed the chain up to height or above, or ctx ends. It
// is the signal tests and the devnet wait on instead of sleeping: once it
// returns, the payments and callbacks of every block up to height are
// stored. Some goroutine must be polling (Start, or PollOnce).
func (w *Watcher) WaitHeight(ctx context.Context, height int64) error {
	w.progMu.Lock()
	after := w.started
	w.progMu.Unlock()
	w.Wake()
	for {
		w.progMu.Lock()
		done, at, ch := w.finished, w.processed, w.progressed
		w.progMu.Unlock()
		if done > after && at >= height {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the %s watcher to process height %d (at %d): %w", w.ticker.Ticker, height, at, ctx.Err())
		case <-ch:
		}
	}
}

// progress records that poll seq succeeded at height.
func (w *Watcher) progress(seq uint64, height int64) {
	w.progMu.Lock()
	defer w.progMu.Unlock()
	w.finished, w.processed = seq, height
	close(w.progressed)
	w.progressed = make(chan struct{})
}

// poll processes the chain up to head: reorganisation, new blocks, due
// transfers.
func (w *Watcher) poll(ctx context.Context, head chains.Head) error {
	defer w.finishForward()
	db := w.svc.db.Client
	tk := w.ticker.Ticker
	cur, err := db.ChainCursor.Query().Where(chaincursor.Ticker(tk)).Only(ctx)
	if err != nil && !entdb.IsNotFound(err) {
		return fmt.Errorf("%s cursor: %w", tk, err)
	}
	var processed int64
	if cur != nil {
		processed = cur.Height
	} else if w.svc.startNearHead[tk] {
		// A node's chain has a history payhook never needs (no address of
		// it existed): the first poll starts StartRescan blocks below the
		// tip instead of at the genesis block, which a pruned node or a
		// Solana RPC does not even serve.
		processed = max(0, head.Height-StartRescan)
		// Recorded at once: addresses are handed out only once the ticker
		// has a cursor (server: chainReady), and every later poll, on any
		// instance, starts from it.
		if err := store.WithTx(ctx, db, func(tx *entdb.Tx) error { return w.setCursor(ctx, tx, processed) }); err != nil {
			return fmt.Errorf("%s cursor: %w", tk, err)
		}
	}
	stored, err := db.ChainBlock.Query().Where(chainblock.Ticker(tk)).
		Order(entdb.Desc(chainblock.FieldHeight)).Limit(KeepBlocks).All(ctx)
	if err != nil {
		return fmt.Errorf("%s stored blocks: %w", tk, err)
	}
	if len(stored) == 0 && processed > 0 {
		if err := w.adopt(ctx); err != nil {
			return err
		}
	}
	reset, err := w.chainReset(ctx, head, stored)
	if err != nil {
		return err
	}
	var ancestor int64
	if reset {
		// Not one block of the stored chain is on this one: its payments
		// are evaluated again (the new chain reports them gone) and the
		// new chain is scanned from its start.
		w.logger.Info("devnet reset: the simulated chain starts anew with every --dev start; forgetting the previous run's blocks",
			"previous_height", processed, "height", head.Height)
	} else if ancestor, err = w.commonAncestor(ctx, head, processed, stored); err != nil {
		return err
	}
	if ancestor < processed {
		if !reset {
			w.logger.Warn("chain reorganisation: rolling back", "from", processed, "to", ancestor)
		}
		if err := w.rollback(ctx, ancestor, !reset); err != nil {
			return err
		}
	}
	if w.svc.startNearHead[tk] || !w.ticker.Rules().SpendsSeveralAddresses(w.ticker) {
		// Before this poll's forwards: a forward is followed from the
		// poll after the one that sent it. A stuck forward is the
		// operator's to look at; it does not make the watching fail.
		// Account chains' transactions are followed on the devnet too:
		// an account's next transaction waits until its last one lands
		// (server/merchant/payout).
		if err := w.svc.out.Follow(ctx, w.ticker); err != nil {
			w.logger.Error("sent forwards not yet in a block", "ticker", tk, "error", err)
		}
	}
	parent := ""
	for _, b := range stored {
		if b.Height == ancestor {
			parent = b.Hash
		}
	}
	if ancestor < head.Height {
		if err := w.loadAddresses(ctx); err != nil {
			return err
		}
	}
	for from := ancestor; from < head.Height; {
		to := min(head.Height, from+BlockChunk)
		if parent, err = w.scan(ctx, head, from, to, parent); err != nil {
			return err
		}
		from = to
	}
	// Transfers due again may be payments of the last batch forwarded.
	w.finishForward()
	return w.evaluateDue(ctx, head)
}

// chainReset reports, at the first poll of this watcher, whether its
// chain is ephemeral (chains.Ephemeral: the devnet) and no longer has the
// newest block stored: a server restarted with --dev on its database finds
// a new simulated chain, which is a reset, not a reorganisation. Later
// polls, and chains that outlive the process, never report one.
func (w *Watcher) chainReset(ctx context.Context, head chains.Head, stored []*entdb.ChainBlock) (bool, error) {
	if w.resetChecked {
		return false, nil
	}
	e, ok := w.backend.(chains.Ephemeral)
	if !ok || !e.Ephemeral() || len(stored) == 0 {
		w.resetChecked = true
		return false, nil
	}
	top := stored[0]
	reset := true // the chain is shorter than the stored one
	switch {
	case top.Height == head.Height:
		reset = top.Hash != head.Hash
	case top.Height < head.Height:
		bs, err := w.backend.Blocks(ctx, top.Height-1, top.Height)
		if err != nil {
			return false, fmt.Errorf("%s block %d: %w", w.ticker.Ticker, top.Height, err)
		}
		reset = len(bs) != 1 || bs[0].Hash != top.Hash
	}
	w.resetChecked = true
	return reset, nil
}

// commonAncestor returns the highest processed block that is still on the
// chain: processed itself unless a reorganisation replaced blocks.
func (w *Watcher) commonAncestor(ctx context.Context, head chains.Head, processed int64, stored []*entdb.ChainBlock) (int64, error) {
	if len(stored) == 0 {
		return min(processed, head.Height), nil // nothing to compare with
	}
	top, bottom := stored[0], stored[len(stored)-1]
	if top.Height == head.Height && top.Hash == head.Hash {
		return top.Height, nil
	}
	if top.Height < head.Height {
		bs, err := w.backend.Blocks(ctx, top.Height-1, top.Height)
		if err != nil {
			return 0, fmt.Errorf("%s block %d: %w", w.ticker.Ticker, top.Height, err)
		}
		if len(bs) == 1 && bs[0].Hash == top.Hash {
			return top.Height, nil
		}
	}
	hi := min(top.Height, head.Height)
	if hi < bottom.Height {
		w.logger.Error("chain reorganisation deeper than the blocks kept; rescanning from the chain's tip", "kept_from", bottom.Height, "tip", head.Height)
		return hi, nil
	}
	remote, err := w.backend.Blocks(ctx, bottom.Height-1, hi)
	if err != nil {
		return 0, fmt.Errorf("%s blocks %d..%d: %w", w.ticker.Ticker, bottom.Height, hi, err)
	}
	mine := make(map[int64]string, len(stored))
	for _, b := range stored {
		mine[b.Height] = b.Hash
	}
	for i := len(remote) - 1; i >= 0; i-- {
		if mine[remote[i].Height] == remote[i].Hash {
			return remote[i].Height, nil
		}
	}
	w.logger.Error("chain reorganisation deeper than the blocks kept; rescanning from the oldest kept", "kept_from", bottom.Height)
	return bottom.Height - 1, nil
}

// rollback forgets the blocks above ancestor: their hashes go, the cursor
// returns to ancestor, and every transfer they included is due at once with
// its height unknown. The rescan that follows finds those a replacement
// block includes again; the others are evaluated with State, which reports
// them gone (dropped before credit; noted after, never credited twice).
//
// payhook's own transactions seen landed (the outbound engine's Follow)
// may have landed in a forgotten block, and the chain that replaces it may
// have them in no block and no pool (a node restarted from an older
// state: anvil from its last dump). Their heights are not recorded, so
// every one seen landed within ReopenLanded is followed again (state sent):
// Follow lands those a block still executes at its next call and sends the
// recorded bytes of the others again, never new ones. Until then their
// accounts' next transactions wait (an EVM nonce is not taken twice). A
// devnet reset (reopen false) reopens nothing: the previous simulated
// chain and its transactions are gone for good.
func (w *Watcher) rollback(ctx context.Context, ancestor int64, reopen bool) error {
	tk := w.ticker.Ticker
	return store.WithTx(ctx, w.svc.db.Client, func(tx *entdb.Tx) error {
		if reopen {
			now := w.svc.now()
			n, err := tx.Outbound.Update().
				Where(entoutbound.Ticker(tk), entoutbound.StateEQ(entoutbound.StateLanded), entoutbound.LandedAtGTE(now.Add(-ReopenLanded))).
				SetState(entoutbound.StateSent).ClearLandedAt().SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return fmt.Errorf("%s reopen landed outbounds: %w", tk, err)
			}
			if n > 0 {
				w.logger.Warn("chain reorganisation: following payhook's landed transactions again", "count", n)
			}
		}
		if _, err := tx.ChainBlock.Delete().Where(chainblock.Ticker(tk), chainblock.HeightGT(ancestor)).Exec(ctx); err != nil {
			return fmt.Errorf("%s roll back blocks: %w", tk, err)
		}
		if err := tx.WatchedTransfer.Update().Where(entwatched.Ticker(tk), entwatched.HeightGT(ancestor)).
			SetHeight(0).SetDue(0).Exec(ctx); err != nil {
			return fmt.Errorf("%s roll back transfers: %w", tk, err)
		}
		return w.setCursor(ctx, tx, ancestor)
	})
}

func (w *Watcher) setCursor(ctx context.Context, tx *entdb.Tx, height int64) error {
	now := w.svc.now()
	err := tx.ChainCursor.Create().SetTicker(w.ticker.Ticker).SetHeight(height).SetCreatedAt(now).SetUpdatedAt(now).
		OnConflictColumns(chaincursor.FieldTicker).UpdateHeight().UpdateUpdatedAt().Exec(ctx)
	if err != nil {
		return fmt.Errorf("%s cursor: %w", w.ticker.Ticker, err)
	}
	return nil
}

// scan applies the transfers of blocks from+1..to, whose parent (block
// from) has hash parent ("" when unknown), and records the blocks. It
// returns block to's hash.
func (w *Watcher) scan(ctx context.Context, head chains.Head, from, to int64, parent string) (string, error) {
	tk := w.ticker.Ticker
	blocks, err := w.backend.Blocks(ctx, from, to)
	if err != nil {
		return "", fmt.Errorf("%s blocks %d..%d: %w", tk, from+1, to, err)
	}
	if int64(len(blocks)) != to-from {
		return "", fmt.Errorf("%s blocks %d..%d: %d blocks: %w", tk, from+1, to, len(blocks), errChainMoved)
	}
	hashes := make(map[int64]string, len(blocks))
	for i, b := range blocks {
		want := parent
		if i > 0 {
			want = blocks[i-1].Hash
		}
		if b.Height != from+int64(i)+1 || b.Hash == "" || (want != "" && b.Parent != want) {
			return "", fmt.Errorf("%s block %d: %w", tk, b.Height, errChainMoved)
		}
		hashes[b.Height] = b.Hash
	}
	trs, err := w.backend.Transfers(ctx, from, to, w.isWatched)
	if err != nil {
		return "", fmt.Errorf("%s transfers %d..%d: %w", tk, from+1, to, err)
	}
	obs := make([]chains.Observation, 0, len(trs))
	for _, tr := range trs {
		if h, ok := hashes[tr.Height]; !ok || (tr.BlockHash != "" && tr.BlockHash != h) {
			return "", fmt.Errorf("%s transfer %s in block %d: %w", tk, tr.TxID, tr.Height, errChainMoved)
		}
		st, err := w.backend.State(ctx, tr)
		if err != nil {
			return "", fmt.Errorf("%s state of %s: %w", tk, tr.TxID, err)
		}
		obs = append(obs, chains.Observation{Transfer: tr, State: st})
	}
	record := func(tx *entdb.Tx) error {
		if _, err := tx.ChainBlock.Delete().Where(chainblock.Ticker(tk), chainblock.HeightGT(from)).Exec(ctx); err != nil {
			return fmt.Errorf("%s replace blocks: %w", tk, err)
		}
		rows := make([]*entdb.ChainBlockCreate, 0, min(len(blocks), KeepBlocks))
		for _, b := range blocks {
			if b.Height > to-KeepBlocks {
				rows = append(rows, tx.ChainBlock.Create().SetTicker(tk).SetHeight(b.Height).SetHash(b.Hash))
			}
		}
		if err := tx.ChainBlock.CreateBulk(rows...).Exec(ctx); err != nil {
			return fmt.Errorf("%s record blocks: %w", tk, err)
		}
		if to > KeepBlocks {
			if _, err := tx.ChainBlock.Delete().Where(chainblock.Ticker(tk), chainblock.HeightLTE(to-KeepBlocks)).Exec(ctx); err != nil {
				return fmt.Errorf("%s forget old blocks: %w", tk, err)
			}
			if _, err := tx.WatchedTransfer.Delete().Where(entwatched.Ticker(tk), entwatched.DueIsNil(), entwatched.HeightLTE(to-KeepBlocks)).Exec(ctx); err != nil {
				return fmt.Errorf("%s forget settled transfers: %w", tk, err)
			}
		}
		return w.setCursor(ctx, tx, to)
	}
	for i := 0; i == 0 || i < len(obs); i += BatchSize {
		batch := obs[i:min(i+BatchSize, len(obs))]
		var then func(*entdb.Tx) error
		if i+BatchSize >= len(obs) {
			then = record
		}
		if err := w.apply(ctx, head, batch, then); err != nil {
			return "", err
		}
	}
	return blocks[len(blocks)-1].Hash, nil
}

// evaluateDue applies the transfers due at head, BatchSize at a time. Each
// comes out due later or not at all, so the loop ends.
func (w *Watcher) evaluateDue(ctx context.Context, head chains.Head) error {
	tk := w.ticker.Ticker
	for {
		rows, err := w.svc.db.Client.WatchedTransfer.Query().
			Where(entwatched.Ticker(tk), entwatched.DueLTE(head.Height)).
			Order(entdb.Asc(entwatched.FieldDue), entdb.Asc(entwatched.FieldID)).
			Limit(BatchSize).All(ctx)
		if err != nil {
			return fmt.Errorf("%s due transfers: %w", tk, err)
		}
		if len(rows) == 0 {
			return nil
		}
		obs := make([]chains.Observation, len(rows))
		ids := make([]int64, len(rows))
		for i, r := range rows {
			tr := chains.Transfer{TxID: r.Txid, Index: r.OutputIndex, To: r.AddressIn, Value: r.ValueCoin, Height: r.Height}
			st, err := w.backend.State(ctx, tr)
			if err != nil {
				return fmt.Errorf("%s state of %s: %w", tk, tr.TxID, err)
			}
			if tr.Height == 0 && st.Present && st.Confirmations > 0 {
				tr.Height = max(1, head.Height-st.Confirmations+1) // moved by a reorganisation
			}
			obs[i], ids[i] = chains.Observation{Transfer: tr, State: st}, r.ID
		}
		// A row the batch did not reschedule (its address is gone) is not
		// looked at again, so the loop ends whatever happens.
		settle := func(tx *entdb.Tx) error {
			err := tx.WatchedTransfer.Update().Where(entwatched.IDIn(ids...), entwatched.DueLTE(head.Height)).ClearDue().Exec(ctx)
			if err != nil {
				return fmt.Errorf("%s settle transfers: %w", tk, err)
			}
			return nil
		}
		if err := w.apply(ctx, head, obs, settle); err != nil {
			return err
		}
		if len(rows) < BatchSize {
			return nil
		}
	}
}

// apply applies one batch, then forwards what it credited.
func (w *Watcher) apply(ctx context.Context, head chains.Head, obs []chains.Observation, then func(*entdb.Tx) error) error {
	for _, o := range obs {
		if w.forwardingTo[o.Transfer.To] {
			w.finishForward() // an address of the batch being forwarded
			break
		}
	}
	fwd, err := w.svc.applyBatch(ctx, w.ticker, head, obs, then)
	if err != nil {
		return fmt.Errorf("%s apply %d observations: %w", w.ticker.Ticker, len(obs), err)
	}
	// Forwards go one batch at a time, in the order applied; each runs
	// while the next batch applies, unless that batch has a transfer to an
	// address of this one (then it waits: payments of one address, an
	// invoice's held ones, are forwarded from what their batches left), so
	// a block of many payments keeps both the database and the notifier
	// busy instead of taking turns.
	w.finishForward()
	if len(fwd) == 0 {
		return nil
	}
	w.forwardingTo = make(map[string]bool, len(obs))
	for _, o := range obs {
		w.forwardingTo[o.Transfer.To] = true
	}
	done := make(chan bool, 1)
	w.forwarding = done
	go func() {
		// A forwarding failure (fee estimate, broadcast) must not stop the
		// watcher: it is logged, and the next poll tries again (a
		// transaction already planned is finished by the engine's Resume).
		open, err := w.svc.forward(ctx, w.ticker, fwd)
		if err != nil {
			w.logger.Error("forward payments; retried at the next poll", "payments", len(fwd), "error", err)
		}
		done <- open
	}()
	return nil
}

// finishForward waits for the forward running in the background, if any
// (pollMu is held).
func (w *Watcher) finishForward() {
	if w.forwarding == nil {
		return
	}
	open := <-w.forwarding
	w.forwarding, w.forwardingTo = nil, nil
	w.reconcile = w.reconcile || open
}

// adopt starts watching the open payments recorded before the ticker's
// blocks were (a database written by a watcher that kept no block hashes):
// each becomes due at once, its height unknown.
func (w *Watcher) adopt(ctx context.Context) error {
	tk := w.ticker.Ticker
	open, err := w.svc.db.Client.Payment.Query().
		Where(
			entpayment.Ticker(tk),
			entpayment.StatusIn(entpayment.StatusPending, entpayment.StatusConfirmed),
			entpayment.Not(entpayment.And(entpayment.StatusEQ(entpayment.StatusConfirmed), entpayment.HoldReasonNEQ(entpayment.HoldReasonNone))),
		).
		WithAddress().All(ctx)
	if err != nil {
		return fmt.Errorf("%s open payments: %w", tk, err)
	}
	for i := 0; i < len(open); i += BatchSize {
		var rows []*entdb.WatchedTransferCreate
		for _, p := range open[i:min(i+BatchSize, len(open))] {
			rows = append(rows, w.svc.db.Client.WatchedTransfer.Create().
				SetTicker(tk).SetAddressIn(p.Edges.Address.AddressIn).SetTxid(p.TxidIn).SetOutputIndex(p.OutputIndex).
				SetValueCoin(p.ValueCoin).SetHeight(0).SetDue(0).SetPaymentID(p.ID))
		}
		err := w.svc.db.Client.WatchedTransfer.CreateBulk(rows...).
			OnConflictColumns(entwatched.FieldTicker, entwatched.FieldAddressIn, entwatched.FieldTxid, entwatched.FieldOutputIndex).
			DoNothing().Exec(ctx)
		if err != nil {
			return fmt.Errorf("%s watch open payments: %w", tk, err)
		}
	}
	if len(open) > 0 {
		w.logger.Info("watching the open payments recorded before block hashes were kept", "payments", len(open))
	}
	return nil
}

// loadAddresses brings the service's address book up to date (one row
// read when no address was created since: every poll can afford it, and
// the mempool is read for fresh addresses, mempool.go) and tells a backend
// that must know its addresses (chains.AddressWatcher) of the new ones.
func (w *Watcher) loadAddresses(ctx context.Context) error {
	if err := w.svc.book.refresh(ctx, w.svc.db.Client); err != nil {
		return fmt.Errorf("%s %w", w.ticker.Ticker, err)
	}
	if aw, ok := w.backend.(chains.AddressWatcher); ok {
		w.addrMu.Lock()
		added := w.svc.book.since(&w.bookPos, w.ticker.Ticker, w.same, w.other)
		w.addrMu.Unlock()
		if len(added) > 0 {
			aw.Watch(added...)
		}
	}
	return nil
}

// isWatched reports whether a transfer to address is one the watcher
// watches (the address book).
func (w *Watcher) isWatched(address string) bool {
	return w.svc.book.watched(w.ticker.Ticker, w.same, w.other, address)
}

// Start polls in the background until Stop, every interval and at once
// when woken (Wake, WaitHeight); it returns once the loop runs. ctx's values
// reach the polls, its cancellation does not: Stop ends the loop. A watcher
// starts once (startstop.ErrStarted).
func (w *Watcher) Start(ctx context.Context) error {
	ctx, err := w.StartInit(ctx)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.ticker.Ticker, err)
	}
	w.Go(func() {
		t := time.NewTimer(w.interval)
		defer t.Stop()
		failures := 0
		for {
			wait := w.interval
			if err := w.PollOnce(ctx); err != nil && ctx.Err() == nil {
				failures++
				wait = Backoff(w.interval, failures)
				w.logger.Error("chain watcher poll failed; retrying with backoff from the durable cursor",
					"ticker", w.ticker.Ticker, "error", err, "failures", failures, "retry_in", wait)
			} else {
				failures = 0
			}
			t.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-w.wake:
			}
		}
	})
	return nil
}

// MaxBackoff bounds the wait between polls of a failing node.
const MaxBackoff = time.Minute

// Backoff returns the wait after failures consecutive failed polls: the
// interval doubled per failure, at most MaxBackoff (never below interval).
func Backoff(interval time.Duration, failures int) time.Duration {
	d := interval
	for i := 1; i < failures && d < MaxBackoff; i++ {
		d *= 2
	}
	return max(interval, min(d, MaxBackoff))
}

// Health is a watcher's state as /healthz and the metrics show it.
type Health struct {
	// Healthy is false while the node's last poll failed.
	Healthy bool
	// Error is the last poll's error ("" when it succeeded).
	Error string
	// Head is the node's tip as last read; Cursor the height processed.
	Head, Cursor int64
	// LastPoll is when the last poll ended; LastSuccess when one last
	// succeeded (zero before the first).
	LastPoll, LastSuccess time.Time
	// Errors counts failed polls since the start.
	Errors uint64
	// Polled is false before the first poll ended.
	Polled bool
	// Watching is true while this instance holds the ticker's lease: it
	// is the one instance that watches and forwards the ticker.
	Watching bool
}

// Health returns the watcher's health.
func (w *Watcher) Health() Health {
	w.healthMu.Lock()
	defer w.healthMu.Unlock()
	h := w.health
	h.Watching = w.svc.lease.isHeld(w.ticker.Ticker)
	w.progMu.Lock()
	h.Cursor = max(h.Cursor, w.processed)
	w.progMu.Unlock()
	return h
}

func (w *Watcher) recordPoll(err error) {
	now := w.svc.now()
	w.healthMu.Lock()
	defer w.healthMu.Unlock()
	w.health.Polled, w.health.LastPoll = true, now
	if err != nil {
		w.health.Healthy, w.health.Error = false, err.Error()
		w.health.Errors++
		return
	}
	w.health.Healthy, w.health.Error, w.health.LastSuccess = true, "", now
}

// Stop ends background polling, waits, and gives the ticker's lease up so
// another instance takes over at once (also when only PollOnce was used);
// it is idempotent.
func (w *Watcher) Stop() {
	w.Base.Stop()
	w.pollMu.Lock()
	w.known = nil
	w.pollMu.Unlock()
	w.svc.lease.release(w.ticker.Ticker)
}
