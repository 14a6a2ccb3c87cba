package subscription

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/invoice"
)

// Status is a subscription's status, computed from expires_at with the
// service's clock (nothing stores it).
type Status string

// Subscription statuses.
const (
	// Pending: no renewal was ever paid (expires_at is unset).
	Pending Status = "pending"
	// Active: paid until expires_at, which is in the future.
	Active Status = "active"
	// Expired: expires_at has passed and no paid renewal extended it.
	Expired Status = "expired"
)

// StatusAt is the status of a subscription that expires at expiresAt (nil:
// never paid) at now.
func StatusAt(expiresAt *time.Time, now time.Time) Status {
	switch {
	case expiresAt == nil:
		return Pending
	case now.Before(*expiresAt):
		return Active
	}
	return Expired
}

// ReceivedFiat is received_fiat of a renewal in list and fetch: the
// incoming fiat (before fees) of its confirmed and completed payments,
// each payment counted once whatever its stage; zero when none qualifies;
// nil when any qualifying payment's valuation is unknown. The webhooks'
// fallbacks do not apply (spec rule 5).
func ReceivedFiat(payments []invoice.PaymentState) *decimal.Decimal {
	total := decimal.Zero
	for _, p := range payments {
		if !p.Confirmed {
			continue
		}
		if p.Fiat == nil {
			return nil
		}
		total = total.Add(*p.Fiat)
	}
	return &total
}

// Stage is what one renewal webhook reports.
type Stage struct {
	// UUID identifies the notification.
	UUID string
	// Token is the subscription's.
	Token string
	// PaymentID is the renewal's public id; Option its period.
	PaymentID, Option string
	// PaymentStatus is the payment's stage.
	PaymentStatus chains.Status
	// InvoiceStatus is the renewal's invoice_status after the change.
	InvoiceStatus invoice.Status
	// OptionValue is the option's price (nil: unavailable).
	OptionValue *decimal.Decimal
	// Currency is the subscription's fiat currency; FiatPlaces its minor
	// unit.
	Currency   string
	FiatPlaces int32
	// Ticker is the coin paid.
	Ticker chains.Ticker
	// PaidCoin is the incoming amount; PaidFiat its stored valuation (nil:
	// unknown).
	PaidCoin decimal.Decimal
	PaidFiat *decimal.Decimal
	// ReceivedCoin is the distributed amount after fees (completed only;
	// nil before).
	ReceivedCoin *decimal.Decimal
	// TxidIn and TxidOut are the incoming and forwarding transactions.
	TxidIn, TxidOut string
	// Confirmations is the depth reported.
	Confirmations int64
}

// optionValuePlaces rounds subscription_option_value.
const optionValuePlaces = 2

// eventTypePrefix starts the event type of a renewal payment's stage.
const eventTypePrefix = "subscription.payment."

// EventType is the event type of a renewal payment's stage.
func EventType(st chains.Status) string { return eventTypePrefix + string(st) }

// Fields are the payload of a renewal webhook, in order. Amounts are JSON
// numbers written in minimal exact form (GET and form carry the same
// text): subscription_option_value rounded to two decimals (0 when
// unavailable), coin amounts to the coin's decimals, fiat amounts to the
// currency's minor unit. The fiat amounts follow the spec's fallbacks:
// payment_paid_amount_fiat is the payment's valuation, else the option's
// value; payment_received_amount_fiat (completed only) values the received
// coin at the payment's rate, else takes payment_paid_amount_fiat; either
// may be null.
func Fields(s Stage) []payload.Field {
	// Every field through its catalogue definition (eventtype.Subscription).
	f := &eventtype.Subscription
	optionValue := decimal.Zero
	if s.OptionValue != nil {
		optionValue = *s.OptionValue
	}
	var netFiat *decimal.Decimal
	if s.ReceivedCoin != nil {
		netFiat = invoice.NetFiat(s.PaidFiat, s.PaidCoin, *s.ReceivedCoin)
	}
	fb := invoice.Fallback(s.PaidFiat, s.OptionValue, netFiat)
	fields := []payload.Field{
		f.EventType.Of(EventType(s.PaymentStatus)),
		f.UUID.Of(s.UUID),
		f.Token.Of(s.Token),
		f.PaymentID.Of(s.PaymentID),
		f.PaymentStatus.Of(string(s.PaymentStatus)),
		f.InvoiceStatus.Of(string(s.InvoiceStatus)),
		f.Option.Of(s.Option),
		f.OptionValue.Of(optionValue, optionValuePlaces),
		f.Currency.Of(s.Currency),
		f.PaidCoin.Of(invoice.TickerName(s.Ticker)),
		f.PaidAmount.Of(s.PaidCoin, s.Ticker.Decimals),
		f.PaidAmountFiat.Of(fb.Paid, s.FiatPlaces),
	}
	if s.PaymentStatus == chains.StatusCompleted && s.ReceivedCoin != nil {
		fields = append(fields,
			f.ReceivedAmount.Of(*s.ReceivedCoin, s.Ticker.Decimals),
			f.ReceivedAmountFiat.Of(fb.Received, s.FiatPlaces),
		)
	}
	fields = append(fields, f.TxidIn.Of(s.TxidIn))
	if s.TxidOut != "" {
		fields = append(fields, f.TxidOut.Of(s.TxidOut))
	}
	confs := s.Confirmations
	if n, fixed := s.Ticker.Rules().FixedConfirmations(s.Ticker); fixed {
		confs = n
	}
	return append(fields, f.Confirmations.Of(confs))
}
