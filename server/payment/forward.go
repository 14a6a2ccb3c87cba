package payment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	entdb "github.com/payhook/payhook/ent/db"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entwatched "github.com/payhook/payhook/ent/db/watchedtransfer"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// Forward distributes a credited payment: planned, then sent by the
// outbound engine. It is safe to call any number of times and from several
// instances: a payment has at most one forward, its transaction one key.
func (s *Service) Forward(ctx context.Context, t chains.Ticker, paymentID int64) error {
	_, err := s.forward(ctx, t, []int64{paymentID})
	return err
}

// The logs' notes of forwarding, for people only.
const (
	// heldNote is the note of a payment whose address has no forwarding
	// address.
	heldNote = "held on address_in: the address has no forwarding address; the operator's payhook funds lists it for sweeping"
	// heldForMinimumNote is the note of a merchant payment held until its
	// address's payments together can be forwarded.
	heldForMinimumNote = "held for the minimum: credited, too small to forward alone, forwarded with the address's next payments once their sum can be"
	// belowDustNote is the note of a payment whose split would pay a
	// destination less than the network carries.
	belowDustNote = "held below dust: an output of its split is below what the network carries; the operator's payhook funds lists it"
)

// forward distributes the credited payments ids of t. One database
// transaction plans them: a payment whose address has no destination is
// held (no_wallet) and completed; a low-level payment is planned alone, a
// merchant address's payments together with its payments held for the
// minimum (planAddress); a plan below the coin's minimum, or with an output
// below what the network carries, is held (below_minimum, below_dust) and
// listed; every other plan becomes an outgoing transaction of the outbound
// engine, with one Forward per payment and the journal's plan entries. Then
// the engine signs, records and sends them, completing each payment (and
// storing its completed callback) in the transaction that records its send.
// open reports that something is left for the engine's Resume (a failed
// sign or send, or a transaction this call did not plan).
func (s *Service) forward(ctx context.Context, t chains.Ticker, ids []int64) (open bool, err error) {
	backend, ok := s.backends[t.Ticker]
	if !ok {
		return false, fmt.Errorf("forward %d payments: no backend for %s", len(ids), t.Ticker)
	}
	netFee, err := backend.NetworkFee(ctx)
	if err != nil {
		return false, fmt.Errorf("estimate network fee: %w", err)
	}
	var planned []*entdb.Outbound
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		planned, open = planned[:0], false
		if err := store.PlanByIndex(ctx, tx, s.db.Dialect, false); err != nil {
			return err
		}
		q := tx.Payment.Query().Where(entpayment.IDIn(ids...)).WithAddress().WithForward().Order(entdb.Asc(entpayment.FieldID))
		if s.db.Dialect == store.Postgres {
			q.ForUpdate() // a second instance waits, then sees the forwards
		}
		ps, err := q.All(ctx)
		if err != nil {
			return fmt.Errorf("load payments: %w", err)
		}
		pl := &planner{s: s, tx: tx, t: t, netFee: netFee, now: s.now()}
		var noWallet, direct []*entdb.Payment
		var merchant []*entdb.Address // in the order of their first payment
		byAddress := map[int64][]*entdb.Payment{}
		for _, p := range ps {
			if p.Status != entpayment.StatusConfirmed || p.HoldReason != entpayment.HoldReasonNone || p.Reorged {
				continue // completed already, or held
			}
			if f := p.Edges.Forward; f != nil {
				open = open || f.Status == entforward.StatusIntent
				continue
			}
			a := p.Edges.Address
			switch {
			case a.WatchKeyID != nil:
				direct = append(direct, p)
			case len(a.Destinations) == 0:
				noWallet = append(noWallet, p)
			case a.InvoiceID != nil:
				if byAddress[a.ID] == nil {
					merchant = append(merchant, a)
				}
				byAddress[a.ID] = append(byAddress[a.ID], p)
			default:
				if err := pl.alone(ctx, a, p); err != nil {
					return err
				}
			}
		}
		if err := s.holdNoWallet(ctx, tx, t, noWallet, pl.now, &pl.journal, &pl.pub); err != nil {
			return err
		}
		if err := s.completeDirect(ctx, tx, t, direct, pl.now, &pl.journal, &pl.pub); err != nil {
			return err
		}
		held, err := pl.held(ctx, merchant)
		if err != nil {
			return err
		}
		for _, a := range merchant {
			if err := pl.address(ctx, a, byAddress[a.ID], held[a.ID]); err != nil {
				return err
			}
		}
		planned, err = pl.commit(ctx)
		return err
	})
	if err != nil {
		return open, err
	}
	sendOpen, err := s.out.SendPlanned(ctx, t, planned)
	return open || sendOpen, err
}

