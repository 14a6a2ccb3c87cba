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

// Compute returns the invoice_status of an invoice of value (nil: an open
// amount) given its payments, and whether it is past its expiry. Unknown
// fiat values of confirmed payments count as zero toward the value: the
// merchant sees partial, never a paid it cannot prove.
func Compute(value *decimal.Decimal, expired bool, payments []PaymentState) Status {
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
	switch {
	case confirmed && (value == nil || total.GreaterThanOrEqual(*value)):
		return Paid
	case expired:
		return Expired
	case confirmed:
		return Partial
	case seen:
		return Pending
	}
	return Waiting
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
