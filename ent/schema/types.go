package schema

import "github.com/shopspring/decimal"

// Destination is one forwarding target of an address: the coin received is
// split between destinations by Share. decimal.Decimal marshals to a JSON
// string, so shares keep their exact precision in the JSON column.
type Destination struct {
	// Address is the chain address that receives this share.
	Address string `json:"address"`
	// Share is the fraction (or amount, as the caller's rules define) sent to Address.
	Share decimal.Decimal `json:"share"`
}

// Param is one merchant-supplied key/value pair echoed back in callbacks.
// Params are stored as an ordered list because the order in which a merchant
// gave them is the order in which they are sent back.
type Param struct {
	// Key is the parameter name.
	Key string `json:"key"`
	// Value is the parameter value.
	Value string `json:"value"`
}

// Output is one forwarding transfer: an amount sent to an address.
type Output struct {
	// Address receives Amount.
	Address string `json:"address"`
	// Amount is in coin units.
	Amount decimal.Decimal `json:"amount"`
	// Key is Address's derivation index when it is a payhook address
	// (chains.Output.Key); absent otherwise.
	Key *int64 `json:"key,omitempty"`
}

// Hold reasons of a payment (Payment.hold_reason): why its funds stay on the
// payment address instead of being forwarded.
const (
	// HoldNone: nothing holds the payment; it is forwarded once credited.
	HoldNone = "none"
	// HoldNoWallet: its address has no forwarding destination.
	HoldNoWallet = "no_wallet"
	// HoldBelowMinimum: below the coin's minimum transaction, or the fees
	// would consume it.
	HoldBelowMinimum = "below_minimum"
	// HoldBelowDust: an output of its split would be below the smallest
	// amount the network carries to that destination.
	HoldBelowDust = "below_dust"
	// HoldWrongAsset: it paid another asset than the address expects.
	HoldWrongAsset = "wrong_asset"
	// HoldOperator: the operator holds it.
	HoldOperator = "operator_hold"
	// HoldLatePayment: it paid a checkout after its expiry, and the
	// checkout's late_payments policy is refund: credited and notified,
	// held for the refund (never forwarded, never spent by a payout).
	HoldLatePayment = "late_payment"
)

// Late payment policies of a project and of a checkout (late_payments):
// what becomes of a payment detected after the checkout expired.
const (
	// LateCredit credits and forwards it like any other payment (the
	// default, and the behaviour before the policy existed).
	LateCredit = "credit"
	// LateRefund credits and notifies it, but holds it (HoldLatePayment)
	// for a refund instead of forwarding it.
	LateRefund = "refund"
)

// Transfer is one incoming transfer an outgoing transaction spends (the
// UTXO it spends, or the payment whose balance it moves on account chains).
type Transfer struct {
	// TxID is the incoming transaction.
	TxID string `json:"txid"`
	// Index is the output index (vout, log index) within TxID.
	Index int64 `json:"index"`
	// To is the address that received it.
	To string `json:"to"`
	// Value is its amount, in coin units.
	Value decimal.Decimal `json:"value"`
	// Key is the derivation index of To's key when To is not the
	// outbound's from_address (a payout spending the held outputs of
	// several addresses); omitted otherwise.
	Key *int64 `json:"key,omitempty"`
}