// planner collects, within one database transaction, the forwards of a
// batch: the outgoing transactions, each with the Forward of every payment
// it carries, and the journal's entries; commit records them.
type planner struct {
	s      *Service
	tx     *entdb.Tx
	t      chains.Ticker
	netFee decimal.Decimal
	now    time.Time
	// fees are the network fees of the batch's addresses' priorities other
	// than default, quoted once each (fee).
	fees map[string]decimal.Decimal

	intents []outbound.Intent
	members [][]member // per intent
	journal []ledger.Entry
	pub     changes
	stop    []int64 // payments no longer watched (held)
}

// member is one payment's part of a planned transaction.
type member struct {
	p        *entdb.Payment // with its Address edge
	intentID string
	part     part
}

// alone plans the forward of low-level payment p of address a, alone, or
// holds it when it cannot be forwarded.
func (pl *planner) alone(ctx context.Context, a *entdb.Address, p *entdb.Payment) error {
	netFee, err := pl.fee(ctx, a)
	if err != nil {
		return err
	}
	plan, err := distribute.Compute(pl.t, p.ValueCoin, netFee, shares(a))
	if errors.Is(err, distribute.ErrBelowMinimum) || errors.Is(err, distribute.ErrNothingToForward) {
		// The network fee rose since the callbacks were stored: the payment
		// stays credited, is not forwarded, and is held (listed as held
		// funds); the logs say why.
		return pl.hold(ctx, a, p, entpayment.HoldReasonBelowMinimum, notForwardedNote+err.Error())
	}
	if err != nil {
		return fmt.Errorf("plan forward of payment %d: %w", p.ID, err)
	}
	if held, err := pl.belowDust(ctx, a, []*entdb.Payment{p}, plan); held || err != nil {
		return err
	}
	key := fmt.Sprintf("fwd-%d-%s", p.ID, p.TxidIn)
	return pl.add(a, key, []member{{p: p, intentID: key, part: part{fee: plan.Fee, networkFee: plan.NetworkFee, forwarded: plan.Forwarded, outputs: toSchema(plan.Outputs)}}}, plan)
}

