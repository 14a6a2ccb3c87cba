package invoice

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// Reactor is the reactor of checkouts and deposits: for every change of a
// payment to an invoice's address it values the payment in the invoice's
// currency (once, when detected), updates the invoice_status and stores
// the webhook <kind>.payment.<status>, signed per attempt with the
// project's IPN secret.
type Reactor struct {
	queue  address.Enqueuer
	prices price.Source
	scheme string
	now    func() time.Time
}

// NewReactor returns the reactor; scheme names the notifier's per-attempt
// signer of merchant webhooks.
func NewReactor(q address.Enqueuer, prices price.Source, scheme string, now func() time.Time) *Reactor {
	return &Reactor{queue: q, prices: prices, scheme: scheme, now: now}
}

// React implements payment.Reactor.
func (r *Reactor) React(ctx context.Context, tx *entdb.Tx, c payment.Change) error {
	a := c.Address
	if a.InvoiceID == nil {
		return nil
	}
	inv, err := Lock(ctx, tx, *a.InvoiceID, r.now())
	if err != nil {
		return fmt.Errorf("invoice of %s: %w", a.AddressIn, err)
	}
	if inv.Kind == entinvoice.KindSubscription {
		return nil // renewals have their own reactor
	}
	p := c.Payment
	if p.ValueFiat == nil {
		if f := r.valueFiat(c.Ticker, a, inv, p, c.ValueCoin); f != nil {
			if err := tx.Payment.UpdateOneID(p.ID).SetValueFiat(*f).Exec(ctx); err != nil {
				return fmt.Errorf("value payment %d: %w", p.ID, err)
			}
			p.ValueFiat = f
		}
	}
	status, err := r.status(ctx, tx, inv, p, c.Status)
	if err != nil {
		return err
	}
	if status != Status(inv.Status) {
		u := tx.Invoice.UpdateOneID(inv.ID).SetStatus(entinvoice.Status(status)).SetUpdatedAt(r.now())
		if status == Paid && inv.PaidAt == nil {
			u.SetPaidAt(r.now())
		}
		if err := u.Exec(ctx); err != nil {
			return fmt.Errorf("update invoice %s: %w", inv.PublicID, err)
		}
	}
	if inv.NotifyURL == "" {
		return nil
	}
	m, err := r.message(c, inv, status)
	if err != nil {
		return err
	}
	_, err = r.queue.Enqueue(ctx, tx, m)
	return err
}

// Lock reads an invoice after writing its row, so that the transactions of
// two watchers (two coins paying one invoice at once) take turns on it: the
// second waits for the first to commit, then reads its payments and its
// status. Without it each could count only its own payment, and an invoice
// paid by the two together would stay partial (and a subscription
// unextended). SQLite transactions are serial already.
func Lock(ctx context.Context, tx *entdb.Tx, id int64, now time.Time) (*entdb.Invoice, error) {
	if err := tx.Invoice.UpdateOneID(id).SetUpdatedAt(now).Exec(ctx); err != nil {
		return nil, err
	}
	return tx.Invoice.Get(ctx, id)
}

// valueFiat values a payment in the invoice's currency: at the address's
// held rate when detected before the quote expired, otherwise at the
// current rate; nil when no rate is known.
func (r *Reactor) valueFiat(t chains.Ticker, a *entdb.Address, inv *entdb.Invoice, p *entdb.Payment, value decimal.Decimal) *decimal.Decimal {
	rate, ok := decimal.Zero, false
	if a.QuoteRate != nil && a.QuoteExpiresAt != nil && !p.CreatedAt.After(*a.QuoteExpiresAt) {
		rate, ok = *a.QuoteRate, true
	} else {
		rate, ok = Rate(r.prices, t, inv.Currency)
	}
	if !ok {
		return nil
	}
	v := value.Mul(rate)
	return &v
}

// status computes the invoice_status after c, from every payment of the
// invoice (the changed one as c reports it).
func (r *Reactor) status(ctx context.Context, tx *entdb.Tx, inv *entdb.Invoice, changed *entdb.Payment, st chains.Status) (Status, error) {
	pays, err := tx.Payment.Query().Where(entpayment.HasAddressWith(entaddress.InvoiceID(inv.ID))).All(ctx)
	if err != nil {
		return "", fmt.Errorf("payments of invoice %s: %w", inv.PublicID, err)
	}
	states := make([]PaymentState, 0, len(pays)+1)
	seen := false
	for _, p := range pays {
		if p.ID == changed.ID {
			seen = true
			states = append(states, PaymentState{Confirmed: st != chains.StatusPending, Fiat: changed.ValueFiat})
			continue
		}
		if counts(p.Status) {
			states = append(states, stateOf(p))
		}
	}
	if !seen {
		states = append(states, PaymentState{Confirmed: st != chains.StatusPending, Fiat: changed.ValueFiat})
	}
	return Compute(inv.Value, pastExpiry(inv, r.now()), states), nil
}

