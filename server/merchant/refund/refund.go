// Package refund sends an invoice payment (a checkout's or a deposit's),
// whole or in part, back to an address: `POST /checkout/refund/` and
// `POST /deposit/refund/`. A refund is paid by a payout of one request
// (server/merchant/payout) from the project's balance, spending the
// refunded payment's own held output first where it is still held (UTXO
// coins; on account chains the refund is sent from its address when that
// holds enough): the payouts' limits and approval, fees, journal and engine apply,
// and the refund follows its payout (pending, then completed with its
// txid, or failed with the reason). The merchant is told by a webhook at
// each status, `<kind>.refund.<status>`, sent like the invoice's payment
// webhooks (its notify_url and transport, the project's HMAC signature).
package refund

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/payout"
	"github.com/payhook/payhook/server/merchant/project"
)

// ErrPaymentNotFound reports a txid_in that is no payment of the invoice.
var ErrPaymentNotFound = kind.New(kind.NotFound, "payment not found",
	kind.Public("txid_in: no payment of this invoice has this transaction"))

// ErrRefundNotFound reports a refund_id that is no refund of the project.
var ErrRefundNotFound = kind.New(kind.NotFound, "refund not found",
	kind.Public("refund_id: no refund of this project has this id"))

// Enqueuer stores a notification in the transaction of the change it
// reports (notifier.Queue).
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *entdb.Tx, m notifier.Message) (*entdb.Notification, error)
}

// Service refunds invoice payments. It is safe for concurrent use.
type Service struct {
	db       *store.DB
	invoices *invoice.Service
	payouts  *payout.Service
	webhooks Enqueuer
	now      func() time.Time
}

// New returns a Service paying refunds through payouts, and registers it
// as an observer of payouts that end. now is the clock.
func New(db *store.DB, invoices *invoice.Service, payouts *payout.Service, webhooks Enqueuer, now func() time.Time) *Service {
	if now == nil {
		now = clock.Now
	}
	s := &Service{db: db, invoices: invoices, payouts: payouts, webhooks: webhooks, now: now}
	payouts.Observe(s)
	return s
}

// Request is a refund as the merchant asks for it.
type Request struct {
	// Kind is the invoice's kind (checkout, deposit).
	Kind invoice.Kind
	// PaymentID is the invoice's payment_id; TxidIn its payment's.
	PaymentID, TxidIn string
	// Address is where the refund goes; Value how much (empty: what is left
	// of the payment to refund).
	Address, Value string
}

// Refund refunds the caller's invoice payment as r asks: the refund and
// its payout are recorded and queued in one database transaction, or
// nothing is (bad input, more than what is left to refund, not enough
// balance: each a 4xx naming the field).
func (s *Service) Refund(ctx context.Context, c payout.Caller, r Request) (*Info, *payout.Info, error) {
	if r.PaymentID == "" {
		return nil, nil, address.Invalid("payment_id", "is required")
	}
	if r.TxidIn == "" {
		return nil, nil, address.Invalid("txid_in", "is required: the transaction of the payment to refund")
	}
	if r.Address == "" {
		return nil, nil, address.Invalid("address", "is required: where the refund goes")
	}
	inv, err := s.invoices.Get(ctx, r.Kind, c.ProjectID, r.PaymentID)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.db.Client.Payment.Query().
		Where(entpayment.TxidIn(r.TxidIn), entpayment.HasAddressWith(entaddress.InvoiceID(inv.ID))).
		WithAddress().Order(entdb.Asc(entpayment.FieldID)).First(ctx)
	if entdb.IsNotFound(err) {
		return nil, nil, fmt.Errorf("%w: %s", ErrPaymentNotFound, address.Truncate(r.TxidIn))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("payment %s: %w", address.Truncate(r.TxidIn), err)
	}
	if !Credited(p) {
		return nil, nil, address.Invalid("txid_in", "the payment is %s: only a confirmed payment is refunded", p.Status)
	}
	t, err := s.payouts.Ticker(p.Edges.Address.Ticker)
	if err != nil {
		return nil, nil, err
	}
	left, err := refundable(ctx, s.db.Client, p, 0)
	if err != nil {
		return nil, nil, err
	}
	value := left
	if r.Value != "" {
		if value, err = address.ParseAmount("value", r.Value, t.Decimals); err != nil {
			return nil, nil, err
		}
		if value.Sign() <= 0 {
			return nil, nil, address.Invalid("value", "must be positive")
		}
	}
	if left.Sign() <= 0 {
		return nil, nil, address.Invalid("txid_in", "the payment is refunded in full already")
	}
	return s.pay(ctx, c, t, inv, p, &entdb.Refund{Address: r.Address, Value: value, ApprovedBy: "api"})
}

