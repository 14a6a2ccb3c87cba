package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
)

// Purpose says which caller planned a transaction.
type Purpose = entoutbound.Purpose

// The purposes.
const (
	PurposeForward = entoutbound.PurposeForward
	PurposeSweep   = entoutbound.PurposeSweep
	PurposePayout  = entoutbound.PurposePayout
	PurposeRefund  = entoutbound.PurposeRefund
)

// BatchSize is the most transactions Resume and Follow take at once.
const BatchSize = 500

// Minimums tells the smallest amount one output to an address may carry
// on a ticker's network (chains.Family.MinOutput): dust, a rent-exempt
// minimum, or zero.
type Minimums interface {
	MinOutput(t chains.Ticker, addr string) (decimal.Decimal, error)
}

// Handler is what a caller does when its transactions change state. Each
// method runs inside the engine's database transaction that records the
// change, and must use tx for everything it stores; an error rolls the
// change back (the engine tries again later).
type Handler interface {
	// Sent: the network accepted sent (all of t, of the handler's
	// purpose); complete what they carry.
	Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, sent []*entdb.Outbound) error
	// Replaced: old can never land; next, with the same content, takes its
	// place.
	Replaced(ctx context.Context, tx *entdb.Tx, old, next *entdb.Outbound) error
	// Failed: o can never move funds as planned (cause says why); take back
	// what it carried.
	Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error
	// Bounced: o was sent (Sent ran) and a block included it and failed its
	// execution (EVM, TRON): nothing it carried moved, its network fee was
	// paid. Take back what Sent completed.
	Bounced(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound) error
}

// Faults inject crashes, for tests: a hook that returns an error stops the
// engine there, as a crash would.
type Faults struct {
	// AfterSign runs after a Sign succeeded, before its bytes are
	// recorded: by Send's own database transaction, or, for a backend
	// that signs offline, by the planning transaction (PlanAll then
	// returns the hook's error, and the caller's transaction records
	// nothing).
	AfterSign func() error
	// AfterRecord runs after signed bytes are recorded, before the first
	// send.
	AfterRecord func() error
	// AfterSend runs after a send the network accepted, before it is
	// recorded.
	AfterSend func() error
}

// Config configures an Engine.
type Config struct {
	// Backends maps tickers to the chains that sign and send.
	Backends map[string]chains.Backend
	// Minimums checks every planned output; nil asks each ticker's family
	// (chains.Ticker.Rules().MinOutput).
	Minimums Minimums
	// Now is the clock; clock.Now when nil.
	Now func() time.Time
	// Faults are for tests.
	Faults Faults
}

// Engine sends outgoing transactions (see the package doc). It is safe for
// concurrent use.
type Engine struct {
	db       *store.DB
	backends map[string]chains.Backend
	minimums Minimums
	now      func() time.Time
	faults   Faults
	logger   *slog.Logger

	mu       sync.RWMutex
	handlers map[Purpose]Handler
	// left are the tickers with transactions a Send of this instance left
	// planned or signed (a failed sign or send): their watcher resumes
	// them at its next poll (Left), whoever planned them.
	left map[string]bool
}

// New returns an Engine.
func New(db *store.DB, cfg Config, logger *slog.Logger) *Engine {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	return &Engine{db: db, backends: cfg.Backends, minimums: cfg.Minimums, now: cfg.Now, faults: cfg.Faults,
		logger: logger, handlers: map[Purpose]Handler{}, left: map[string]bool{}}
}

// Handle registers the handler of purpose p's transactions. Register before
// the first Plan of p.
func (e *Engine) Handle(p Purpose, h Handler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.handlers[p] = h
}

func (e *Engine) handler(p Purpose) (Handler, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	h, ok := e.handlers[p]
	if !ok {
		return nil, fmt.Errorf("outbound: no handler for %s transactions", p)
	}
	return h, nil
}

// Intent is a transaction a caller plans.
type Intent struct {
	// Key identifies the transaction; planning a key twice fails with a
	// constraint error.
	Key string
	// Ticker is the coin and network.
	Ticker chains.Ticker
	// Purpose is the caller's.
	Purpose Purpose
	// ProjectID owns the funds; 0 for the operator's.
	ProjectID int64
	// From is the payhook address the funds leave; FromIndex its
	// derivation index.
	From      string
	FromIndex uint32
	// Inputs are what it spends.
	Inputs []chains.Transfer
	// Keys are the derivation indexes of the input addresses other than
	// From (chains.Forward.Keys): a payout spends the held outputs of
	// several addresses. Nil when every input is on From.
	Keys map[string]uint32
	// Outputs are the destinations and amounts.
	Outputs []chains.Output
	// NetworkFee is what the plan sets aside for the network.
	NetworkFee decimal.Decimal
	// GasPercent is chains.Forward.GasPercent (an EVM forward's priority).
	GasPercent int
}