// Webhook field names of checkout and deposit webhooks.
const (
	fEventType          = "event_type"
	fUUID               = "uuid"
	fPaymentID          = "payment_id"
	fPaymentStatus      = "payment_status"
	fInvoiceStatus      = "invoice_status"
	fValue              = "value"
	fCurrency           = "currency"
	fPaidCoin           = "paid_coin"
	fPaidAmount         = "paid_amount"
	fPaidAmountFiat     = "paid_amount_fiat"
	fReceivedAmount     = "received_amount"
	fReceivedAmountFiat = "received_amount_fiat"
	fTxidIn             = "txid_in"
	fTxidOut            = "txid_out"
	fConfirmations      = "confirmations"
)

// EventType is the event type of a payment stage of kind.
func EventType(kind Kind, status string) string { return string(kind) + ".payment." + status }

// Sequence orders a payment's webhooks (pending before confirmed before
// completed).
func Sequence(paymentID int64) string { return "invoice-payment:" + strconv.FormatInt(paymentID, 10) }

// message builds the webhook of c.
func (r *Reactor) message(c payment.Change, inv *entdb.Invoice, status Status) (notifier.Message, error) {
	t, p := c.Ticker, c.Payment
	kind := Kind(inv.Kind)
	id := uuid.NewString()
	event := EventType(kind, string(c.Status))
	places := r.fiatPlaces(inv.Currency)
	fiat := func(name string, d *decimal.Decimal) payload.Field {
		if d == nil {
			return payload.Field{Name: name, Kind: payload.KindNull}
		}
		return payload.String(name, payload.FormatAmount(*d, places))
	}
	fields := []payload.Field{
		payload.String(fEventType, event),
		payload.String(fUUID, id),
		payload.String(fPaymentID, inv.PublicID),
		payload.String(fPaymentStatus, string(c.Status)),
		payload.String(fInvoiceStatus, string(status)),
	}
	if kind == Checkout {
		fields = append(fields, fiat(fValue, inv.Value))
	}
	confs := c.Confirmations
	if n, fixed := t.Rules().FixedConfirmations(t); fixed {
		confs = n
	}
	var netFiat *decimal.Decimal
	if c.Forward != nil {
		netFiat = NetFiat(p.ValueFiat, c.ValueCoin, c.Forward.ValueForwardedCoin)
	}
	fb := Fallback(p.ValueFiat, inv.Value, netFiat)
	fields = append(fields,
		payload.String(fCurrency, inv.Currency),
		payload.String(fPaidCoin, TickerName(t)),
		payload.String(fPaidAmount, payload.FormatAmount(c.ValueCoin, t.Decimals)),
		fiat(fPaidAmountFiat, fb.Paid),
	)
	if c.Status == chains.StatusCompleted && c.Forward != nil {
		fields = append(fields,
			payload.String(fReceivedAmount, payload.FormatAmount(c.Forward.ValueForwardedCoin, t.Decimals)),
			fiat(fReceivedAmountFiat, fb.Received),
		)
	}
	fields = append(fields, payload.String(fTxidIn, p.TxidIn))
	if c.Forward != nil && c.Forward.TxidOut != "" {
		fields = append(fields, payload.String(fTxidOut, c.Forward.TxidOut))
	}
	fields = append(fields, payload.Int(fConfirmations, confs))
	req, err := payload.Encode(inv.NotifyURL, payload.TransportFor(inv.Post, inv.JSON), fields, nil)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("encode webhook of %s: %w", inv.PublicID, err)
	}
	return notifier.Message{
		UUID:  id,
		Owner: inv.ProjectID,
		Subject: notifier.Subject{
			Service:  string(inv.Kind),
			Event:    event,
			Ref:      inv.PublicID,
			Topic:    t.Ticker,
			Sequence: Sequence(p.ID),
		},
		Request: req,
		Signing: notifier.Signing{Scheme: r.scheme, Key: project.KeyRef(inv.ProjectID)},
	}, nil
}

// fiatPlaces is the minor unit of currency (2 when unknown).
func (r *Reactor) fiatPlaces(currency string) int32 {
	if r.prices != nil {
		for _, c := range price.Currencies(r.prices) {
			if c.Code == currency {
				return c.Decimals
			}
		}
	}
	return 2
}

// TickerName is a ticker as the merchant API names coins: trc20_usdt for
// trc20/usdt.
func TickerName(t chains.Ticker) string { return CoinName(t.Ticker) }

// CoinName is TickerName of a ticker's name.
func CoinName(ticker string) string { return strings.ReplaceAll(ticker, "/", "_") }