// address plans, within the planner's transaction, the forwarding of ps,
// credited payments of the merchant address a (which has destinations),
// together with the address's payments held for the minimum or below dust:
// their sum is planned as one transaction. When the sum cannot be forwarded
// (below the ticker's minimum, consumed by the fees, or an output below
// dust), the payments not held yet are held (they stay credited: the
// merchant was told of them) until the address's next payments make the
// sum forwardable. Otherwise the held ones are released and each payment
// gets its own Forward, its share of the plan in proportion to its value
// (splitPlan), with an intent id naming the transaction's key (see
// broadcastKey); a payment alone keeps the low-level form.
func (pl *planner) address(ctx context.Context, a *entdb.Address, ps, held []*entdb.Payment) error {
	members := slices.Clone(ps)
	for _, p := range held {
		if !slices.ContainsFunc(members, func(m *entdb.Payment) bool { return m.ID == p.ID }) {
			members = append(members, p)
		}
	}
	slices.SortFunc(members, func(x, y *entdb.Payment) int { return cmp.Compare(x.ID, y.ID) })
	sum := decimal.Zero
	values := make([]decimal.Decimal, len(members))
	for i, m := range members {
		m.Edges.Address = a
		values[i] = m.ValueCoin
		sum = sum.Add(m.ValueCoin)
	}
	netFee, err := pl.fee(ctx, a)
	if err != nil {
		return err
	}
	plan, err := distribute.Compute(pl.t, sum, netFee, shares(a))
	if errors.Is(err, distribute.ErrBelowMinimum) || errors.Is(err, distribute.ErrNothingToForward) {
		for _, m := range members {
			if m.HoldReason == entpayment.HoldReasonNone {
				if err := pl.hold(ctx, a, m, entpayment.HoldReasonBelowMinimum, heldForMinimumNote); err != nil {
					return err
				}
			}
		}
		pl.s.logger.Info("payments held for the minimum: credited; forwarded with the address's next payments once their sum can be",
			"ticker", pl.t.Ticker, "address_in", a.AddressIn, "payments", len(members), "sum_coin", sum.String(), "reason", err.Error())
		return nil
	}
	if err != nil {
		return fmt.Errorf("plan forward of %d payments of address %d: %w", len(members), a.ID, err)
	}
	if held, err := pl.belowDust(ctx, a, members, plan); held || err != nil {
		return err
	}
	for _, m := range members {
		if m.HoldReason == entpayment.HoldReasonNone {
			continue
		}
		// Held until now: forwarded with this transaction.
		if err := pl.tx.Payment.UpdateOne(m).SetHoldReason(entpayment.HoldReasonNone).SetUpdatedAt(pl.now).Exec(ctx); err != nil {
			return fmt.Errorf("release payment %d: %w", m.ID, err)
		}
		pl.journal = append(pl.journal, ledger.Release(pl.t, ref(a, m), m.ValueCoin))
	}
	last := members[len(members)-1]
	key := fmt.Sprintf("fwd-%d-%s", last.ID, last.TxidIn)
	if len(members) == 1 {
		return pl.add(a, key, []member{{p: last, intentID: key, part: part{fee: plan.Fee, networkFee: plan.NetworkFee, forwarded: plan.Forwarded, outputs: toSchema(plan.Outputs)}}}, plan)
	}
	parts := splitPlan(pl.t, plan, values)
	ms := make([]member, len(members))
	for i, m := range members {
		ms[i] = member{p: m, intentID: key + groupSep + strconv.FormatInt(m.ID, 10), part: parts[i]}
		note := withNote(m.Note, groupedNote(len(members)))
		if err := pl.tx.Payment.UpdateOne(m).SetNote(note).SetUpdatedAt(pl.now).Exec(ctx); err != nil {
			return fmt.Errorf("note payment %d forwarded in a group: %w", m.ID, err)
		}
	}
	if err := pl.add(a, key, ms, plan); err != nil {
		return err
	}
	pl.s.logger.Info("payments forwarded together: their sum reached the minimum",
		"ticker", pl.t.Ticker, "address_in", a.AddressIn, "payments", len(members), "sum_coin", sum.String(), "intent", key)
	return nil
}

// priority is address a's forwarding fee level (its priority; default
// when unknown).
func (pl *planner) priority(a *entdb.Address) chains.Priority {
	if p, ok := chains.PriorityOf(pl.t, a.Priority); ok {
		return p
	}
	return chains.DefaultPriority
}

// fee is the network fee a forward from a deducts: the backend's at the
// default level, at a's priority otherwise (chains.PriorityFees, or the
// default's by the static model), quoted once per batch and level.
func (pl *planner) fee(ctx context.Context, a *entdb.Address) (decimal.Decimal, error) {
	p := pl.priority(a)
	if p.Name == chains.DefaultPriority.Name {
		return pl.netFee, nil
	}
	if f, ok := pl.fees[p.Name]; ok {
		return f, nil
	}
	f := p.Scale(pl.netFee, pl.t.Decimals)
	if q, ok := pl.s.backends[pl.t.Ticker].(chains.PriorityFees); ok {
		var err error
		if f, err = q.NetworkFeeAt(ctx, p); err != nil {
			return decimal.Zero, fmt.Errorf("%s network fee at priority %s: %w", pl.t.Ticker, p.Name, err)
		}
	}
	if pl.fees == nil {
		pl.fees = map[string]decimal.Decimal{}
	}
	pl.fees[p.Name] = f
	return f, nil
}

