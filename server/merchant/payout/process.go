package payout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/ledger"
	"github.com/payhook/payhook/server/outbound"
)

// queue queues p within tx, under the lock of its project and coin (see
// Process): unless it passes the project's limits and approver is empty,
// then it waits for approval (pending_approval) and nothing is planned.
// With an approver, p must be waiting for approval, and is queued whatever
// the limits. A UTXO payout without a batch interval is planned at once
// (one transaction); any other is queued (processing, no transaction yet)
// once the balance covers it beside the payouts queued before it, and an
// account chain's is then planned at once where the payout wallet holds
// enough (else sweeps to the wallet are planned). It returns the
// transactions planned.
//
// prefer, when not 0, is a held payment a UTXO payout planned at once
// spends first (a refund of that payment).
func (s *Service) queue(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, wallet *entdb.Address, approver string, prefer int64) ([]*entdb.Outbound, error) {
	ok, err := s.admit(ctx, tx, p, t, approver)
	if err != nil || !ok {
		return nil, err
	}
	if approver != "" {
		now := s.cfg.Now()
		if err := tx.Payout.UpdateOne(p).SetApprovedBy(approver).SetApprovedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			return nil, fmt.Errorf("approve payout %d: %w", p.ID, err)
		}
	}
	wk, err := watchKeyOf(ctx, tx, p.ProjectID, t)
	if err != nil {
		return nil, err
	}
	if wk != nil {
		// The merchant's own key: they sign it (GetPSBT, SubmitPSBT).
		return nil, s.planPSBT(ctx, tx, p, t, wk)
	}
	utxo := t.Rules().SpendsSeveralAddresses(t)
	if utxo && s.cfg.Interval[t.Ticker] <= 0 {
		o, err := s.planUTXO(ctx, tx, t, wallet, []*entdb.Payout{p}, prefer)
		if err != nil {
			return nil, err
		}
		return []*entdb.Outbound{o}, nil
	}
	if prefer != 0 && s.cfg.Interval[t.Ticker] <= 0 {
		// A refund on an account chain goes from the refunded payment's
		// own address when that still holds enough: one transaction, no
		// sweep.
		o, err := s.planFromPayment(ctx, tx, p, t, prefer)
		if err != nil || o != nil {
			if o == nil {
				return nil, err
			}
			return []*entdb.Outbound{o}, err
		}
	}
	if err := s.enqueue(ctx, tx, p, t, wallet); err != nil {
		return nil, err
	}
	if s.cfg.Interval[t.Ticker] > 0 {
		return nil, nil
	}
	return s.process(ctx, tx, p.ProjectID, t, wallet)
}

// planFromPayment plans payout p of an account chain from the address of
// the held payment prefer, when it holds p's total with fees and has no
// transaction open; nil when it cannot (p is then queued as any payout).
func (s *Service) planFromPayment(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, prefer int64) (*entdb.Outbound, error) {
	held, err := spendable(ctx, tx.Client(), p.ProjectID, t)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(held, func(h heldPayment) bool { return h.payment.ID == prefer })
	if i < 0 {
		return nil, nil
	}
	h := held[i]
	open, err := busy(ctx, tx, t, h.address.AddressIn)
	if err != nil || open[h.address.AddressIn] {
		return nil, err
	}
	rs, err := requestsOf(ctx, tx, []*entdb.Payout{p})
	if err != nil {
		return nil, err
	}
	one, err := s.perTransaction(ctx, t)
	if err != nil {
		return nil, err
	}
	p.Fee = s.feeOf(t, p.TotalRequested)
	p.BlockchainFee = one.Mul(decimal.NewFromInt(int64(len(rs[p.ID]))))
	needed := need(p)
	if h.value.LessThan(needed) {
		return nil, nil
	}
	outs := make([]chains.Output, len(rs[p.ID]))
	for i, r := range rs[p.ID] {
		outs[i] = chains.Output{Address: r.Address, Amount: r.Value}
	}
	h.value = needed
	return s.record(ctx, tx, t, h.address, []*entdb.Payout{p}, []heldPayment{h}, outs, p.BlockchainFee, nil)
}