// Check reports the first of outputs (of t) the network cannot carry, as a
// *BelowMinimumError, after summing the outputs to one destination; a
// failure to tell is returned as it is.
func (e *Engine) Check(t chains.Ticker, outputs []chains.Output) error {
	minimums := e.minimums
	if minimums == nil {
		minimums = t.Rules() // an unbound ticker's rules answer errors
	}
	for _, o := range merge(outputs) {
		min, err := minimums.MinOutput(t, o.Address)
		if err != nil {
			return fmt.Errorf("minimum output to %s: %w", o.Address, err)
		}
		if o.Amount.LessThan(min) {
			return &BelowMinimumError{Ticker: t.Ticker, Address: o.Address, Amount: o.Amount, Minimum: min}
		}
	}
	return nil
}

// FeeFor quotes the network fee of a transaction of t spending inputs
// outputs into outputs outputs: the backend's chains.FeeQuoter, or its
// NetworkFee when its fee does not depend on the size.
func (e *Engine) FeeFor(ctx context.Context, t chains.Ticker, inputs, outputs int) (decimal.Decimal, error) {
	b, ok := e.backends[t.Ticker]
	if !ok {
		return decimal.Zero, fmt.Errorf("%s fee: no backend", t.Ticker)
	}
	if q, ok := b.(chains.FeeQuoter); ok {
		return q.FeeFor(ctx, inputs, outputs)
	}
	return b.NetworkFee(ctx)
}

// merge sums the outputs to one address (in the order addresses first
// appear) and drops zero amounts: a transaction pays each destination once.
func merge(outputs []chains.Output) []chains.Output {
	out := make([]chains.Output, 0, len(outputs))
	at := map[string]int{}
	for _, o := range outputs {
		i, ok := at[o.Address]
		if !ok {
			i = len(out)
			at[o.Address] = i
			out = append(out, chains.Output{Address: o.Address, Amount: decimal.Zero, Key: o.Key})
		}
		out[i].Amount = out[i].Amount.Add(o.Amount)
	}
	n := 0
	for _, o := range out {
		if o.Amount.Sign() > 0 {
			out[n] = o
			n++
		}
	}
	return out[:n]
}

// Plan records the transaction in, within tx, after Check. Nothing is
// signed or sent until Send (or signed now, by a backend that signs
// offline: signOffline).
func (e *Engine) Plan(ctx context.Context, tx *entdb.Tx, in Intent) (*entdb.Outbound, error) {
	os, err := e.PlanAll(ctx, tx, []Intent{in})
	if err != nil {
		return nil, err
	}
	return os[0], nil
}

// PlanAll is Plan for several transactions, recorded with one statement
// (store.InsertRows) and returned in the order of ins.
func (e *Engine) PlanAll(ctx context.Context, tx *entdb.Tx, ins []Intent) ([]*entdb.Outbound, error) {
	if len(ins) == 0 {
		return nil, nil
	}
	now := e.now()
	os := make([]*entdb.Outbound, len(ins))
	rows := make([][]any, len(ins))
	for i, in := range ins {
		outs := merge(in.Outputs)
		if len(outs) == 0 {
			return nil, fmt.Errorf("outbound %s: no outputs", in.Key)
		}
		if err := e.Check(in.Ticker, outs); err != nil {
			return nil, err
		}
		o := &entdb.Outbound{
			CreatedAt: now, UpdatedAt: now, Key: in.Key, Ticker: in.Ticker.Ticker, Purpose: in.Purpose, ProjectID: in.ProjectID,
			FromAddress: in.From, FromIndex: int64(in.FromIndex), Inputs: transfers(in.Inputs, in.From, in.Keys), Outputs: outputs(outs),
			NetworkFee: in.NetworkFee, GasPercent: in.GasPercent, State: entoutbound.StatePlanned,
		}
		if err := e.signOffline(ctx, o, in, outs); err != nil {
			return nil, err
		}
		inputs, err := json.Marshal(o.Inputs)
		if err != nil {
			return nil, fmt.Errorf("outbound %s: %w", in.Key, err)
		}
		outputs, err := json.Marshal(o.Outputs)
		if err != nil {
			return nil, fmt.Errorf("outbound %s: %w", in.Key, err)
		}
		var signed any
		if o.SignedTx != nil {
			signed = *o.SignedTx
		}
		os[i], rows[i] = o, []any{o.CreatedAt, o.UpdatedAt, o.Key, o.Ticker, string(o.Purpose), o.ProjectID, o.FromAddress, o.FromIndex,
			inputs, outputs, o.NetworkFee, string(o.State), signed, o.Txid, o.Sends, o.LastError, o.GasPercent}
	}
	ids, err := store.InsertRows(ctx, tx, e.db.Dialect, entoutbound.Table, outboundColumns, rows, "", true)
	if err != nil {
		return nil, fmt.Errorf("record %d outbounds: %w", len(ins), err)
	}
	for i, o := range os {
		o.ID = ids[i]
	}
	return os, nil
}

