package payment

import (
	"context"
	"fmt"
	"time"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entforward "github.com/payhook/payhook/ent/db/forward"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/ledger"
)

// forwarding is the service's outbound.Handler: what becomes of the
// forwards an outgoing transaction carries when it is sent, replaced or
// fails.
type forwarding struct{ s *Service }

// Sent completes the forwards of the transactions os, within tx: each
// forward done with its transaction's hash, its payment completed, its
// Distributed change published and its send journaled, and it is no longer
// watched. A forward another instance completed already is skipped. On
// PostgreSQL the rows are written with one UPDATE per table.
func (h forwarding) Sent(ctx context.Context, tx *entdb.Tx, t chains.Ticker, os []*entdb.Outbound) error {
	s := h.s
	ids := make([]int64, len(os))
	txids := make(map[int64]string, len(os))
	for i, o := range os {
		ids[i], txids[o.ID] = o.ID, o.Txid
	}
	fs, err := tx.Forward.Query().Where(entforward.OutboundIDIn(ids...), entforward.StatusEQ(entforward.StatusIntent)).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		Order(entdb.Asc(entforward.FieldID)).All(ctx)
	if err != nil {
		return fmt.Errorf("load forwards: %w", err)
	}
	if len(fs) == 0 {
		return nil
	}
	now := s.now()
	for _, f := range fs {
		f.TxidOut = txids[*f.OutboundID]
	}
	completed, err := s.markCompleted(ctx, tx, fs, now)
	if err != nil {
		return err
	}
	var paid []int64
	var journal []ledger.Entry
	var pub changes
	for _, f := range fs {
		if !completed[f.ID] {
			continue // another instance completed it
		}
		p := *f.Edges.Payment
		fwd, fee, net := f.ValueForwardedCoin, f.FeeCoin, f.NetworkFee
		p.Status, p.TxidOut, p.ValueForwardedCoin, p.FeeCoin, p.NetworkFee = entpayment.StatusCompleted, f.TxidOut, &fwd, &fee, &net
		p.ForwardedAt, p.UpdatedAt = &now, now
		r := ref(p.Edges.Address, &p)
		r.OutboundID = *f.OutboundID
		journal = append(journal, ledger.Send(t, r, fwd, fee, net))
		pub.publish(Change{
			Kind: Distributed, Ticker: t, Address: p.Edges.Address, Payment: &p,
			Status: chains.StatusCompleted, Confirmations: p.Confirmations, ValueCoin: p.ValueCoin, Forward: f,
		})
		paid = append(paid, p.ID)
	}
	if err := s.react(ctx, tx, pub); err != nil {
		return err
	}
	if err := ledger.Write(ctx, tx, s.db.Dialect, now, journal...); err != nil {
		return err
	}
	return stopWatching(ctx, tx, paid...)
}

// Replaced moves the forwards of old to next.
func (h forwarding) Replaced(ctx context.Context, tx *entdb.Tx, old, next *entdb.Outbound) error {
	if err := tx.Forward.Update().Where(entforward.OutboundID(old.ID)).SetOutboundID(next.ID).SetUpdatedAt(h.s.now()).Exec(ctx); err != nil {
		return fmt.Errorf("move the forwards of %s to %s: %w", old.Key, next.Key, err)
	}
	return nil
}

// Failed takes back the forwards of o, which can never be sent as planned:
// each payment is held for the operator (operator_hold), its forward
// removed (nothing was sent), its plan reversed in the journal, and it is
// no longer watched.
func (h forwarding) Failed(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound, cause error) error {
	fs, err := forwardsOf(ctx, tx, o, entforward.StatusIntent)
	if err != nil {
		return err
	}
	now := h.s.now()
	var journal []ledger.Entry
	var ids []int64
	for _, f := range fs {
		p := f.Edges.Payment
		if err := holdForOperator(ctx, tx, p, "not forwarded: the network refused the forwarding transaction as planned; held for the operator ("+cause.Error()+")", now); err != nil {
			return err
		}
		r := ref(p.Edges.Address, p)
		r.OutboundID = o.ID
		journal = append(journal, ledger.Unplan(t, r, p.ValueCoin), ledger.Hold(t, r, p.ValueCoin, string(entpayment.HoldReasonOperatorHold)))
		ids = append(ids, p.ID)
	}
	if _, err := tx.Forward.Delete().Where(entforward.OutboundID(o.ID), entforward.StatusEQ(entforward.StatusIntent)).Exec(ctx); err != nil {
		return fmt.Errorf("remove the forwards of %s: %w", o.Key, err)
	}
	if err := ledger.Write(ctx, tx, h.s.db.Dialect, now, journal...); err != nil {
		return err
	}
	return stopWatching(ctx, tx, ids...)
}