// held returns, by address, the payments of the merchant addresses as that
// are held for the minimum or below dust (and not forwarded since), locked
// on PostgreSQL so that another instance's group waits, then sees them
// forwarded.
func (pl *planner) held(ctx context.Context, as []*entdb.Address) (map[int64][]*entdb.Payment, error) {
	if len(as) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(as))
	for i, a := range as {
		ids[i] = a.ID
	}
	q := pl.tx.Payment.Query().
		Where(entpayment.AddressIDIn(ids...), entpayment.StatusEQ(entpayment.StatusConfirmed),
			entpayment.HoldReasonIn(entpayment.HoldReasonBelowMinimum, entpayment.HoldReasonBelowDust), entpayment.Not(entpayment.HasForward())).
		Order(entdb.Asc(entpayment.FieldID))
	if pl.s.db.Dialect == store.Postgres {
		q.ForUpdate()
	}
	ps, err := q.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the payments held on %d addresses: %w", len(as), err)
	}
	out := map[int64][]*entdb.Payment{}
	for _, p := range ps {
		out[p.AddressID] = append(out[p.AddressID], p)
	}
	return out, nil
}

// belowDust holds ps (of address a) when an output of plan is below what
// the network carries to its destination, and reports whether it did.
func (pl *planner) belowDust(ctx context.Context, a *entdb.Address, ps []*entdb.Payment, plan distribute.Plan) (bool, error) {
	err := pl.s.out.Check(pl.t, plan.Outputs)
	var below *outbound.BelowMinimumError
	if !errors.As(err, &below) {
		return false, err
	}
	for _, p := range ps {
		if p.HoldReason != entpayment.HoldReasonNone {
			continue // held already, for the minimum: stays so
		}
		if err := pl.hold(ctx, a, p, entpayment.HoldReasonBelowDust, belowDustNote); err != nil {
			return true, err
		}
	}
	pl.s.logger.Info("payments held below dust: an output of their split is below what the network carries",
		"ticker", pl.t.Ticker, "address_in", a.AddressIn, "payments", len(ps), "reason", below.Error())
	return true, nil
}

// hold holds payment p of address a for reason: typed, noted for the logs,
// journaled, no longer watched.
func (pl *planner) hold(ctx context.Context, a *entdb.Address, p *entdb.Payment, reason entpayment.HoldReason, note string) error {
	if err := pl.tx.Payment.UpdateOne(p).SetHoldReason(reason).SetNote(withNote(p.Note, note)).SetUpdatedAt(pl.now).Exec(ctx); err != nil {
		return fmt.Errorf("hold payment %d: %w", p.ID, err)
	}
	p.HoldReason = reason
	pl.journal = append(pl.journal, ledger.Hold(pl.t, ref(a, p), p.ValueCoin, string(reason)))
	pl.stop = append(pl.stop, p.ID)
	return nil
}

// add plans one transaction from address a, of key, carrying members'
// forwards of plan.
func (pl *planner) add(a *entdb.Address, key string, members []member, plan distribute.Plan) error {
	from, err := outbound.SeedIndex(a)
	if err != nil {
		return fmt.Errorf("plan forward %s: %w", key, err)
	}
	in := outbound.Intent{Key: key, Ticker: pl.t, Purpose: outbound.PurposeForward, ProjectID: a.ProjectID,
		From: a.AddressIn, FromIndex: from, Outputs: plan.Outputs, NetworkFee: plan.NetworkFee,
		GasPercent: pl.priority(a).GasPercent}
	for _, m := range members {
		in.Inputs = append(in.Inputs, chains.Transfer{TxID: m.p.TxidIn, Index: m.p.OutputIndex, To: a.AddressIn, Value: m.p.ValueCoin})
	}
	pl.intents = append(pl.intents, in)
	pl.members = append(pl.members, members)
	return nil
}