// outboundColumns are the columns PlanAll records, in the order of its
// rows (as ent would: inputs and outputs as JSON).
var outboundColumns = []store.Column{
	{Name: entoutbound.FieldCreatedAt, PGType: "timestamptz"}, {Name: entoutbound.FieldUpdatedAt, PGType: "timestamptz"},
	{Name: entoutbound.FieldKey, PGType: "text"}, {Name: entoutbound.FieldTicker, PGType: "text"},
	{Name: entoutbound.FieldPurpose, PGType: "text"}, {Name: entoutbound.FieldProjectID, PGType: "bigint"},
	{Name: entoutbound.FieldFromAddress, PGType: "text"}, {Name: entoutbound.FieldFromIndex, PGType: "bigint"},
	{Name: entoutbound.FieldInputs, PGType: "jsonb"}, {Name: entoutbound.FieldOutputs, PGType: "jsonb"},
	{Name: entoutbound.FieldNetworkFee, PGType: "numeric"}, {Name: entoutbound.FieldState, PGType: "text"},
	{Name: entoutbound.FieldSignedTx, PGType: "bytea"}, {Name: entoutbound.FieldTxid, PGType: "text"},
	{Name: entoutbound.FieldSends, PGType: "bigint"}, {Name: entoutbound.FieldLastError, PGType: "text"},
	{Name: entoutbound.FieldGasPercent, PGType: "bigint"},
}

// signOffline signs the transaction o plans when its ticker's backend
// signs offline (chains.OfflineSigner), so that its bytes are recorded by
// the planning transaction itself. Any failure to sign leaves it planned:
// Send signs it again and deals with the error (a refusal fails it). The
// only error returned is that of the AfterSign fault hook.
func (e *Engine) signOffline(ctx context.Context, o *entdb.Outbound, in Intent, outs []chains.Output) error {
	b, ok := e.backends[in.Ticker.Ticker]
	if !ok || !chains.SignsOffline(b) {
		return nil
	}
	f := chains.Forward{ID: in.Key, From: in.From, FromIndex: in.FromIndex, Inputs: in.Inputs, Outputs: outs, NetworkFee: in.NetworkFee, Keys: in.Keys, GasPercent: in.GasPercent,
		Purpose: string(in.Purpose), ProjectID: in.ProjectID}
	sg, err := b.Sign(ctx, f)
	if err != nil {
		return nil
	}
	if err := e.afterSign(); err != nil {
		return err
	}
	raw := sg.Raw
	o.SignedTx, o.Txid, o.State = &raw, sg.TxID, entoutbound.StateSigned
	return nil
}

// afterSign runs the AfterSign fault hook, if any.
func (e *Engine) afterSign() error {
	if e.faults.AfterSign == nil {
		return nil
	}
	return e.faults.AfterSign()
}

// transfers records ts, each input on another address than from with its
// key's index (keys).
func transfers(ts []chains.Transfer, from string, keys map[string]uint32) []schema.Transfer {
	out := make([]schema.Transfer, len(ts))
	for i, t := range ts {
		out[i] = schema.Transfer{TxID: t.TxID, Index: t.Index, To: t.To, Value: t.Value}
		if k, ok := keys[t.To]; ok && t.To != from {
			key := int64(k)
			out[i].Key = &key
		}
	}
	return out
}

func outputs(os []chains.Output) []schema.Output {
	out := make([]schema.Output, len(os))
	for i, o := range os {
		out[i] = schema.Output{Address: o.Address, Amount: o.Amount}
		if o.Key != nil {
			k := int64(*o.Key)
			out[i].Key = &k
		}
	}
	return out
}

// forward is the backend's view of o.
func forward(o *entdb.Outbound) chains.Forward {
	f := chains.Forward{ID: o.Key, From: o.FromAddress, FromIndex: uint32(o.FromIndex), NetworkFee: o.NetworkFee, GasPercent: o.GasPercent,
		Purpose: string(o.Purpose), ProjectID: o.ProjectID}
	for _, in := range o.Inputs {
		f.Inputs = append(f.Inputs, chains.Transfer{TxID: in.TxID, Index: in.Index, To: in.To, Value: in.Value})
		if in.Key != nil {
			if f.Keys == nil {
				f.Keys = map[string]uint32{}
			}
			f.Keys[in.To] = uint32(*in.Key)
		}
	}
	for _, out := range o.Outputs {
		co := chains.Output{Address: out.Address, Amount: out.Amount}
		if out.Key != nil {
			k := uint32(*out.Key)
			co.Key = &k
		}
		f.Outputs = append(f.Outputs, co)
	}
	f.Outputs = merge(f.Outputs)
	return f
}

