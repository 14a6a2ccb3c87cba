// Package subscription is the merchant interface's recurring plans. A
// project creates a subscription for a customer with plan options (a period
// such as 1m and its price); the customer pays a renewal of one option, an
// invoice of kind subscription, through an address per coin handed out
// exactly as a checkout's (same held rate, same minimum); the renewal
// reactor values each payment once, keeps the renewal's invoice_status,
// stores the webhook subscription.payment.<status> (the spec's payment_
// fields, amounts as JSON numbers) and, when the renewal becomes paid,
// extends the subscription by the option's period exactly once, from the
// later of now and the current end.
//
// At most one renewal per option is open (not paid, not past its expiry)
// at a time; a paid renewal is never reused, and an expired one is
// replaced by a new one. Payments that reach an expired renewal are still
// credited, notified and, when they cover its value, extend the
// subscription.
package subscription
