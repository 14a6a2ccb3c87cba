package invoice

import (
	"github.com/shopspring/decimal"
)

// Status is an invoice_status: whether the merchant may ship, separate from
// the payment_status of each payment.
type Status string

// invoice_status values, in the order a checkout goes through them.
const (
	// Waiting: nothing seen yet.
	Waiting Status = "waiting"
	// Pending: a payment was seen and awaits confirmations; nothing
	// confirmed covers the value yet.
	Pending Status = "pending"
	// Partial: confirmed payments are below the invoice's value.
	Partial Status = "partial"
	// Paid: confirmed payments cover the value (any confirmed payment, for
	// an open amount or a deposit). Ship.
	Paid Status = "paid"
	// Expired: the invoice expired before it was paid. Payments after
	// expiry are still credited and notified; one that completes the value
	// makes the invoice paid.
	Expired Status = "expired"
)

// PaymentState is what the status rules need of one payment.
type PaymentState struct {
	// Confirmed is true once the payment is credited (confirmed or
	// completed).
	Confirmed bool
	// Fiat is its incoming fiat value; nil when unknown.
	Fiat *decimal.Decimal
}

// Settlement is where an invoice stands: its invoice_status and the fiat
// amounts the merchant acts on.
type Settlement struct {
	// Status is the invoice_status.
	Status Status
	// Paid is the confirmed incoming fiat (unknown valuations count as
	// zero).
	Paid decimal.Decimal
	// Due is what a partial invoice still lacks of its value (value - Paid,
	// exact); nil unless Status is Partial.
	Due *decimal.Decimal
	// Overpaid is what a paid invoice received above its value (Paid -
	// value, exact); nil unless Status is Paid and Paid exceeds the value.
	Overpaid *decimal.Decimal
}

// Compute returns the invoice_status of an invoice of value (nil: an open
// amount) given its payments, the percent of the value it may lack and
// still be paid (tolerance, 0 for none), and whether it is past its expiry.
func Compute(value *decimal.Decimal, tolerance decimal.Decimal, expired bool, payments []PaymentState) Status {
	return Settle(value, tolerance, expired, payments).Status
}

// Settle computes an invoice's Settlement. Unknown fiat values of confirmed
// payments count as zero toward the value: the merchant sees partial, never
// a paid it cannot prove. With a tolerance the invoice is paid once the
// confirmed fiat reaches value x (1 - tolerance/100), exactly (decimal
// arithmetic throughout); what it then lacks is not due.
func Settle(value *decimal.Decimal, tolerance decimal.Decimal, expired bool, payments []PaymentState) Settlement {
	seen, confirmed := false, false
	total := decimal.Zero
	for _, p := range payments {
		seen = true
		if p.Confirmed {
			confirmed = true
			if p.Fiat != nil {
				total = total.Add(*p.Fiat)
			}
		}
	}
	s := Settlement{Paid: total}
	enough := value == nil
	if value != nil {
		threshold := *value
		if tolerance.IsPositive() {
			threshold = value.Sub(value.Mul(tolerance).Shift(-2)) // exact: /100
		}
		enough = total.GreaterThanOrEqual(threshold)
	}
	switch {
	case confirmed && enough:
		s.Status = Paid
		if value != nil && total.GreaterThan(*value) {
			over := total.Sub(*value)
			s.Overpaid = &over
		}
	case expired:
		s.Status = Expired
	case confirmed:
		s.Status = Partial
		due := value.Sub(total)
		s.Due = &due
	case seen:
		s.Status = Pending
	default:
		s.Status = Waiting
	}
	return s
}

// InCoin converts a fiat amount into a coin worth rate (fiat per coin), to
// the coin's decimals, exactly (no intermediate rounding): rounded up when
// up (an amount due, so that paying it covers the fiat), down otherwise
// (an overpaid amount, never more than was paid).
func InCoin(fiat, rate decimal.Decimal, decimals int32, up bool) decimal.Decimal {
	q, r := fiat.QuoRem(rate, decimals)
	if up && r.Sign() > 0 {
		q = q.Add(decimal.New(1, -decimals))
	}
	return q
}

// RoundFiat rounds a fiat amount to places: up for an amount due, down for
// an overpaid one (as InCoin).
func RoundFiat(fiat decimal.Decimal, places int32, up bool) decimal.Decimal {
	if up {
		return fiat.RoundUp(places)
	}
	return fiat.RoundDown(places)
}

// Fiat are the fiat amounts of one payment stage's webhook, after the
// spec's fallbacks.
type Fiat struct {
	// Paid is paid_amount_fiat: the incoming fiat, or the invoice's value
	// when unknown (rule 1); nil when both are missing (rule 3).
	Paid *decimal.Decimal
	// Received is received_amount_fiat (completed only): the fiat of what
	// was forwarded, or Paid when unknown (rule 2).
	Received *decimal.Decimal
}

// Fallback applies the fiat fallback rules of checkout, deposit and
// subscription webhooks: incomingFiat is the payment's incoming fiat (nil:
// unknown), value the invoice's requested amount (nil: none), netFiat the
// fiat of what was forwarded (nil: unknown or not completed).
func Fallback(incomingFiat, value, netFiat *decimal.Decimal) Fiat {
	f := Fiat{Paid: incomingFiat}
	if f.Paid == nil {
		f.Paid = value
	}
	f.Received = netFiat
	if f.Received == nil {
		f.Received = f.Paid
	}
	return f
}

// NetFiat values the received amount at the rate the incoming amount was
// valued at (incomingFiat / paidCoin): nil when either is unknown or zero.
func NetFiat(incomingFiat *decimal.Decimal, paidCoin, receivedCoin decimal.Decimal) *decimal.Decimal {
	if incomingFiat == nil || !paidCoin.IsPositive() {
		return nil
	}
	v := receivedCoin.Mul(*incomingFiat).Div(paidCoin)
	return &v
}