// Send signs, records and sends the transactions ids of t that are planned
// or signed (others are skipped), and marks those the network accepted
// sent, calling their handlers. open reports that some are left for Resume
// (a failed sign or send). Errors are joined; each transaction is tried.
func (e *Engine) Send(ctx context.Context, t chains.Ticker, ids []int64) (open bool, err error) {
	if len(ids) == 0 {
		return false, nil
	}
	if _, ok := e.backends[t.Ticker]; !ok {
		return true, fmt.Errorf("send %d %s transactions: no backend", len(ids), t.Ticker)
	}
	// By id alone (see unsent).
	all, err := e.db.Client.Outbound.Query().Where(entoutbound.IDIn(ids...)).Order(entdb.Asc(entoutbound.FieldID)).All(ctx)
	if err != nil {
		return true, fmt.Errorf("load %d outbounds: %w", len(ids), err)
	}
	return e.send(ctx, t, unsent(all))
}

// SendPlanned is Send for the rows Plan or PlanAll just returned, once the
// transaction that planned them committed: they are not read again. (A
// second instance that sends them too is harmless: the bytes are the same
// and markSent marks each once.)
func (e *Engine) SendPlanned(ctx context.Context, t chains.Ticker, os []*entdb.Outbound) (open bool, err error) {
	if len(os) == 0 {
		return false, nil
	}
	if _, ok := e.backends[t.Ticker]; !ok {
		return true, fmt.Errorf("send %d %s transactions: no backend", len(os), t.Ticker)
	}
	return e.send(ctx, t, unsent(os))
}

// Left reports whether a Send of this instance left transactions of t
// planned or signed since the last Resume of t that finished them all: the
// watcher of t then resumes at its next poll, even without a new block.
func (e *Engine) Left(t chains.Ticker) bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.left[t.Ticker]
}

func (e *Engine) setLeft(t chains.Ticker, left bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if left {
		e.left[t.Ticker] = true
	} else {
		delete(e.left, t.Ticker)
	}
}

// send is Send for the rows os, planned or signed.
func (e *Engine) send(ctx context.Context, t chains.Ticker, os []*entdb.Outbound) (open bool, err error) {
	defer func() {
		if open {
			e.setLeft(t, true)
		}
	}()
	if !t.Rules().SpendsSeveralAddresses(t) {
		return e.sendInTurn(ctx, t, os)
	}
	backend := e.backends[t.Ticker]
	var errs []error
	// Sign what has no bytes yet, then record every signature in one
	// database transaction before anything is sent.
	var signed []*entdb.Outbound
	var refused []refusal
	sigs := map[int64]chains.Signed{}
	for _, o := range os {
		if hasBytes(o) {
			signed = append(signed, o)
			continue
		}
		sg, err := backend.Sign(ctx, forward(o))
		switch {
		case errors.Is(err, chains.ErrInvalidForward):
			refused = append(refused, refusal{o, err})
		case err != nil:
			open = true
			errs = append(errs, fmt.Errorf("sign %s: %w", o.Key, err))
			e.noteError(ctx, o, err)
		default:
			if err := e.afterSign(); err != nil {
				return true, err
			}
			sigs[o.ID] = sg
		}
	}
	if len(sigs) > 0 {
		recorded, err := e.record(ctx, os, sigs)
		if err != nil {
			return true, errors.Join(append(errs, err)...)
		}
		signed = append(signed, recorded...)
	}
	if len(signed) > 0 && e.faults.AfterRecord != nil {
		if err := e.faults.AfterRecord(); err != nil {
			return true, err
		}
	}
	if len(refused) > 0 {
		if err := e.fail(ctx, t, refused); err != nil {
			open = true
			errs = append(errs, err)
		}
	}
	var accepted []int64
	var lost []*entdb.Outbound
	for _, o := range signed {
		err := backend.Send(ctx, chains.Signed{TxID: o.Txid, Raw: *o.SignedTx})
		switch {
		case errors.Is(err, chains.ErrNeverLands):
			e.logger.Warn("a signed transaction can never move funds; a new one replaces it", "ticker", t.Ticker, "key", o.Key, "txid", o.Txid, "reason", err.Error())
			lost = append(lost, o)
		case err != nil:
			open = true
			errs = append(errs, fmt.Errorf("send %s (%s): %w", o.Key, o.Txid, err))
			e.noteError(ctx, o, err)
		default:
			if e.faults.AfterSend != nil {
				if err := e.faults.AfterSend(); err != nil {
					return true, err
				}
			}
			accepted = append(accepted, o.ID)
		}
	}
	if len(accepted) > 0 {
		if err := e.markSent(ctx, t, accepted, signed); err != nil {
			open = true
			errs = append(errs, err)
		}
	}
	if len(lost) > 0 {
		open = true // the replacements are sent by Resume
		if err := e.replace(ctx, lost); err != nil {
			errs = append(errs, err)
		}
	}
	return open, errors.Join(errs...)
}

