package subscription

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/notifier/payload"
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

// Webhook field names of subscription renewal webhooks.
const (
	fEventType          = "event_type"
	fUUID               = "uuid"
	fToken              = "token"
	fPaymentID          = "payment_id"
	fOption             = "subscription_option"
	fOptionValue        = "subscription_option_value"
	fPaymentStatus      = "payment_status"
	fInvoiceStatus      = "invoice_status"
	fCurrency           = "payment_currency"
	fPaidCoin           = "payment_paid_coin"
	fPaidAmount         = "payment_paid_amount"
	fPaidAmountFiat     = "payment_paid_amount_fiat"
	fReceivedAmount     = "payment_received_amount"
	fReceivedAmountFiat = "payment_received_amount_fiat"
	fTxidIn             = "txid_in"
	fTxidOut            = "txid_out"
	fConfirmations      = "confirmations"
	optionValuePlaces   = 2
	eventTypePrefix     = "subscription.payment."
)

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
	num := func(name, text string) payload.Field {
		return payload.Field{Name: name, Kind: payload.KindNumber, Text: text}
	}
	fiat := func(name string, d *decimal.Decimal) payload.Field {
		if d == nil {
			return payload.Field{Name: name, Kind: payload.KindNull}
		}
		return num(name, payload.FormatAmount(*d, s.FiatPlaces))
	}
	optionValue := "0"
	if s.OptionValue != nil {
		optionValue = payload.FormatAmount(*s.OptionValue, optionValuePlaces)
	}
	var netFiat *decimal.Decimal
	if s.ReceivedCoin != nil {
		netFiat = invoice.NetFiat(s.PaidFiat, s.PaidCoin, *s.ReceivedCoin)
	}
	fb := invoice.Fallback(s.PaidFiat, s.OptionValue, netFiat)
	fields := []payload.Field{
		payload.String(fEventType, EventType(s.PaymentStatus)),
		payload.String(fUUID, s.UUID),
		payload.String(fToken, s.Token),
		payload.String(fPaymentID, s.PaymentID),
		payload.String(fPaymentStatus, string(s.PaymentStatus)),
		payload.String(fInvoiceStatus, string(s.InvoiceStatus)),
		payload.String(fOption, s.Option),
		num(fOptionValue, optionValue),
		payload.String(fCurrency, s.Currency),
		payload.String(fPaidCoin, invoice.TickerName(s.Ticker)),
		num(fPaidAmount, payload.FormatAmount(s.PaidCoin, s.Ticker.Decimals)),
		fiat(fPaidAmountFiat, fb.Paid),
	}
	if s.PaymentStatus == chains.StatusCompleted && s.ReceivedCoin != nil {
		fields = append(fields,
			num(fReceivedAmount, payload.FormatAmount(*s.ReceivedCoin, s.Ticker.Decimals)),
			fiat(fReceivedAmountFiat, fb.Received),
		)
	}
	fields = append(fields, payload.String(fTxidIn, s.TxidIn))
	if s.TxidOut != "" {
		fields = append(fields, payload.String(fTxidOut, s.TxidOut))
	}
	confs := s.Confirmations
	if n, fixed := s.Ticker.Rules().FixedConfirmations(s.Ticker); fixed {
		confs = n
	}
	return append(fields, payload.Int(fConfirmations, confs))
}