// pay records ref (new, or requested by the payer: then its ID is set),
// refunding payment p of inv in t, with its payout to ref.Address of
// ref.Value, queued at once, in one database transaction; nothing is
// recorded when it cannot be (more than what is left to refund, not enough
// balance). A payment held for a refund (late_payment) or of another
// asset (wrong_asset) is released into the project's balance by the same
// transaction: its refund spends it first.
func (s *Service) pay(ctx context.Context, c payout.Caller, t chains.Ticker, inv *entdb.Invoice, p *entdb.Payment, ref *entdb.Refund) (*Info, *payout.Info, error) {
	id := ref.UUID
	if ref.ID == 0 {
		id = uuid.NewString()
	}
	info, err := s.payouts.Pay(ctx, c, t.Ticker, payout.Output{Address: ref.Address, Amount: ref.Value.String()}, p.ID,
		func(ctx context.Context, tx *entdb.Tx, po *entdb.Payout) error {
			// Under the payouts' lock of the project and coin: two refunds
			// of one payment never take more than it.
			left, err := refundable(ctx, tx.Client(), p, ref.ID)
			if err != nil {
				return err
			}
			if ref.Value.GreaterThan(left) {
				return address.Invalid("value", "%s %s is more than what is left to refund of the payment, %s %s", ref.Value, t.Ticker, left, t.Ticker)
			}
			if err := release(ctx, tx, p, po.CreatedAt); err != nil {
				return err
			}
			var saved *entdb.Refund
			if ref.ID == 0 {
				saved, err = tx.Refund.Create().
					SetUUID(id).SetProjectID(c.ProjectID).SetInvoiceID(inv.ID).SetPaymentID(p.ID).SetTicker(t.Ticker).
					SetAddress(ref.Address).SetValue(ref.Value).SetPayoutID(po.ID).SetApprovedBy(ref.ApprovedBy).
					SetCreatedAt(po.CreatedAt).SetUpdatedAt(po.CreatedAt).
					Save(ctx)
			} else {
				n, uerr := tx.Refund.Update().Where(entrefund.ID(ref.ID), entrefund.StatusEQ(entrefund.StatusRequested)).
					SetStatus(entrefund.StatusPending).SetPayoutID(po.ID).SetApprovedBy(ref.ApprovedBy).SetUpdatedAt(po.CreatedAt).
					Save(ctx)
				if uerr == nil && n != 1 {
					uerr = kind.New(kind.FailedPrecondition, "refund "+id+" was approved meanwhile")
				}
				if uerr == nil {
					saved, uerr = tx.Refund.Get(ctx, ref.ID)
				}
				err = uerr
			}
			if err != nil {
				return fmt.Errorf("record refund: %w", err)
			}
			return s.notify(ctx, tx, t, inv, p, saved)
		})
	if err != nil {
		return nil, nil, err
	}
	got, err := s.Get(ctx, c, id)
	if err != nil {
		return nil, nil, err
	}
	return got, info, nil
}

// Info is a refund with what the merchant knows its payment by.
type Info struct {
	Refund *entdb.Refund
	// PaymentID is the invoice's payment_id, TxidIn the payment's.
	PaymentID, TxidIn string
	// Coin is the ticker's name in the merchant API (trc20_usdt).
	Coin string
}

// release makes payment p, held for its refund (late_payment) or as
// another asset (wrong_asset), part of the project's balance (held,
// no_wallet), so that its refund's payout may spend it.
func release(ctx context.Context, tx *entdb.Tx, p *entdb.Payment, now time.Time) error {
	if p.HoldReason != entpayment.HoldReasonLatePayment && p.HoldReason != entpayment.HoldReasonWrongAsset {
		return nil
	}
	note := "released into the project's balance for its refund (was held: " + string(p.HoldReason) + ")"
	if err := tx.Payment.UpdateOneID(p.ID).SetHoldReason(entpayment.HoldReasonNoWallet).SetNote(note).SetUpdatedAt(now).Exec(ctx); err != nil {
		return fmt.Errorf("release payment %d for its refund: %w", p.ID, err)
	}
	return nil
}

// Credited reports whether payment p may be refunded: credited (confirmed
// or completed) and still on the chain.
func Credited(p *entdb.Payment) bool {
	return (p.Status == entpayment.StatusConfirmed || p.Status == entpayment.StatusCompleted) && !p.Reorged
}

// refundable is what is left to refund of payment p: its value less its
// refunds that did not fail, but the refund except.
func refundable(ctx context.Context, c *entdb.Client, p *entdb.Payment, except int64) (decimal.Decimal, error) {
	rs, err := c.Refund.Query().Where(entrefund.PaymentID(p.ID), entrefund.StatusNEQ(entrefund.StatusFailed), entrefund.IDNEQ(except)).All(ctx)
	if err != nil {
		return decimal.Zero, fmt.Errorf("refunds of payment %d: %w", p.ID, err)
	}
	left := p.ValueCoin
	for _, r := range rs {
		left = left.Sub(r.Value)
	}
	return left, nil
}