// admit decides whether p may be queued now (see queue): false when it
// goes to wait for approval; an error for a payout in another state.
func (s *Service) admit(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, approver string) (bool, error) {
	switch {
	case approver == "" && p.Status == entpayout.StatusCreated:
		reason, err := s.needsApproval(ctx, tx, p, t)
		if err != nil {
			return false, err
		}
		if reason == "" {
			return true, nil
		}
		now := s.cfg.Now()
		if err := tx.Payout.UpdateOne(p).SetStatus(entpayout.StatusPendingApproval).SetApprovalReason(reason).
			SetQueuedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			return false, fmt.Errorf("payout %d: %w", p.ID, err)
		}
		p.Status, p.ApprovalReason, p.QueuedAt = entpayout.StatusPendingApproval, reason, &now
		// The project's dashboard users are told, in this transaction: the
		// payout waits for them.
		if err := s.cfg.Mail.PayoutApproval(ctx, tx, p); err != nil {
			return false, fmt.Errorf("email the approval of payout %d: %w", p.ID, err)
		}
		return false, nil
	case approver != "" && p.Status == entpayout.StatusPendingApproval:
		return true, nil
	case p.Status == entpayout.StatusProcessing:
		return false, kindPrecondition("payout %d is processing already", p.ID)
	case p.Status == entpayout.StatusPendingApproval:
		return false, kindPrecondition("payout %d waits for a dashboard user's approval", p.ID)
	case approver != "":
		return false, kindPrecondition("payout %d is %s: only a payout waiting for approval is approved", p.ID, p.Status)
	default:
		return false, kindPrecondition("payout %d is %s: only a created payout is processed", p.ID, p.Status)
	}
}

// feeOf is the operator's payout fee of a payout of total.
func (s *Service) feeOf(t chains.Ticker, total decimal.Decimal) decimal.Decimal {
	return total.Mul(s.cfg.FeePercent).Div(decimal.NewFromInt(100)).RoundUp(t.Decimals)
}

// perTransaction is the network fee of one account-chain transaction of t
// (the backend's estimate, as a forward deducts it).
func (s *Service) perTransaction(ctx context.Context, t chains.Ticker) (decimal.Decimal, error) {
	f, err := s.engine.FeeFor(ctx, t, 1, 1)
	if err != nil {
		return decimal.Zero, fmt.Errorf("quote the %s network fee: %w", t.Ticker, err)
	}
	return f, nil
}

// Spend returns what paying out all of value, held by one payment on a
// payhook address, to one output can pay (a refund of it, which goes from
// that address: Pay with prefer): value less the network's fee of one
// transaction and the operator's payout fee, rounded down; zero when
// nothing is left.
func (s *Service) Spend(ctx context.Context, t chains.Ticker, value decimal.Decimal) (decimal.Decimal, error) {
	var fees decimal.Decimal
	if t.Rules().SpendsSeveralAddresses(t) {
		f, err := s.engine.FeeFor(ctx, t, 1, 2)
		if err != nil {
			return decimal.Zero, fmt.Errorf("quote the %s network fee: %w", t.Ticker, err)
		}
		fees = f
	} else {
		one, err := s.perTransaction(ctx, t)
		if err != nil {
			return decimal.Zero, err
		}
		fees = one
	}
	left := value.Sub(fees).Div(decimal.NewFromInt(1).Add(s.cfg.FeePercent.Div(decimal.NewFromInt(100)))).RoundDown(t.Decimals)
	for left.Sign() > 0 && left.Add(s.feeOf(t, left)).Add(fees).GreaterThan(value) {
		left = left.Sub(decimal.New(1, -t.Decimals))
	}
	return decimal.Max(left, decimal.Zero), nil
}