// sendInTurn is send for an account chain, whose transactions take
// consecutive nonces of their sender as the node counts them when they are
// signed (the payment address's, and the operator's gas address's for a
// token's top-up, which every token transaction shares): the rows with
// recorded bytes are sent first, then each other row is signed, recorded
// and sent before the next is signed, so each signature sees the previous
// one in the node's pool. A sign or send that fails stops the turn (a
// later signature would take the same nonce): what is left is Resume's.
func (e *Engine) sendInTurn(ctx context.Context, t chains.Ticker, os []*entdb.Outbound) (open bool, err error) {
	backend := e.backends[t.Ticker]
	ordered := make([]*entdb.Outbound, 0, len(os))
	for _, o := range os {
		if hasBytes(o) {
			ordered = append(ordered, o)
		}
	}
	for _, o := range os {
		if !hasBytes(o) {
			ordered = append(ordered, o)
		}
	}
	for i, o := range ordered {
		if !hasBytes(o) {
			sg, err := backend.Sign(ctx, forward(o))
			if errors.Is(err, chains.ErrInvalidForward) {
				if err := e.fail(ctx, t, []refusal{{o, err}}); err != nil {
					return true, err
				}
				continue
			}
			if err != nil {
				e.noteError(ctx, o, err)
				return true, fmt.Errorf("sign %s: %w", o.Key, err)
			}
			if err := e.afterSign(); err != nil {
				return true, err
			}
			recorded, err := e.record(ctx, []*entdb.Outbound{o}, map[int64]chains.Signed{o.ID: sg})
			if err != nil {
				return true, err
			}
			if len(recorded) == 0 {
				continue // another instance got further
			}
			o = recorded[0]
			if e.faults.AfterRecord != nil {
				if err := e.faults.AfterRecord(); err != nil {
					return true, err
				}
			}
		}
		err := backend.Send(ctx, chains.Signed{TxID: o.Txid, Raw: *o.SignedTx})
		switch {
		case errors.Is(err, chains.ErrNeverLands):
			e.logger.Warn("a signed transaction can never move funds; a new one replaces it", "ticker", t.Ticker, "key", o.Key, "txid", o.Txid, "reason", err.Error())
			if err := e.replace(ctx, []*entdb.Outbound{o}); err != nil {
				return true, err
			}
			return true, nil // the replacement is Resume's, after what is left
		case err != nil:
			e.noteError(ctx, o, err)
			return true, fmt.Errorf("send %s (%s): %w; %d more wait their turn", o.Key, o.Txid, err, len(ordered)-i-1)
		}
		if e.faults.AfterSend != nil {
			if err := e.faults.AfterSend(); err != nil {
				return true, err
			}
		}
		if err := e.markSent(ctx, t, []int64{o.ID}, []*entdb.Outbound{o}); err != nil {
			return true, err
		}
	}
	return false, nil
}

// unsent returns the rows of os still to send (planned or signed). The
// engine reads its rows by id alone and checks their state here: with a
// state condition in the statement, a planner without statistics takes the
// (ticker, state) index for the more selective and reads every open row of
// the ticker, once per batch.
func unsent(os []*entdb.Outbound) []*entdb.Outbound {
	out := os[:0:0]
	for _, o := range os {
		if o.State == entoutbound.StatePlanned || o.State == entoutbound.StateSigned {
			out = append(out, o)
		}
	}
	return out
}

// hasBytes reports whether o's signed transaction is recorded. (ent reads
// a NULL bytes column as a pointer to an empty slice.)
func hasBytes(o *entdb.Outbound) bool { return o.SignedTx != nil && len(*o.SignedTx) > 0 }