// Get returns the caller's refund refundID.
func (s *Service) Get(ctx context.Context, c payout.Caller, refundID string) (*Info, error) {
	r, err := s.db.Client.Refund.Query().Where(entrefund.UUID(refundID), entrefund.ProjectID(c.ProjectID)).Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %s", ErrRefundNotFound, address.Truncate(refundID))
	}
	if err != nil {
		return nil, fmt.Errorf("refund %s: %w", address.Truncate(refundID), err)
	}
	inv, err := s.db.Client.Invoice.Get(ctx, r.InvoiceID)
	if err != nil {
		return nil, fmt.Errorf("invoice of refund %s: %w", r.UUID, err)
	}
	p, err := s.db.Client.Payment.Get(ctx, r.PaymentID)
	if err != nil {
		return nil, fmt.Errorf("payment of refund %s: %w", r.UUID, err)
	}
	return &Info{Refund: r, PaymentID: inv.PublicID, TxidIn: p.TxidIn, Coin: invoice.CoinName(r.Ticker)}, nil
}

// PayoutEnded implements payout.Observer: the refunds p pays complete
// with its txid, or fail with its error; each tells the merchant.
func (s *Service) PayoutEnded(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout) error {
	rs, err := tx.Refund.Query().Where(entrefund.PayoutID(p.ID), entrefund.StatusEQ(entrefund.StatusPending)).All(ctx)
	if err != nil || len(rs) == 0 {
		return err
	}
	for _, r := range rs {
		u := tx.Refund.UpdateOne(r).SetUpdatedAt(p.UpdatedAt)
		if p.Txid != "" && p.Error == "" {
			u.SetStatus(entrefund.StatusCompleted).SetTxid(p.Txid)
		} else {
			u.SetStatus(entrefund.StatusFailed).SetError(p.Error)
		}
		r, err := u.Save(ctx)
		if err != nil {
			return fmt.Errorf("refund %s: %w", r.UUID, err)
		}
		inv, err := tx.Invoice.Get(ctx, r.InvoiceID)
		if err != nil {
			return fmt.Errorf("invoice of refund %s: %w", r.UUID, err)
		}
		pay, err := tx.Payment.Get(ctx, r.PaymentID)
		if err != nil {
			return fmt.Errorf("payment of refund %s: %w", r.UUID, err)
		}
		if err := s.notify(ctx, tx, t, inv, pay, r); err != nil {
			return err
		}
	}
	return nil
}

// EventType is the webhook event of a refund of an invoice of kind in
// status: checkout.refund.completed, ...
func EventType(k string, status entrefund.Status) string { return k + ".refund." + string(status) }

// notify stores the webhook of refund r of invoice inv's payment p, in
// its status, within tx: to the invoice's notify_url with its transport,
// signed with the project's secret at every attempt.
func (s *Service) notify(ctx context.Context, tx *entdb.Tx, t chains.Ticker, inv *entdb.Invoice, p *entdb.Payment, r *entdb.Refund) error {
	id := uuid.NewString()
	event := EventType(string(inv.Kind), r.Status)
	// Every field through its catalogue definition (eventtype.Refund).
	f := &eventtype.Refund
	fields := []payload.Field{
		f.EventType.Of(event),
		f.UUID.Of(id),
		f.PaymentID.Of(inv.PublicID),
		f.RefundID.Of(r.UUID),
		f.RefundStatus.Of(string(r.Status)),
		f.Coin.Of(invoice.TickerName(t)),
		f.Value.Of(r.Value, t.Decimals),
		f.Address.Of(r.Address),
		f.TxidIn.Of(p.TxidIn),
	}
	if r.Txid != "" {
		fields = append(fields, f.Txid.Of(r.Txid))
	}
	if r.Error != "" {
		fields = append(fields, f.Error.Of(r.Error))
	}
	fields = append(fields, f.Timestamp.Of(s.now().Unix()))
	req, err := payload.EncodeOptional(inv.NotifyURL, payload.TransportFor(inv.Post, inv.JSON), fields, nil)
	if err != nil {
		return fmt.Errorf("encode the webhook of refund %s: %w", r.UUID, err)
	}
	_, err = s.webhooks.Enqueue(ctx, tx, notifier.Message{
		UUID:  id,
		Owner: inv.ProjectID,
		Subject: notifier.Subject{
			Service: string(inv.Kind), Event: event, Ref: inv.PublicID, Topic: t.Ticker,
			Sequence: "refund:" + strconv.FormatInt(r.ID, 10), FirstOfSequence: r.Status == entrefund.StatusPending,
		},
		Request: req,
		Signing: notifier.Signing{Scheme: signer.SchemeWebhook, Key: project.KeyRef(inv.ProjectID)},
		Payload: fields,
	})
	return err
}