// Bounced takes back the forwards of o, which a block included and failed
// after Sent had completed them (EVM, TRON: a reverted execution): the
// forwarded value never left the payment address. Each payment is held for
// the operator (operator_hold, swept or sent again by hand from `payhook
// funds`), its note says why, and the journal moves its forwarded value to
// held (ledger.Bounce); the service fee and the network fee stay journaled
// as they were. The payment keeps the completed status the merchant was
// told (no webhook status says "taken back"; docs/decisions.md).
func (h forwarding) Bounced(ctx context.Context, tx *entdb.Tx, t chains.Ticker, o *entdb.Outbound) error {
	s := h.s
	fs, err := forwardsOf(ctx, tx, o, entforward.StatusDone)
	if err != nil {
		return err
	}
	now := s.now()
	journal := make([]ledger.Entry, 0, len(fs))
	for _, f := range fs {
		p := f.Edges.Payment
		if err := holdForOperator(ctx, tx, p, "forwarding transaction "+o.Txid+" failed in its block: the funds stayed on the payment address; held for the operator", now); err != nil {
			return err
		}
		r := ref(p.Edges.Address, p)
		r.OutboundID = o.ID
		journal = append(journal, ledger.Bounce(t, r, f.ValueForwardedCoin, string(entpayment.HoldReasonOperatorHold)))
		s.logger.Error("a forward failed in its block: its funds stay on the payment address, held for the operator (payhook funds)",
			"ticker", t.Ticker, "address_in", p.Edges.Address.AddressIn, "txid_out", o.Txid, "value_coin", f.ValueForwardedCoin.String())
	}
	return ledger.Write(ctx, tx, s.db.Dialect, now, journal...)
}

// forwardsOf loads the forwards of o in status st, oldest first, with
// their payments and the payments' addresses.
func forwardsOf(ctx context.Context, tx *entdb.Tx, o *entdb.Outbound, st entforward.Status) ([]*entdb.Forward, error) {
	fs, err := tx.Forward.Query().Where(entforward.OutboundID(o.ID), entforward.StatusEQ(st)).
		WithPayment(func(q *entdb.PaymentQuery) { q.WithAddress() }).
		Order(entdb.Asc(entforward.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("load forwards of %s: %w", o.Key, err)
	}
	return fs, nil
}

// holdForOperator holds payment p for the operator (operator_hold), its
// note saying why.
func holdForOperator(ctx context.Context, tx *entdb.Tx, p *entdb.Payment, why string, now time.Time) error {
	if err := tx.Payment.UpdateOne(p).SetHoldReason(entpayment.HoldReasonOperatorHold).SetNote(withNote(p.Note, why)).SetUpdatedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("hold payment %d: %w", p.ID, err)
	}
	return nil
}

// markCompleted marks forwards fs done with their TxidOut, only those still
// intents, and completes their payments; it reports which forwards it
// marked.
func (s *Service) markCompleted(ctx context.Context, tx *entdb.Tx, fs []*entdb.Forward, now time.Time) (map[int64]bool, error) {
	marked := make(map[int64]bool, len(fs))
	if s.db.Dialect != store.Postgres {
		for _, f := range fs {
			n, err := tx.Forward.Update().
				Where(entforward.ID(f.ID), entforward.StatusEQ(entforward.StatusIntent)).
				SetStatus(entforward.StatusDone).SetTxidOut(f.TxidOut).SetUpdatedAt(now).
				Save(ctx)
			if err != nil {
				return nil, fmt.Errorf("mark forward done: %w", err)
			}
			if n == 0 {
				continue
			}
			marked[f.ID] = true
			if err := tx.Payment.UpdateOneID(f.PaymentID).
				SetStatus(entpayment.StatusCompleted).SetTxidOut(f.TxidOut).
				SetValueForwardedCoin(f.ValueForwardedCoin).SetFeeCoin(f.FeeCoin).SetNetworkFee(f.NetworkFee).
				SetForwardedAt(now).SetUpdatedAt(now).
				Exec(ctx); err != nil {
				return nil, fmt.Errorf("complete payment: %w", err)
			}
		}
		return marked, nil
	}
	// One array per column: the statements do not grow with the batch.
	// "id = ANY(ids)" besides the join names the rows by primary key, so
	// the planner reads those (see store.PlanByIndex); joined to unnest
	// alone, without statistics, it reads the whole key index.
	fids, txs := make([]any, len(fs)), make([]any, len(fs))
	for i, f := range fs {
		fids[i], txs[i] = f.ID, f.TxidOut
	}
	rows, err := tx.QueryContext(ctx, `UPDATE forwards AS f SET status = 'done', txid_out = v.txid, updated_at = $3
		FROM unnest($1::bigint[], $2::text[]) AS v(id, txid)
		WHERE f.id = v.id AND f.id = ANY($1::bigint[]) AND f.status = 'intent'
		RETURNING f.id`, store.Array(fids), store.Array(txs), now)
	if err != nil {
		return nil, fmt.Errorf("mark forwards done: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		marked[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var pids, ptx, fwd, fee, net []any
	for _, f := range fs {
		if marked[f.ID] {
			pids, ptx = append(pids, f.PaymentID), append(ptx, f.TxidOut)
			fwd, fee, net = append(fwd, f.ValueForwardedCoin.String()), append(fee, f.FeeCoin.String()), append(net, f.NetworkFee.String())
		}
	}
	if len(pids) == 0 {
		return marked, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE payments AS p SET status = 'completed', txid_out = v.txid,
			value_forwarded_coin = v.fwd, fee_coin = v.fee, network_fee = v.net, forwarded_at = $6, updated_at = $6
		FROM unnest($1::bigint[], $2::text[], $3::numeric[], $4::numeric[], $5::numeric[]) AS v(id, txid, fwd, fee, net)
		WHERE p.id = v.id AND p.id = ANY($1::bigint[])`, store.Array(pids), store.Array(ptx), store.Array(fwd), store.Array(fee), store.Array(net), now); err != nil {
		return nil, fmt.Errorf("complete payments: %w", err)
	}
	return marked, nil
}
