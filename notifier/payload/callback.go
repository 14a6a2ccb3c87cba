package payload

import "github.com/shopspring/decimal"

// Payment statuses a callback reports.
const (
	// StatusPending is a payment seen but not yet at its required confirmations.
	StatusPending = "pending"
	// StatusConfirmed is a payment accepted at its required confirmations.
	StatusConfirmed = "confirmed"
	// StatusCompleted is a payment whose funds were forwarded.
	StatusCompleted = "completed"
)

// Share is one forwarding destination of address_out and its share.
type Share struct {
	// Address is the destination wallet.
	Address string
	// Share is the destination's fraction of the forwarded funds, written as
	// an exact JSON number.
	Share decimal.Decimal
}

// Param is one merchant custom parameter (cb_params or the callback URL's
// own query), echoed as a string field.
type Param struct {
	// Key is the parameter name; it must not be empty.
	Key string
	// Value is the decoded parameter value.
	Value string
}

// Callback is the content of one low-level callback event. Encode turns it
// into bytes; see the package documentation for how each field is written.
type Callback struct {
	// UUID identifies the event; stable across retries, required.
	UUID string
	// AddressIn is the payment address, required.
	AddressIn string
	// AddressOut lists the forwarding destinations in the order given at
	// creation; written as the object {"address":share,...}. Addresses must
	// be distinct and non-empty.
	AddressOut []Share
	// TxidIn is the incoming transaction hash, required.
	TxidIn string
	// TxidOut is the forwarding transaction hash; "" omits it. Only sent with
	// completed events.
	TxidOut string
	// Confirmations is the current depth of TxidIn (>= 0).
	Confirmations int64
	// RequiredConfirmations is the merchant's threshold (>= 1).
	RequiredConfirmations int64
	// PaymentStatus is StatusPending, StatusConfirmed or StatusCompleted.
	PaymentStatus string
	// Coin is the asset symbol, e.g. "btc" or "usdt", required.
	Coin string
	// Decimals is the coin's precision, 0..MaxDecimals; every amount is
	// rounded to it.
	Decimals int32
	// Price is the last known USD price, written as a string (not rounded);
	// nil omits it.
	Price *decimal.Decimal
	// ValueCoin is the amount received, in coin units (>= 0); always sent.
	ValueCoin decimal.Decimal
	// ValueForwardedCoin is the amount forwarded after fees; completed events
	// only. It cannot be null (the spec types it number or string).
	ValueForwardedCoin Amount
	// FeeCoin is the service fee in coin units; completed events only; may
	// be null when unknown.
	FeeCoin Amount
	// NetworkFee is the amount deducted for network costs; completed events
	// only; may be null when unknown.
	NetworkFee Amount
	// ValueCoinConvert is the fiat conversion of ValueCoin as JSON text
	// (`{"USD":"12.34"}`, `{}` or `12.5`); nil omits it. Sent at every stage.
	// It is always carried as a string whose content is this text.
	ValueCoinConvert *string
	// ValueForwardedCoinConvert is the same for ValueForwardedCoin;
	// completed events only.
	ValueForwardedCoinConvert *string
	// Params are the merchant's custom parameters in order.
	Params []Param
}

// Wire names of the payload fields, in the order they are written.
const (
	fUUID                      = "uuid"
	fAddressIn                 = "address_in"
	fAddressOut                = "address_out"
	fTxidIn                    = "txid_in"
	fTxidOut                   = "txid_out"
	fConfirmations             = "confirmations"
	fRequiredConfirmations     = "required_confirmations"
	fPaymentStatus             = "payment_status"
	fCoin                      = "coin"
	fPrice                     = "price"
	fValueCoin                 = "value_coin"
	fValueForwardedCoin        = "value_forwarded_coin"
	fFeeCoin                   = "fee_coin"
	fNetworkFee                = "network_fee"
	fValueCoinConvert          = "value_coin_convert"
	fValueForwardedCoinConvert = "value_forwarded_coin_convert"
)

var fieldOrder = [...]string{
	fUUID, fAddressIn, fAddressOut, fTxidIn, fTxidOut, fConfirmations,
	fRequiredConfirmations, fPaymentStatus, fCoin, fPrice, fValueCoin,
	fValueForwardedCoin, fFeeCoin, fNetworkFee, fValueCoinConvert,
	fValueForwardedCoinConvert,
}

// ReservedFields lists every field name the payload can carry, in the order
// they are written. The address API refuses custom parameters with these
// names; Encode leaves such parameters out of POST bodies (the payload field
// wins). Encode does not read this variable: changing it changes nothing.
var ReservedFields = FieldOrder()

// FieldOrder returns a fresh copy of the payload field names in the order
// they are written.
func FieldOrder() []string { return append([]string(nil), fieldOrder[:]...) }

// IsReserved reports whether name is a payload field name (case-sensitive),
// which a custom parameter must not use.
func IsReserved(name string) bool {
	for _, f := range fieldOrder {
		if f == name {
			return true
		}
	}
	return false
}