// commit records the planned transactions, their forwards and the journal,
// stops watching the held payments, and returns the transactions.
func (pl *planner) commit(ctx context.Context) ([]*entdb.Outbound, error) {
	os, err := pl.s.out.PlanAll(ctx, pl.tx, pl.intents)
	if err != nil {
		return nil, err
	}
	var rows [][]any
	for i, o := range os {
		for _, m := range pl.members[i] {
			outs, err := json.Marshal(m.part.outputs)
			if err != nil {
				return nil, fmt.Errorf("forward of payment %d: %w", m.p.ID, err)
			}
			rows = append(rows, []any{pl.now, pl.now, m.p.ID, m.intentID, string(entforward.StatusIntent), outs,
				m.part.fee, m.part.networkFee, m.part.forwarded, "", o.ID, false})
			r := ref(m.p.Edges.Address, m.p)
			r.OutboundID = o.ID
			pl.journal = append(pl.journal, ledger.Plan(pl.t, r, m.p.ValueCoin))
		}
	}
	if len(rows) > 0 {
		if _, err := store.InsertRows(ctx, pl.tx, pl.s.db.Dialect, entforward.Table, forwardColumns, rows, "", false); err != nil {
			return nil, fmt.Errorf("record %d forwards: %w", len(rows), err)
		}
	}
	if err := pl.s.react(ctx, pl.tx, pl.pub); err != nil {
		return nil, err
	}
	if err := ledger.Write(ctx, pl.tx, pl.s.db.Dialect, pl.now, pl.journal...); err != nil {
		return nil, err
	}
	return os, stopWatching(ctx, pl.tx, pl.stop...)
}

// shares returns the forwarding destinations of a.
func shares(a *entdb.Address) []distribute.Share {
	out := make([]distribute.Share, len(a.Destinations))
	for i, d := range a.Destinations {
		out[i] = distribute.Share{Address: d.Address, Share: d.Share}
	}
	return out
}

// toSchema converts a plan's outputs to their stored form.
func toSchema(os []chains.Output) []schema.Output {
	out := make([]schema.Output, len(os))
	for i, o := range os {
		out[i] = schema.Output{Address: o.Address, Amount: o.Amount}
	}
	return out
}

// holdNoWallet completes credited payments ps, whose addresses have no
// forwarding destination, within tx: their funds stay on the payment
// address, in the operator's wallet. A held Forward records it (no
// transaction, no outputs, no fees: value_forwarded_coin is what stays
// held), the payment is held (no_wallet) and completed, its Distributed
// change published and journaled, and it is no longer watched. The
// operator API lists what is held (the journal's held balance).
func (s *Service) holdNoWallet(ctx context.Context, tx *entdb.Tx, t chains.Ticker, ps []*entdb.Payment, now time.Time, journal *[]ledger.Entry, pub *changes) error {
	if len(ps) == 0 {
		return nil
	}
	creates := make([]*entdb.ForwardCreate, len(ps))
	for i, p := range ps {
		creates[i] = tx.Forward.Create().
			SetPaymentID(p.ID).SetIntentID(fmt.Sprintf("held-%d-%s", p.ID, p.TxidIn)).
			SetOutputs([]schema.Output{}).SetFeeCoin(decimal.Zero).SetNetworkFee(decimal.Zero).
			SetValueForwardedCoin(p.ValueCoin).SetHeld(true).SetStatus(entforward.StatusDone).
			SetCreatedAt(now).SetUpdatedAt(now)
	}
	fwds, err := tx.Forward.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return fmt.Errorf("record %d held payments: %w", len(ps), err)
	}
	held, err := s.completeHeld(ctx, tx, ps, fwds, now)
	if err != nil {
		return err
	}
	ids := make([]int64, len(ps))
	for i, p := range ps {
		f, q := fwds[i], held[i]
		a := p.Edges.Address
		q.Edges.Address = a
		*journal = append(*journal, ledger.Hold(t, ref(a, q), q.ValueCoin, string(entpayment.HoldReasonNoWallet)))
		pub.publish(Change{
			Kind: Distributed, Ticker: t, Address: a, Payment: q,
			Status: chains.StatusCompleted, Confirmations: q.Confirmations, ValueCoin: q.ValueCoin, Forward: f,
		})
		ids[i] = p.ID
		s.logger.Info("funds held: no forwarding address; they stay on the payment address until swept (payhook funds)",
			"ticker", t.Ticker, "address_in", a.AddressIn, "value_coin", q.ValueCoin.String(), "txid_in", p.TxidIn)
	}
	return stopWatching(ctx, tx, ids...)
}