// record records the signatures sigs (by outbound id) on the rows of os
// that have none yet, in one database transaction, and returns those rows
// with the bytes recorded: theirs, or another instance's that recorded
// first.
func (e *Engine) record(ctx context.Context, os []*entdb.Outbound, sigs map[int64]chains.Signed) ([]*entdb.Outbound, error) {
	ids := make([]int64, 0, len(sigs))
	for id := range sigs {
		ids = append(ids, id)
	}
	var out []*entdb.Outbound
	err := store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		if err := store.PlanByIndex(ctx, tx, e.db.Dialect, false); err != nil {
			return err
		}
		now := e.now()
		if e.db.Dialect == store.Postgres {
			// One statement for the batch (one array per column).
			var rids, txids []any
			var raws [][]byte
			for _, o := range os {
				if sg, ok := sigs[o.ID]; ok {
					rids, raws, txids = append(rids, o.ID), append(raws, sg.Raw), append(txids, sg.TxID)
				}
			}
			if _, err := tx.ExecContext(ctx, `UPDATE outbounds AS o SET signed_tx = v.raw, txid = v.txid, state = 'signed', updated_at = $4
				FROM unnest($1::bigint[], $2::bytea[], $3::text[]) AS v(id, raw, txid)
				WHERE o.id = v.id AND o.id = ANY($1::bigint[]) AND o.signed_tx IS NULL AND o.state = 'planned'`,
				store.Array(rids), store.ByteaArray(raws), store.Array(txids), now); err != nil {
				return fmt.Errorf("record %d signed transactions: %w", len(rids), err)
			}
		} else {
			for _, o := range os {
				sg, ok := sigs[o.ID]
				if !ok {
					continue
				}
				if err := tx.Outbound.Update().
					Where(entoutbound.ID(o.ID), entoutbound.SignedTxIsNil(), entoutbound.StateEQ(entoutbound.StatePlanned)).
					SetSignedTx(sg.Raw).SetTxid(sg.TxID).SetState(entoutbound.StateSigned).SetUpdatedAt(now).
					Exec(ctx); err != nil {
					return fmt.Errorf("record signed %s: %w", o.Key, err)
				}
			}
		}
		rows, err := tx.Outbound.Query().Where(entoutbound.IDIn(ids...)).Order(entdb.Asc(entoutbound.FieldID)).All(ctx)
		for _, o := range rows {
			if o.State == entoutbound.StateSigned && hasBytes(o) {
				out = append(out, o)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// markSent marks the transactions ids of t sent (only those still planned
// or signed: of two instances, one marks) and hands them to their handlers,
// in one database transaction. rows holds them as the engine read or
// planned them (their content never changes once planned).
func (e *Engine) markSent(ctx context.Context, t chains.Ticker, ids []int64, rows []*entdb.Outbound) error {
	return store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		if err := store.PlanByIndex(ctx, tx, e.db.Dialect, false); err != nil {
			return err
		}
		now := e.now()
		var marked map[int64]bool
		if e.db.Dialect == store.Postgres {
			// One statement locks the rows in id order and marks those
			// still open: of two instances, the second waits, then finds
			// them sent and marks none.
			var err error
			if marked, err = markSentReturning(ctx, tx, ids, now); err != nil {
				return err
			}
		} else {
			// SQLite has one writer: read, then mark.
			open, err := tx.Outbound.Query().Where(entoutbound.IDIn(ids...),
				entoutbound.StateIn(entoutbound.StatePlanned, entoutbound.StateSigned)).IDs(ctx)
			if err != nil {
				return fmt.Errorf("read %d outbounds: %w", len(ids), err)
			}
			if len(open) == 0 {
				return nil
			}
			if err := tx.Outbound.Update().Where(entoutbound.IDIn(open...)).
				SetState(entoutbound.StateSent).SetSentAt(now).SetUpdatedAt(now).AddSends(1).SetLastError("").
				Exec(ctx); err != nil {
				return fmt.Errorf("mark %d outbounds sent: %w", len(open), err)
			}
			marked = make(map[int64]bool, len(open))
			for _, id := range open {
				marked[id] = true
			}
		}
		var os []*entdb.Outbound
		for _, o := range rows {
			if marked[o.ID] {
				o.State, o.SentAt, o.UpdatedAt, o.Sends, o.LastError = entoutbound.StateSent, &now, now, o.Sends+1, ""
				os = append(os, o)
			}
		}
		if len(os) == 0 {
			return nil
		}
		return e.byPurpose(os, func(h Handler, g []*entdb.Outbound) error { return h.Sent(ctx, tx, t, g) })
	})
}

// markSentReturning marks the outbounds ids still planned or signed sent,
// locking them in id order, and returns those it marked (PostgreSQL).
func markSentReturning(ctx context.Context, tx *entdb.Tx, ids []int64, now time.Time) (map[int64]bool, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, `UPDATE outbounds AS o SET state = 'sent', sent_at = $2, updated_at = $2, sends = o.sends + 1, last_error = ''
		FROM (SELECT id FROM outbounds WHERE id = ANY($1::bigint[]) AND state IN ('planned', 'signed') ORDER BY id FOR UPDATE) AS l
		WHERE o.id = l.id RETURNING o.id`, store.Array(args), now)
	if err != nil {
		return nil, fmt.Errorf("mark %d outbounds sent: %w", len(ids), err)
	}
	defer rows.Close()
	marked := make(map[int64]bool, len(ids))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		marked[id] = true
	}
	return marked, rows.Err()
}

// byPurpose calls fn with each purpose's handler and its rows of os.
func (e *Engine) byPurpose(os []*entdb.Outbound, fn func(Handler, []*entdb.Outbound) error) error {
	var order []Purpose
	groups := map[Purpose][]*entdb.Outbound{}
	for _, o := range os {
		if groups[o.Purpose] == nil {
			order = append(order, o.Purpose)
		}
		groups[o.Purpose] = append(groups[o.Purpose], o)
	}
	for _, p := range order {
		h, err := e.handler(p)
		if err != nil {
			return err
		}
		if err := fn(h, groups[p]); err != nil {
			return err
		}
	}
	return nil
}

// refusal is a transaction its backend refuses to sign as planned.
type refusal struct {
	o     *entdb.Outbound
	cause error
}

// fail marks the refused transactions failed and hands each to its handler,
// in one database transaction.
func (e *Engine) fail(ctx context.Context, t chains.Ticker, rs []refusal) error {
	return store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		for _, r := range rs {
			n, err := tx.Outbound.Update().
				Where(entoutbound.ID(r.o.ID), entoutbound.StateEQ(entoutbound.StatePlanned)).
				SetState(entoutbound.StateFailed).SetLastError(r.cause.Error()).SetUpdatedAt(e.now()).Save(ctx)
			if err != nil {
				return fmt.Errorf("mark %s failed: %w", r.o.Key, err)
			}
			if n == 0 {
				continue // another instance got further
			}
			h, err := e.handler(r.o.Purpose)
			if err != nil {
				return err
			}
			if err := h.Failed(ctx, tx, t, r.o, r.cause); err != nil {
				return err
			}
			e.logger.Error("an outgoing transaction cannot be signed as planned: its funds are held for the operator",
				"ticker", t.Ticker, "key", r.o.Key, "reason", r.cause.Error())
		}
		return nil
	})
}

