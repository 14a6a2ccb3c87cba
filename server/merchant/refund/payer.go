package refund

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/payout"
)

// Why a payer may ask for a refund on the hosted page.
const (
	// ReasonOverpaid: the invoice is paid above its value; the refund is
	// the overpaid amount of its last payment.
	ReasonOverpaid = "overpaid"
	// ReasonExpired: the invoice expired partly paid; each payment is
	// refunded whole.
	ReasonExpired = "expired"
	// ReasonLate: the payment arrived after the invoice expired, under the
	// late_payments refund policy; it is refunded whole.
	ReasonLate = "late"
)

// ErrNothingToRefund reports a payer refund request of an invoice with
// nothing a payer may ask back.
var ErrNothingToRefund = kind.New(kind.FailedPrecondition, "nothing to refund",
	kind.Public("this payment has nothing to refund"))

// Candidate is a payment of an invoice whose payer may ask for a refund.
type Candidate struct {
	// Payment is the payment; Ticker its coin.
	Payment *entdb.Payment
	Ticker  chains.Ticker
	// Value is what would be refunded; Reason why (ReasonOverpaid, ...).
	Value  decimal.Decimal
	Reason string
}

// Candidates returns what the payer of the invoice of l may ask back now:
// the overpaid amount of a paid invoice's last payment, every payment of
// an invoice that expired partly paid, and every payment held under the
// late_payments refund policy; less what refunds (asked for or sent)
// already take.
func (s *Service) Candidates(ctx context.Context, l *invoice.Logs) ([]Candidate, error) {
	var out []Candidate
	add := func(p *entdb.Payment, v decimal.Decimal, reason string) error {
		if p.Edges.Address == nil {
			return nil
		}
		t, err := s.payouts.Ticker(p.Edges.Address.Ticker)
		if err != nil {
			return nil //nolint:nilerr // a coin no longer offered: nothing to offer
		}
		left, err := refundable(ctx, s.db.Client, p, 0)
		if err != nil {
			return err
		}
		if reason == ReasonOverpaid {
			// What was refunded of the payment already is overpayment.
			v = v.Sub(p.ValueCoin.Sub(left))
		}
		if v = decimal.Min(v, left); v.Sign() > 0 {
			out = append(out, Candidate{Payment: p, Ticker: t, Value: v, Reason: reason})
		}
		return nil
	}
	var last *entdb.Payment
	for _, p := range l.Payments {
		if !Credited(p) {
			continue
		}
		if p.HoldReason == entpayment.HoldReasonLatePayment {
			if err := add(p, p.ValueCoin, ReasonLate); err != nil {
				return nil, err
			}
			continue
		}
		last = p
		if l.Status == invoice.Expired {
			if err := add(p, p.ValueCoin, ReasonExpired); err != nil {
				return nil, err
			}
		}
	}
	if l.Status == invoice.Paid && last != nil {
		if over, ok := overpaid(l, last); ok {
			if err := add(last, over, ReasonOverpaid); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// overpaid is what the payer of the paid invoice of l sent above what was
// due, in the coin of its last payment last: when every payment that
// counts is to last's address, their sum less the address's quote (the
// exact amount asked); otherwise the invoice's overpaid_amount in that
// coin (valued at its rates).
func overpaid(l *invoice.Logs, last *entdb.Payment) (decimal.Decimal, bool) {
	a := last.Edges.Address
	sum := decimal.Zero
	for _, p := range l.Payments {
		if !Credited(p) || p.HoldReason == entpayment.HoldReasonLatePayment {
			continue
		}
		if p.Edges.Address == nil || p.Edges.Address.ID != a.ID {
			sum = decimal.Zero
			break
		}
		sum = sum.Add(p.ValueCoin)
	}
	if a.QuoteValueCoin != nil && sum.Sign() > 0 {
		over := sum.Sub(*a.QuoteValueCoin)
		return over, over.Sign() > 0
	}
	if l.Exceptions.Overpaid != nil && invoice.CoinName(a.Ticker) == l.Coin {
		return *l.Exceptions.Overpaid, l.Exceptions.Overpaid.Sign() > 0
	}
	return decimal.Zero, false
}

// Requested returns the refunds of the invoice's payments, oldest first.
func (s *Service) Requested(ctx context.Context, inv *entdb.Invoice) ([]*entdb.Refund, error) {
	rs, err := s.db.Client.Refund.Query().Where(entrefund.InvoiceID(inv.ID)).Order(entdb.Asc(entrefund.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("refunds of %s: %w", inv.PublicID, err)
	}
	return rs, nil
}

// PayerRequest records the refunds the payer of the invoice of l asks for
// on its hosted page, to addr (an address of each candidate's coin): one
// per candidate, requested (waiting for the merchant's approval), each
// telling the merchant (`<kind>.refund.requested`). A refund of an
// overpayment is approved at once when the project auto-approves them
// (auto_refund_overpaid). Nothing is recorded on bad input; nothing to
// refund is ErrNothingToRefund.
func (s *Service) PayerRequest(ctx context.Context, l *invoice.Logs, addr string) ([]*entdb.Refund, error) {
	cands, err := s.Candidates(ctx, l)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, ErrNothingToRefund
	}
	if addr == "" {
		return nil, address.InvalidForPayer(address.ForPayer("error.refund_address_required"), "address", "is required: where the refund goes")
	}
	for _, c := range cands {
		if err := chains.ValidateAddress(c.Ticker, addr); err != nil {
			return nil, address.InvalidForPayer(address.ForPayer("error.refund_address_invalid", strings.ToUpper(c.Ticker.Coin)), "address", "%v", err)
		}
	}
	inv := l.Invoice
	now := s.now()
	var out []*entdb.Refund
	err = store.WithTx(ctx, s.db.Client, func(tx *entdb.Tx) error {
		out = out[:0]
		for _, c := range cands {
			r, err := tx.Refund.Create().
				SetUUID(uuid.NewString()).SetProjectID(inv.ProjectID).SetInvoiceID(inv.ID).SetPaymentID(c.Payment.ID).
				SetTicker(c.Ticker.Ticker).SetAddress(addr).SetValue(c.Value).SetStatus(entrefund.StatusRequested).
				SetReason(c.Reason).SetCreatedAt(now).SetUpdatedAt(now).
				Save(ctx)
			if err != nil {
				return fmt.Errorf("record the refund of payment %d: %w", c.Payment.ID, err)
			}
			if err := s.notify(ctx, tx, c.Ticker, inv, c.Payment, r); err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pr, err := s.db.Client.Project.Get(ctx, inv.ProjectID)
	if err != nil {
		return nil, fmt.Errorf("project of %s: %w", inv.PublicID, err)
	}
	for i, r := range out {
		if r.Reason != ReasonOverpaid || !pr.AutoRefundOverpaid {
			continue
		}
		// Approved at once; a refusal (not enough balance) leaves it
		// requested, for the merchant.
		if got, _, err := s.Approve(ctx, inv.ProjectID, r.UUID, "auto"); err == nil {
			out[i] = got.Refund
		}
	}
	return out, nil
}

// Approve sends the project's refund refundID that the payer requested,
// recording approver (a dashboard user, "api", or "auto"): its payout is
// recorded and queued as a merchant's refund is (Refund).
func (s *Service) Approve(ctx context.Context, projectID int64, refundID, approver string) (*Info, *payout.Info, error) {
	hc, err := s.invoices.HostedCaller(ctx, projectID)
	if err != nil {
		return nil, nil, err
	}
	c := payout.Caller{APIKeyID: hc.APIKeyID, ProjectID: projectID}
	info, err := s.Get(ctx, c, refundID)
	if err != nil {
		return nil, nil, err
	}
	r := info.Refund
	if r.Status != entrefund.StatusRequested {
		return nil, nil, kind.New(kind.FailedPrecondition, "refund "+r.UUID+" is "+string(r.Status)+": only a requested refund is approved")
	}
	inv, err := s.db.Client.Invoice.Get(ctx, r.InvoiceID)
	if err != nil {
		return nil, nil, fmt.Errorf("invoice of refund %s: %w", r.UUID, err)
	}
	p, err := s.db.Client.Payment.Get(ctx, r.PaymentID)
	if err != nil {
		return nil, nil, fmt.Errorf("payment of refund %s: %w", r.UUID, err)
	}
	t, err := s.payouts.Ticker(r.Ticker)
	if err != nil {
		return nil, nil, err
	}
	r.ApprovedBy = approver
	return s.pay(ctx, c, t, inv, p, r)
}

// Waiting returns the project's refunds the payer requested, oldest first
// (the dashboard's list to approve).
func (s *Service) Waiting(ctx context.Context, projectID int64) ([]*Info, error) {
	rs, err := s.db.Client.Refund.Query().
		Where(entrefund.ProjectID(projectID), entrefund.StatusEQ(entrefund.StatusRequested)).
		Order(entdb.Asc(entrefund.FieldID)).Limit(payout.PageSize).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("refunds waiting for approval: %w", err)
	}
	out := make([]*Info, 0, len(rs))
	for _, r := range rs {
		i, err := s.Get(ctx, payout.Caller{ProjectID: projectID}, r.UUID)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}