// directNote is the note of a payment to the merchant's own key.
const directNote = "in the merchant's own wallet (watch-only key): nothing to forward; the service fee is owed, not deducted"

// payoutWalletService is server/address.PayoutWalletService: funding
// one's own payout wallet is no payment to charge a fee on.
const payoutWalletService = "payout"

// directFee is the service fee payment p (with its Address edge) to the
// merchant's own key owes: none for their payout wallet.
func directFee(t chains.Ticker, p *entdb.Payment) decimal.Decimal {
	if p.Edges.Address != nil && p.Edges.Address.Service == payoutWalletService {
		return decimal.Zero
	}
	return distribute.Fee(t, p.ValueCoin)
}

// completeDirect completes credited payments ps, whose addresses are the
// merchant's own (a watch-only key), within tx: the funds are in the
// merchant's wallet already. A Forward records it (no transaction, no
// outputs, no network fee; value_forwarded_coin is the whole value and
// fee_coin the service fee the project owes), the payment is completed,
// its Distributed change published and journaled (direct, the fee owed),
// and it is no longer watched.
func (s *Service) completeDirect(ctx context.Context, tx *entdb.Tx, t chains.Ticker, ps []*entdb.Payment, now time.Time, journal *[]ledger.Entry, pub *changes) error {
	if len(ps) == 0 {
		return nil
	}
	creates := make([]*entdb.ForwardCreate, len(ps))
	for i, p := range ps {
		creates[i] = tx.Forward.Create().
			SetPaymentID(p.ID).SetIntentID(fmt.Sprintf("direct-%d-%s", p.ID, p.TxidIn)).
			SetOutputs([]schema.Output{}).SetFeeCoin(directFee(t, p)).SetNetworkFee(decimal.Zero).
			SetValueForwardedCoin(p.ValueCoin).SetStatus(entforward.StatusDone).
			SetCreatedAt(now).SetUpdatedAt(now)
	}
	fwds, err := tx.Forward.CreateBulk(creates...).Save(ctx)
	if err != nil {
		return fmt.Errorf("record %d direct payments: %w", len(ps), err)
	}
	ids := make([]int64, len(ps))
	for i, p := range ps {
		f := fwds[i]
		q, err := tx.Payment.UpdateOne(p).
			SetStatus(entpayment.StatusCompleted).
			SetValueForwardedCoin(f.ValueForwardedCoin).SetFeeCoin(f.FeeCoin).SetNetworkFee(f.NetworkFee).
			SetNote(withNote(p.Note, directNote)).
			SetForwardedAt(now).SetUpdatedAt(now).
			Save(ctx)
		if err != nil {
			return fmt.Errorf("complete direct payment %d: %w", p.ID, err)
		}
		a := p.Edges.Address
		q.Edges.Address = a
		*journal = append(*journal, ledger.Direct(t, ref(a, q), q.ValueCoin, f.FeeCoin))
		pub.publish(Change{
			Kind: Distributed, Ticker: t, Address: a, Payment: q,
			Status: chains.StatusCompleted, Confirmations: q.Confirmations, ValueCoin: q.ValueCoin, Forward: f,
		})
		ids[i] = p.ID
	}
	return stopWatching(ctx, tx, ids...)
}