// replace marks each of os (signed, never to land) replaced and plans a
// new transaction with its content, whose allocations its handler moves
// over, in one database transaction.
func (e *Engine) replace(ctx context.Context, os []*entdb.Outbound) error {
	return store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		for _, o := range os {
			n, err := tx.Outbound.Update().
				Where(entoutbound.ID(o.ID), entoutbound.StateEQ(entoutbound.StateSigned)).
				SetState(entoutbound.StateReplaced).SetUpdatedAt(e.now()).Save(ctx)
			if err != nil {
				return fmt.Errorf("mark %s replaced: %w", o.Key, err)
			}
			if n == 0 {
				continue
			}
			now := e.now()
			next, err := tx.Outbound.Create().
				SetKey(nextKey(o.Key)).SetTicker(o.Ticker).SetPurpose(o.Purpose).SetProjectID(o.ProjectID).
				SetFromAddress(o.FromAddress).SetFromIndex(o.FromIndex).SetInputs(o.Inputs).SetOutputs(o.Outputs).SetNetworkFee(o.NetworkFee).SetGasPercent(o.GasPercent).
				SetReplacesID(o.ID).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
			if err != nil {
				return fmt.Errorf("plan the replacement of %s: %w", o.Key, err)
			}
			h, err := e.handler(o.Purpose)
			if err != nil {
				return err
			}
			if err := h.Replaced(ctx, tx, o, next); err != nil {
				return err
			}
		}
		return nil
	})
}

// nextKey is the key of the transaction that replaces the one of key k:
// k#2, then k#3, ...
func nextKey(k string) string {
	base, n, ok := strings.Cut(k, "#")
	if i, err := strconv.Atoi(n); ok && err == nil {
		return base + "#" + strconv.Itoa(i+1)
	}
	return k + "#2"
}

// noteError keeps err as o's last error, for the operator (best effort: a
// failure to record it is logged).
func (e *Engine) noteError(ctx context.Context, o *entdb.Outbound, err error) {
	if uerr := e.db.Client.Outbound.UpdateOneID(o.ID).SetLastError(err.Error()).SetUpdatedAt(e.now()).Exec(ctx); uerr != nil {
		e.logger.Warn("record an outgoing transaction's error", "key", o.Key, "error", uerr)
	}
}

// Resume sends t's transactions left planned or signed (by a crash, a
// failed sign or send, another instance, a replacement), BatchSize at a
// time. It reports whether some are still open.
func (e *Engine) Resume(ctx context.Context, t chains.Ticker) (open bool, err error) {
	// Cleared before the rows are read: a send that fails meanwhile sets it
	// again, so no failure is forgotten.
	e.setLeft(t, false)
	defer func() {
		if open || err != nil {
			e.setLeft(t, true)
		}
	}()
	var after int64
	for {
		ids, err := e.db.Client.Outbound.Query().
			Where(entoutbound.Ticker(t.Ticker), entoutbound.StateIn(entoutbound.StatePlanned, entoutbound.StateSigned), entoutbound.IDGT(after)).
			Order(entdb.Asc(entoutbound.FieldID)).Limit(BatchSize).IDs(ctx)
		if err != nil {
			return true, fmt.Errorf("open %s outbounds: %w", t.Ticker, err)
		}
		if len(ids) == 0 {
			return open, nil
		}
		o, err := e.Send(ctx, t, ids)
		if err != nil {
			return true, err
		}
		open = open || o
		if len(ids) < BatchSize {
			return open, nil
		}
		after = ids[len(ids)-1]
	}
}