// requestsOf returns the requests of the payouts ps, by payout, in id order.
func requestsOf(ctx context.Context, tx *entdb.Tx, ps []*entdb.Payout) (map[int64][]*entdb.PayoutRequest, error) {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	rs, err := tx.PayoutRequest.Query().Where(payoutrequest.PayoutIDIn(ids...)).Order(entdb.Asc(payoutrequest.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("requests of %d payouts: %w", len(ps), err)
	}
	out := make(map[int64][]*entdb.PayoutRequest, len(ps))
	for _, r := range rs {
		out[*r.PayoutID] = append(out[*r.PayoutID], r)
	}
	return out, nil
}

// queued returns the project's payouts of t queued and not planned yet,
// oldest first.
func queued(ctx context.Context, c *entdb.Client, projectID int64, t chains.Ticker) ([]*entdb.Payout, error) {
	ps, err := c.Payout.Query().
		Where(entpayout.ProjectID(projectID), entpayout.Ticker(t.Ticker), entpayout.StatusEQ(entpayout.StatusProcessing), entpayout.OutboundIDIsNil()).
		Order(entdb.Asc(entpayout.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("queued %s payouts of project %d: %w", t.Ticker, projectID, err)
	}
	return ps, nil
}

// need is what a queued payout takes from the balance.
func need(p *entdb.Payout) decimal.Decimal {
	return p.TotalRequested.Add(p.Fee).Add(p.BlockchainFee)
}

// sweptOf is what the project's sweeps of t carry to its payout wallet and
// the wallet has not been credited yet (the journal's swept account).
func sweptOf(ctx context.Context, c *entdb.Client, projectID int64, t chains.Ticker) (decimal.Decimal, error) {
	var lines []struct {
		Amount decimal.Decimal `json:"amount"`
	}
	if err := c.LedgerEntry.Query().
		Where(entledger.AccountEQ(entledger.AccountSwept), entledger.ProjectID(projectID), entledger.Ticker(t.Ticker)).
		Select(entledger.FieldAmount).Scan(ctx, &lines); err != nil {
		return decimal.Zero, fmt.Errorf("swept %s of project %d: %w", t.Ticker, projectID, err)
	}
	sum := decimal.Zero
	for _, l := range lines {
		sum = sum.Add(l.Amount)
	}
	return ledger.Coins(t, sum), nil
}

// enqueue queues p (processing, no transaction yet) with its fees as
// estimated now, when the project's balance (held and on its way to the
// payout wallet) covers it beside the payouts queued before it; else it is
// an *InsufficientError and nothing changes.
func (s *Service) enqueue(ctx context.Context, tx *entdb.Tx, p *entdb.Payout, t chains.Ticker, wallet *entdb.Address) error {
	rs, err := requestsOf(ctx, tx, []*entdb.Payout{p})
	if err != nil {
		return err
	}
	n := len(rs[p.ID])
	fee := s.feeOf(t, p.TotalRequested)
	var networkFee decimal.Decimal
	if t.Rules().SpendsSeveralAddresses(t) {
		if networkFee, err = s.engine.FeeFor(ctx, t, 1, n+1); err != nil {
			return fmt.Errorf("quote the %s network fee: %w", t.Ticker, err)
		}
	} else {
		one, err := s.perTransaction(ctx, t)
		if err != nil {
			return err
		}
		networkFee = one.Mul(decimal.NewFromInt(int64(n)))
	}
	held, err := spendable(ctx, tx.Client(), p.ProjectID, t)
	if err != nil {
		return err
	}
	balance, err := sweptOf(ctx, tx.Client(), p.ProjectID, t)
	if err != nil {
		return err
	}
	for _, h := range held {
		balance = balance.Add(h.value)
	}
	before, err := queued(ctx, tx.Client(), p.ProjectID, t)
	if err != nil {
		return err
	}
	for _, q := range before {
		balance = balance.Sub(need(q))
	}
	needed := p.TotalRequested.Add(fee).Add(networkFee)
	if balance.LessThan(needed) {
		return &InsufficientError{Ticker: t.Ticker, Balance: decimal.Max(balance, decimal.Zero), Needed: needed, Requested: p.TotalRequested, Fee: fee, NetworkFee: networkFee}
	}
	now := s.cfg.Now()
	n2, err := tx.Payout.Update().
		Where(entpayout.ID(p.ID), entpayout.StatusEQ(p.Status)).
		SetStatus(entpayout.StatusProcessing).SetFee(fee).SetBlockchainFee(networkFee).SetFromAddress(wallet.AddressIn).
		SetQueuedAt(now).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return fmt.Errorf("queue payout %d: %w", p.ID, err)
	}
	if n2 != 1 {
		return kindAborted("payout %d was queued by another request meanwhile", p.ID)
	}
	p.Status, p.Fee, p.BlockchainFee, p.QueuedAt = entpayout.StatusProcessing, fee, networkFee, &now
	return nil
}

// Tick plans the queued payouts of t that are due, for every project with
// some (see process), and sends what it planned. The watcher of t calls it
// after every poll; tests call it directly.
func (s *Service) Tick(ctx context.Context, t chains.Ticker) error {
	var rows []struct {
		ProjectID int64 `json:"project_id"`
		APIKeyID  int64 `json:"api_key_id"`
	}
	if err := s.db.Client.Payout.Query().
		Where(entpayout.Ticker(t.Ticker), entpayout.StatusEQ(entpayout.StatusProcessing), entpayout.OutboundIDIsNil()).
		Select(entpayout.FieldProjectID, entpayout.FieldAPIKeyID).Scan(ctx, &rows); err != nil {
		return fmt.Errorf("queued %s payouts: %w", t.Ticker, err)
	}
	seen := map[int64]bool{}
	var errs []error
	for _, r := range rows {
		if seen[r.ProjectID] {
			continue
		}
		seen[r.ProjectID] = true
		wallet, err := s.addresses.PayoutWallet(ctx, r.APIKeyID, r.ProjectID, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var planned []*entdb.Outbound
		err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
			if err := s.lock(ctx, tx, r.ProjectID, t); err != nil {
				return err
			}
			planned, err = s.process(ctx, tx, r.ProjectID, t, wallet)
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s payouts of project %d: %w", t.Ticker, r.ProjectID, err))
			continue
		}
		s.send(ctx, t, planned)
	}
	return errors.Join(errs...)
}

// process plans, within tx and under the lock of the project and coin, the
// project's queued payouts of t that are due, oldest first:
//
//   - UTXO: once the oldest has waited the ticker's Interval and together
//     they reach its MinBatch, all of them (up to MaxOutputs outputs) in
//     one transaction.
//   - Account chains: when no transaction from the payout wallet is open
//     (a nonce is never used twice), as many as the wallet's held
//     payments cover, in one outbound (a transaction per output with
//     consecutive nonces). When the wallet does not cover the oldest,
//     sweeps of the project's held funds on other addresses to the wallet
//     are planned for what all queued payouts need, beyond what is on its
//     way already; the payouts wait for the wallet's credit of them. A
//     payment a sweep was refused for is not swept again (sweepable).
//
// A payout that the balance can no longer cover (funds reversed by a
// reorganisation) fails with the reason.
func (s *Service) process(ctx context.Context, tx *entdb.Tx, projectID int64, t chains.Ticker, wallet *entdb.Address) ([]*entdb.Outbound, error) {
	ps, err := queued(ctx, tx.Client(), projectID, t)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	if t.Rules().SpendsSeveralAddresses(t) {
		return s.processUTXO(ctx, tx, t, wallet, ps)
	}
	return s.processAccount(ctx, tx, t, wallet, ps)
}

func (s *Service) processUTXO(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, ps []*entdb.Payout) ([]*entdb.Outbound, error) {
	if iv := s.cfg.Interval[t.Ticker]; iv > 0 && ps[0].QueuedAt != nil && s.cfg.Now().Before(ps[0].QueuedAt.Add(iv)) {
		return nil, nil
	}
	rs, err := requestsOf(ctx, tx, ps)
	if err != nil {
		return nil, err
	}
	total, outputs := decimal.Zero, 0
	batch := ps[:0:0]
	for _, p := range ps {
		if outputs+len(rs[p.ID]) > MaxOutputs {
			break
		}
		batch = append(batch, p)
		outputs += len(rs[p.ID])
		total = total.Add(p.TotalRequested)
	}
	if min := s.cfg.MinBatch[t.Ticker]; min.Sign() > 0 && total.LessThan(min) {
		return nil, nil
	}
	for len(batch) > 0 {
		o, err := s.planUTXO(ctx, tx, t, wallet, batch, 0)
		var short *InsufficientError
		switch {
		case err == nil:
			return []*entdb.Outbound{o}, nil
		case !errors.As(err, &short):
			return nil, err
		case len(batch) == 1:
			return nil, s.failQueued(ctx, tx, t, batch[0], "the balance no longer covers the payout: "+short.Error())
		}
		batch = batch[:len(batch)-1]
	}
	return nil, nil
}

// busy reports whether a transaction of t from addr is open (planned,
// signed, or sent and not yet seen in a block): an account's next
// transaction is signed only after it, so that its nonce is the next one.
func busy(ctx context.Context, tx *entdb.Tx, t chains.Ticker, addrs ...string) (map[string]bool, error) {
	os, err := tx.Outbound.Query().
		Where(entoutbound.Ticker(t.Ticker), entoutbound.FromAddressIn(addrs...),
			entoutbound.StateIn(entoutbound.StatePlanned, entoutbound.StateSigned, entoutbound.StateSent)).
		Select(entoutbound.FieldFromAddress).Strings(ctx)
	if err != nil {
		return nil, fmt.Errorf("open %s transactions: %w", t.Ticker, err)
	}
	out := make(map[string]bool, len(os))
	for _, a := range os {
		out[a] = true
	}
	return out, nil
}

func (s *Service) processAccount(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, ps []*entdb.Payout) ([]*entdb.Outbound, error) {
	if iv := s.cfg.Interval[t.Ticker]; iv > 0 && ps[0].QueuedAt != nil && s.cfg.Now().Before(ps[0].QueuedAt.Add(iv)) {
		return nil, nil
	}
	rs, err := requestsOf(ctx, tx, ps)
	if err != nil {
		return nil, err
	}
	if min := s.cfg.MinBatch[t.Ticker]; min.Sign() > 0 {
		total := decimal.Zero
		for _, p := range ps {
			total = total.Add(p.TotalRequested)
		}
		if total.LessThan(min) {
			return nil, nil
		}
	}
	open, err := busy(ctx, tx, t, wallet.AddressIn)
	if err != nil || open[wallet.AddressIn] {
		return nil, err
	}
	one, err := s.perTransaction(ctx, t)
	if err != nil {
		return nil, err
	}
	held, err := spendable(ctx, tx.Client(), ps[0].ProjectID, t)
	if err != nil {
		return nil, err
	}
	var atWallet, elsewhere []heldPayment
	inWallet := decimal.Zero
	for _, h := range held {
		if h.address.ID == wallet.ID {
			atWallet = append(atWallet, h)
			inWallet = inWallet.Add(h.value)
		} else {
			elsewhere = append(elsewhere, h)
		}
	}
	// The fees as they are now.
	needs := make([]decimal.Decimal, len(ps))
	all := decimal.Zero
	for i, p := range ps {
		p.Fee = s.feeOf(t, p.TotalRequested)
		p.BlockchainFee = one.Mul(decimal.NewFromInt(int64(len(rs[p.ID]))))
		needs[i] = need(p)
		all = all.Add(needs[i])
	}
	covered, outputs := decimal.Zero, 0
	n := 0
	for i, p := range ps {
		if covered.Add(needs[i]).GreaterThan(inWallet) || outputs+len(rs[p.ID]) > MaxAccountOutputs {
			break
		}
		covered = covered.Add(needs[i])
		outputs += len(rs[p.ID])
		n++
	}
	if n > 0 {
		o, err := s.planAccount(ctx, tx, t, wallet, ps[:n], rs, atWallet, covered)
		if err != nil {
			return nil, err
		}
		return []*entdb.Outbound{o}, nil
	}
	swept, err := sweptOf(ctx, tx.Client(), ps[0].ProjectID, t)
	if err != nil {
		return nil, err
	}
	short := all.Sub(inWallet).Sub(swept)
	if short.Sign() <= 0 {
		return nil, nil // the sweeps on their way cover them
	}
	if elsewhere, err = sweepable(ctx, tx, ps[0].ProjectID, t, elsewhere); err != nil {
		return nil, err
	}
	sweeps, waiting, err := s.planSweeps(ctx, tx, t, wallet, elsewhere, one, short)
	if err != nil || len(sweeps) > 0 || waiting || swept.Sign() > 0 {
		return sweeps, err
	}
	if needs[0].GreaterThan(inWallet) {
		err := &InsufficientError{Ticker: t.Ticker, Balance: inWallet, Needed: needs[0], Requested: ps[0].TotalRequested, Fee: ps[0].Fee, NetworkFee: ps[0].BlockchainFee}
		return nil, s.failQueued(ctx, tx, t, ps[0], "the balance no longer covers the payout once its funds are on the payout wallet: "+err.Error())
	}
	return nil, nil
}

// planSweeps plans, within tx, sweeps of held funds on the project's
// addresses other than wallet to wallet, the largest address first, until
// they carry short (each carries its address's held payments less the
// network fee one). An address with an open transaction is skipped
// (waiting is then true: its funds may come back); one whose funds would
// not cover the fee and the network's minimum output is left.
func (s *Service) planSweeps(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, elsewhere []heldPayment, one, short decimal.Decimal) ([]*entdb.Outbound, bool, error) {
	type source struct {
		address  *entdb.Address
		payments []heldPayment
		sum      decimal.Decimal
	}
	var sources []*source
	byAddress := map[int64]*source{}
	var addrs []string
	for _, h := range elsewhere {
		src, ok := byAddress[h.address.ID]
		if !ok {
			src = &source{address: h.address, sum: decimal.Zero}
			byAddress[h.address.ID] = src
			sources = append(sources, src)
			addrs = append(addrs, h.address.AddressIn)
		}
		src.payments = append(src.payments, h)
		src.sum = src.sum.Add(h.value)
	}
	if len(sources) == 0 {
		return nil, false, nil
	}
	open, err := busy(ctx, tx, t, addrs...)
	if err != nil {
		return nil, false, err
	}
	slices.SortStableFunc(sources, func(a, b *source) int { return b.sum.Cmp(a.sum) })
	var intents []outbound.Intent
	var plans [][]heldPayment
	waiting := false
	carried := decimal.Zero
	for _, src := range sources {
		if carried.GreaterThanOrEqual(short) {
			break
		}
		if open[src.address.AddressIn] {
			waiting = true
			continue
		}
		out := src.sum.Sub(one)
		if out.Sign() <= 0 || s.engine.Check(t, []chains.Output{{Address: wallet.AddressIn, Amount: out}}) != nil {
			continue
		}
		from, err := outbound.SeedIndex(src.address)
		if err != nil {
			return nil, false, fmt.Errorf("plan sweep: %w", err)
		}
		transfers := make([]chains.Transfer, len(src.payments))
		for i, h := range src.payments {
			transfers[i] = chains.Transfer{TxID: h.payment.TxidIn, Index: h.payment.OutputIndex, To: h.address.AddressIn, Value: h.value}
		}
		intents = append(intents, outbound.Intent{
			Key: "sweep:" + uuid.NewString(), Ticker: t, Purpose: outbound.PurposeSweep, ProjectID: src.address.ProjectID,
			From: src.address.AddressIn, FromIndex: from, Inputs: transfers,
			Outputs: []chains.Output{{Address: wallet.AddressIn, Amount: out, Key: ownKey(wallet)}}, NetworkFee: one,
		})
		plans = append(plans, src.payments)
		carried = carried.Add(out)
	}
	if len(intents) == 0 {
		return nil, waiting, nil
	}
	os, err := s.engine.PlanAll(ctx, tx, intents)
	if err != nil {
		return nil, false, fmt.Errorf("plan %d %s sweeps: %w", len(intents), t.Ticker, err)
	}
	var entries []ledger.Entry
	for i, o := range os {
		for _, h := range plans[i] {
			entries = append(entries, ledger.SweepPlan(t, ledger.Ref{ProjectID: h.address.ProjectID, PaymentID: h.payment.ID, AddressID: h.address.ID, OutboundID: o.ID}, h.value))
		}
	}
	if err := ledger.Write(ctx, tx, s.db.Dialect, s.cfg.Now(), entries...); err != nil {
		return nil, false, err
	}
	s.logger.Info("held funds swept to the payout wallet for queued payouts", "ticker", t.Ticker, "sweeps", len(os), "carried", carried.String(), "wallet", wallet.AddressIn)
	return os, waiting, nil
}

// planAccount plans, within tx, the payouts ps (queued, with their fees
// set) of an account chain as one outbound from wallet paying every
// request (one transaction per output): it spends exactly covered, their
// total with fees, from the wallet's held payments atWallet, largest
// first (the last in part).
func (s *Service) planAccount(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, ps []*entdb.Payout, rs map[int64][]*entdb.PayoutRequest, atWallet []heldPayment, covered decimal.Decimal) (*entdb.Outbound, error) {
	var outs []chains.Output
	networkFee := decimal.Zero
	for _, p := range ps {
		for _, r := range rs[p.ID] {
			outs = append(outs, chains.Output{Address: r.Address, Amount: r.Value})
		}
		networkFee = networkFee.Add(p.BlockchainFee)
	}
	var inputs []heldPayment
	left := covered
	for _, h := range atWallet {
		if left.Sign() <= 0 {
			break
		}
		take := decimal.Min(h.value, left)
		h.value = take
		inputs = append(inputs, h)
		left = left.Sub(take)
	}
	if left.Sign() > 0 {
		return nil, fmt.Errorf("plan %s payouts: the wallet's held payments fall %s short", t.Ticker, left)
	}
	return s.record(ctx, tx, t, wallet, ps, inputs, outs, networkFee, nil)
}

// planUTXO plans, within tx, the payouts ps (created, approved or queued)
// of a UTXO coin as one transaction: the largest held outputs of the
// project first, until they cover the outputs, the operator's fee and the
// network's fee for the transaction's size (the outputs and a change
// output); change goes back to the payout wallet. Not enough balance is an
// *InsufficientError and nothing is recorded. The held payment prefer (0
// for none) comes first.
func (s *Service) planUTXO(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, ps []*entdb.Payout, prefer int64) (*entdb.Outbound, error) {
	rs, err := requestsOf(ctx, tx, ps)
	if err != nil {
		return nil, err
	}
	var outs []chains.Output
	total, fee := decimal.Zero, decimal.Zero
	for _, p := range ps {
		for _, r := range rs[p.ID] {
			outs = append(outs, chains.Output{Address: r.Address, Amount: r.Value})
		}
		p.Fee = s.feeOf(t, p.TotalRequested)
		total, fee = total.Add(p.TotalRequested), fee.Add(p.Fee)
	}
	nOuts := destinations(outs)
	held, err := spendable(ctx, tx.Client(), ps[0].ProjectID, t)
	if err != nil {
		return nil, err
	}
	if i := slices.IndexFunc(held, func(h heldPayment) bool { return h.payment.ID == prefer }); i > 0 {
		first := held[i]
		held = append([]heldPayment{first}, slices.Delete(held, i, i+1)...)
	}
	balance := decimal.Zero
	for _, h := range held {
		balance = balance.Add(h.value)
	}
	// The largest held outputs first, until they cover the outputs, the
	// operator's fee and the network's fee for the transaction's size
	// (the outputs and a change output). A fee is linear in the number of
	// inputs: two quotes give it for any count, and the count chosen is
	// quoted once more, exactly (a node is asked three times, not once
	// per input).
	quote := func(n int) (decimal.Decimal, error) {
		f, err := s.engine.FeeFor(ctx, t, n, nOuts+1)
		if err != nil {
			return decimal.Zero, fmt.Errorf("quote the %s network fee: %w", t.Ticker, err)
		}
		return f, nil
	}
	one, err := quote(1)
	if err != nil {
		return nil, err
	}
	two, err := quote(2)
	if err != nil {
		return nil, err
	}
	perInput := two.Sub(one)
	var inputs []heldPayment
	in := decimal.Zero
	networkFee := one
	needed := total.Add(fee).Add(networkFee)
	for _, h := range held {
		if len(inputs) > 0 && in.GreaterThanOrEqual(needed) {
			exact, err := quote(len(inputs))
			if err != nil {
				return nil, err
			}
			networkFee, needed = exact, total.Add(fee).Add(exact)
			if in.GreaterThanOrEqual(needed) {
				break
			}
		}
		inputs = append(inputs, h)
		in = in.Add(h.value)
		networkFee = one.Add(perInput.Mul(decimal.NewFromInt(int64(len(inputs) - 1))))
		needed = total.Add(fee).Add(networkFee)
	}
	if len(inputs) > 0 {
		exact, err := quote(len(inputs))
		if err != nil {
			return nil, err
		}
		networkFee, needed = exact, total.Add(fee).Add(exact)
	}
	if len(inputs) == 0 || in.LessThan(needed) {
		return nil, &InsufficientError{Ticker: t.Ticker, Balance: balance, Needed: needed, Requested: total, Fee: fee, NetworkFee: networkFee}
	}
	change := in.Sub(needed)
	if change.Sign() > 0 {
		if err := s.engine.Check(t, []chains.Output{{Address: wallet.AddressIn, Amount: change}}); err == nil {
			outs = append(outs, chains.Output{Address: wallet.AddressIn, Amount: change, Key: ownKey(wallet)})
		} else {
			var below *outbound.BelowMinimumError
			if !errors.As(err, &below) {
				return nil, err
			}
			networkFee = networkFee.Add(change) // dust change goes to the network
		}
	}
	// Each payout's part of the network fee: by its outputs, the last
	// taking what rounding leaves.
	left := networkFee
	for i, p := range ps {
		if i == len(ps)-1 {
			p.BlockchainFee = left
			break
		}
		p.BlockchainFee = networkFee.Mul(decimal.NewFromInt(int64(len(rs[p.ID])))).Div(decimal.NewFromInt(int64(len(outs)))).RoundDown(t.Decimals)
		left = left.Sub(p.BlockchainFee)
	}
	keys := map[string]uint32{}
	for _, h := range inputs {
		if h.address.AddressIn != wallet.AddressIn {
			index, err := outbound.SeedIndex(h.address)
			if err != nil {
				return nil, fmt.Errorf("plan payout: %w", err)
			}
			keys[h.address.AddressIn] = index
		}
	}
	if len(keys) == 0 {
		keys = nil
	}
	return s.record(ctx, tx, t, wallet, ps, inputs, outs, networkFee, keys)
}

// destinations counts the addresses outs pay (outbound.Engine pays each
// once, summing its outputs).
func destinations(outs []chains.Output) int {
	seen := make(map[string]bool, len(outs))
	for _, o := range outs {
		seen[o.Address] = true
	}
	return len(seen)
}

// record plans the transaction of the payouts ps (their Fee and
// BlockchainFee set) spending inputs into outs, journals the inputs taken
// from the balance, and marks the payouts processing with it, within tx.
// The first payout records the inputs.
func (s *Service) record(ctx context.Context, tx *entdb.Tx, t chains.Ticker, wallet *entdb.Address, ps []*entdb.Payout, inputs []heldPayment, outs []chains.Output, networkFee decimal.Decimal, keys map[string]uint32) (*entdb.Outbound, error) {
	transfers := make([]chains.Transfer, len(inputs))
	recorded := make([]schema.PayoutInput, len(inputs))
	for i, h := range inputs {
		transfers[i] = chains.Transfer{TxID: h.payment.TxidIn, Index: h.payment.OutputIndex, To: h.address.AddressIn, Value: h.value}
		recorded[i] = schema.PayoutInput{PaymentID: h.payment.ID, AddressID: h.address.ID, Value: h.value, HoldReason: string(h.payment.HoldReason)}
	}
	from, err := outbound.SeedIndex(wallet)
	if err != nil {
		return nil, fmt.Errorf("plan payout %d: %w", ps[0].ID, err)
	}
	o, err := s.engine.Plan(ctx, tx, outbound.Intent{
		Key: "payout:" + strconv.FormatInt(ps[0].ID, 10), Ticker: t, Purpose: outbound.PurposePayout, ProjectID: ps[0].ProjectID,
		From: wallet.AddressIn, FromIndex: from, Inputs: transfers, Keys: keys, Outputs: outs,
		NetworkFee: networkFee,
	})
	if err != nil {
		return nil, fmt.Errorf("plan payout %d: %w", ps[0].ID, err)
	}
	now := s.cfg.Now()
	entries := make([]ledger.Entry, len(inputs))
	for i, h := range inputs {
		entries[i] = ledger.PayoutPlan(t, ledger.Ref{ProjectID: ps[0].ProjectID, PaymentID: h.payment.ID, AddressID: h.address.ID, OutboundID: o.ID}, h.value)
	}
	if err := ledger.Write(ctx, tx, s.db.Dialect, now, entries...); err != nil {
		return nil, err
	}
	for i, p := range ps {
		u := tx.Payout.Update().
			Where(entpayout.ID(p.ID), entpayout.OutboundIDIsNil(),
				entpayout.StatusIn(entpayout.StatusCreated, entpayout.StatusPendingApproval, entpayout.StatusProcessing)).
			SetStatus(entpayout.StatusProcessing).SetFee(p.Fee).SetBlockchainFee(p.BlockchainFee).
			SetFromAddress(wallet.AddressIn).SetOutboundID(o.ID).SetUpdatedAt(now)
		if i == 0 {
			u.SetInputs(recorded)
		}
		if p.QueuedAt == nil {
			u.SetQueuedAt(now)
		}
		n, err := u.Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("queue payout %d: %w", p.ID, err)
		}
		if n != 1 {
			return nil, kindAborted("payout %d was queued by another request meanwhile", p.ID)
		}
	}
	return o, nil
}

// failQueued fails the queued payout p (nothing of it was planned), its
// requests rejected, with reason, and stores its webhook, within tx.
func (s *Service) failQueued(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout, reason string) error {
	s.logger.Warn("a queued payout failed", "ticker", t.Ticker, "payout", p.ID, "reason", reason)
	return handler{s}.fail(ctx, tx, t, []*entdb.Payout{p}, reason)
}

// ownKey is the payout wallet's derivation index as chains.Output.Key (a
// sweep or change paying it stays on the seed's keys: a remote signer's
// policy does not count it as leaving); nil for a wallet of the merchant's
// own key (watch-only), which the seed does not control.
func ownKey(wallet *entdb.Address) *uint32 {
	i, err := outbound.SeedIndex(wallet)
	if err != nil {
		return nil
	}
	return &i
}