// completeHeld completes the payments ps held for want of a wallet, each
// with its forward of fwds (nothing sent: the value stays), and returns
// them as stored. On PostgreSQL one statement writes them all.
func (s *Service) completeHeld(ctx context.Context, tx *entdb.Tx, ps []*entdb.Payment, fwds []*entdb.Forward, now time.Time) ([]*entdb.Payment, error) {
	out := make([]*entdb.Payment, len(ps))
	if s.db.Dialect != store.Postgres {
		for i, p := range ps {
			f := fwds[i]
			q, err := tx.Payment.UpdateOne(p).
				SetStatus(entpayment.StatusCompleted).SetHoldReason(entpayment.HoldReasonNoWallet).
				SetValueForwardedCoin(f.ValueForwardedCoin).SetFeeCoin(f.FeeCoin).SetNetworkFee(f.NetworkFee).
				SetNote(withNote(p.Note, heldNote)).
				SetForwardedAt(now).SetUpdatedAt(now).
				Save(ctx)
			if err != nil {
				return nil, fmt.Errorf("complete held payment %d: %w", p.ID, err)
			}
			out[i] = q
		}
		return out, nil
	}
	// One array per column, and "id = ANY(ids)" beside the join (see
	// markCompleted).
	ids, notes, fwd, fee, net := make([]any, len(ps)), make([]any, len(ps)), make([]any, len(ps)), make([]any, len(ps)), make([]any, len(ps))
	for i, p := range ps {
		f := fwds[i]
		ids[i], notes[i] = p.ID, withNote(p.Note, heldNote)
		fwd[i], fee[i], net[i] = f.ValueForwardedCoin.String(), f.FeeCoin.String(), f.NetworkFee.String()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payments AS p SET status = 'completed', hold_reason = 'no_wallet', note = v.note,
			value_forwarded_coin = v.fwd, fee_coin = v.fee, network_fee = v.net, forwarded_at = $6, updated_at = $6
		FROM unnest($1::bigint[], $2::text[], $3::numeric[], $4::numeric[], $5::numeric[]) AS v(id, note, fwd, fee, net)
		WHERE p.id = v.id AND p.id = ANY($1::bigint[])`, store.Array(ids), store.Array(notes), store.Array(fwd), store.Array(fee), store.Array(net), now); err != nil {
		return nil, fmt.Errorf("complete %d held payments: %w", len(ps), err)
	}
	for i, p := range ps {
		f, q := fwds[i], *p
		fv, fe, ne, at := f.ValueForwardedCoin, f.FeeCoin, f.NetworkFee, now
		q.Status, q.HoldReason, q.Note = entpayment.StatusCompleted, entpayment.HoldReasonNoWallet, notes[i].(string)
		q.ValueForwardedCoin, q.FeeCoin, q.NetworkFee, q.ForwardedAt, q.UpdatedAt = &fv, &fe, &ne, &at, now
		q.Edges = entdb.PaymentEdges{}
		out[i] = &q
	}
	return out, nil
}

// forwardColumns are the columns of the forwards planner.commit records,
// in the order of its rows (store.InsertRows: as ent would, outputs as
// JSON).
var forwardColumns = []store.Column{
	{Name: entforward.FieldCreatedAt, PGType: "timestamptz"}, {Name: entforward.FieldUpdatedAt, PGType: "timestamptz"},
	{Name: entforward.FieldPaymentID, PGType: "bigint"}, {Name: entforward.FieldIntentID, PGType: "text"},
	{Name: entforward.FieldStatus, PGType: "text"}, {Name: entforward.FieldOutputs, PGType: "jsonb"},
	{Name: entforward.FieldFeeCoin, PGType: "numeric"}, {Name: entforward.FieldNetworkFee, PGType: "numeric"},
	{Name: entforward.FieldValueForwardedCoin, PGType: "numeric"}, {Name: entforward.FieldTxidOut, PGType: "text"},
	{Name: entforward.FieldOutboundID, PGType: "bigint"}, {Name: entforward.FieldHeld, PGType: "boolean"},
}

// stopWatching clears the due height of the payments ids (0 is skipped):
// completed or held, nothing is left to wait for.
func stopWatching(ctx context.Context, tx *entdb.Tx, ids ...int64) error {
	ids = slices.DeleteFunc(ids, func(id int64) bool { return id == 0 })
	if len(ids) == 0 {
		return nil
	}
	if err := tx.WatchedTransfer.Update().Where(entwatched.PaymentIDIn(ids...)).ClearDue().Exec(ctx); err != nil {
		return fmt.Errorf("stop watching %d payments: %w", len(ids), err)
	}
	return nil
}