// Follow asks t's backend about the transactions sent and not yet seen
// executed in a block (BatchSize at a time, oldest first): one a block
// executed lands; one a block included and failed is marked failed and
// handed to its handler's Bounced in the same database transaction (its
// funds did not move: they are held for the operator); one the chain does
// not show is sent again (the node may have dropped it).
func (e *Engine) Follow(ctx context.Context, t chains.Ticker) error {
	backend, ok := e.backends[t.Ticker]
	if !ok {
		return nil
	}
	os, err := e.db.Client.Outbound.Query().
		Where(entoutbound.Ticker(t.Ticker), entoutbound.StateEQ(entoutbound.StateSent), entoutbound.SignedTxNotNil()).
		Order(entdb.Asc(entoutbound.FieldID)).Limit(BatchSize).All(ctx)
	if err != nil {
		return fmt.Errorf("%s sent outbounds: %w", t.Ticker, err)
	}
	var landed []int64
	var failed []*entdb.Outbound
	var errs []error
	for _, o := range os {
		if !hasBytes(o) || o.Txid == "" {
			continue
		}
		to := ""
		if len(o.Outputs) > 0 {
			to = o.Outputs[0].Address
		}
		st, err := backend.State(ctx, chains.Transfer{TxID: o.Txid, To: to})
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("state of %s (%s): %w", o.Key, o.Txid, err))
		case st.Present && st.Executed:
			landed = append(landed, o.ID)
		case st.Present && st.Confirmations == 0:
			// Waiting in the node's pool: not judged before a block has it.
		case st.Present:
			e.logger.Error("an outgoing transaction failed in its block: its funds did not move and are held for the operator", "ticker", t.Ticker, "key", o.Key, "txid", o.Txid)
			failed = append(failed, o)
		default:
			if err := backend.Send(ctx, chains.Signed{TxID: o.Txid, Raw: *o.SignedTx}); err != nil {
				errs = append(errs, fmt.Errorf("send %s (%s) again: %w", o.Key, o.Txid, err))
			}
		}
	}
	now := e.now()
	if len(landed) > 0 {
		if err := e.db.Client.Outbound.Update().Where(entoutbound.IDIn(landed...), entoutbound.StateEQ(entoutbound.StateSent)).
			SetState(entoutbound.StateLanded).SetLandedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			errs = append(errs, fmt.Errorf("record landed outbounds: %w", err))
		}
	}
	for _, o := range failed {
		if err := e.bounce(ctx, t, o, now); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// bounce records that a block included o and failed it, and has its
// handler take back what it carried, in one database transaction: once
// (another instance that got there first leaves nothing to do).
func (e *Engine) bounce(ctx context.Context, t chains.Ticker, o *entdb.Outbound, now time.Time) error {
	h, err := e.handler(o.Purpose)
	if err != nil {
		return err
	}
	return store.WithTx(ctx, e.db.Client, func(tx *entdb.Tx) error {
		n, err := tx.Outbound.Update().Where(entoutbound.ID(o.ID), entoutbound.StateEQ(entoutbound.StateSent)).
			SetState(entoutbound.StateFailed).SetLastError("executed in a block and failed: the funds did not move").SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("record %s failed in its block: %w", o.Key, err)
		}
		if n == 0 {
			return nil
		}
		return h.Bounced(ctx, tx, t, o)
	})
}

// PurposePayoutPSBT is a payout from a merchant's watch-only key: the
// merchant signs it (PlanExternal, RecordSigned).
const PurposePayoutPSBT = entoutbound.PurposePayoutPsbt

// ErrNotAwaiting is a signature for a transaction that does not wait for
// one (signed already, or failed).
var ErrNotAwaiting = errors.New("the transaction does not wait for a signature")

// PlanExternal records in, within tx, as a transaction signed outside
// payhook (a merchant's PSBT): awaiting_signature, with the unsigned psbt
// the signed one must match. Nothing here signs, sends or resumes it
// until RecordSigned records its bytes; then Send sends it as any other.
func (e *Engine) PlanExternal(ctx context.Context, tx *entdb.Tx, in Intent, psbt []byte) (*entdb.Outbound, error) {
	outs := merge(in.Outputs)
	if len(outs) == 0 {
		return nil, fmt.Errorf("outbound %s: no outputs", in.Key)
	}
	if err := e.Check(in.Ticker, outs); err != nil {
		return nil, err
	}
	now := e.now()
	o, err := tx.Outbound.Create().
		SetCreatedAt(now).SetUpdatedAt(now).SetKey(in.Key).SetTicker(in.Ticker.Ticker).SetPurpose(in.Purpose).
		SetProjectID(in.ProjectID).SetFromAddress(in.From).SetFromIndex(int64(in.FromIndex)).
		SetInputs(transfers(in.Inputs, in.From, in.Keys)).SetOutputs(outputs(outs)).SetNetworkFee(in.NetworkFee).
		SetState(entoutbound.StateAwaitingSignature).SetPsbt(psbt).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("record outbound %s: %w", in.Key, err)
	}
	return o, nil
}

// RecordSigned records, within tx, the bytes raw (hash txid) of
// transaction id signed outside payhook: awaiting_signature becomes
// signed, and Send sends it. Another state is ErrNotAwaiting (a second
// upload of the same payout records nothing).
func (e *Engine) RecordSigned(ctx context.Context, tx *entdb.Tx, id int64, raw []byte, txid string) (*entdb.Outbound, error) {
	n, err := tx.Outbound.Update().
		Where(entoutbound.ID(id), entoutbound.StateEQ(entoutbound.StateAwaitingSignature)).
		SetSignedTx(raw).SetTxid(txid).SetState(entoutbound.StateSigned).SetUpdatedAt(e.now()).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("record the signed transaction %d: %w", id, err)
	}
	if n == 0 {
		return nil, ErrNotAwaiting
	}
	return tx.Outbound.Get(ctx, id)
}
