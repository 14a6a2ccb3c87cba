package eventtype

// The field definitions of each family of event types, in the order the
// builders write them. Builders make every field of a payload through
// these (Invoice.UUID.Of(id), ...); the catalogue (All) lists the fields
// of each event type from the same values. They are not to be modified.

// The stages of the payment event types (payment_status).
const (
	// StagePending is a payment seen, below its required confirmations.
	StagePending = "pending"
	// StageConfirmed is a payment at its required confirmations: credited.
	StageConfirmed = "confirmed"
	// StageCompleted is a payment whose funds were forwarded (or held).
	StageCompleted = "completed"
)

// The stages of the refund event types (refund_status).
const (
	// StageRequested is a refund the payer asked for on the hosted page,
	// waiting for the merchant's approval.
	StageRequested = "requested"
	// StageRefundPending is a refund approved, its payout under way.
	StageRefundPending = "pending"
	// StageRefundCompleted is a refund sent: its payout is done.
	StageRefundCompleted = "completed"
	// StageRefundFailed is a refund whose payout failed.
	StageRefundFailed = "failed"
)

// The stages of the payout event types (status).
const (
	// StageDone is a payout sent.
	StageDone = "done"
	// StageError is a payout that failed; nothing was paid.
	StageError = "error"
)

// invoiceStatuses are the invoice_status values a payment webhook carries:
// an invoice with a payment is never waiting.
var invoiceStatuses = []string{"pending", "partial", "paid", "expired"}

var completedOnly = []string{StageCompleted}

// Invoice defines the fields of the checkout and deposit payment webhooks
// (checkout.payment.*, deposit.payment.*). Amounts are JSON strings.
var Invoice = struct {
	EventType, UUID, PaymentID, PaymentStatus, InvoiceStatus StringField
	// Value is the checkout's requested amount (not in deposits).
	Value                       NullableAmountField
	Currency, PaidCoin          StringField
	PaidAmount                  AmountField
	PaidAmountFiat              NullableAmountField
	ReceivedAmount              AmountField
	ReceivedAmountFiat          NullableAmountField
	AmountDue                   NullableAmountField
	AmountDueFiat               AmountField
	OverpaidAmount              NullableAmountField
	OverpaidAmountFiat          AmountField
	HoldReason, TxidIn, TxidOut StringField
	Confirmations               IntegerField
}{
	EventType:     str(Field{Name: "event_type", Fixed: EventName, Description: "The event type."}),
	UUID:          str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this webhook; each event has its own."}),
	PaymentID:     str(Field{Name: "payment_id", Description: "The invoice's payment_id, as its request answered it."}),
	PaymentStatus: str(Field{Name: "payment_status", Fixed: StageName, Description: "The payment's stage: pending, confirmed (credited) or completed (forwarded)."}),
	InvoiceStatus: str(Field{Name: "invoice_status", Enum: invoiceStatuses, Description: "The invoice's settlement after this payment, separate from payment_status: ship when it is paid."}),
	Value:         nullableAmount(Field{Name: "value", Description: "The checkout's requested amount in currency; null for an open amount."}),
	Currency:      str(Field{Name: "currency", Description: "The invoice's fiat currency (USD, EUR, ...)."}),
	PaidCoin:      str(Field{Name: "paid_coin", Description: "The coin paid, as the API names coins (btc, trc20_usdt)."}),
	PaidAmount:    amount(Field{Name: "paid_amount", Description: "The amount received in paid_coin, before fees."}),
	PaidAmountFiat: nullableAmount(Field{Name: "paid_amount_fiat",
		Description: "paid_amount in currency, before fees (the payment's valuation, else the invoice's value); null when unknown."}),
	ReceivedAmount: amount(Field{Name: "received_amount", Stages: completedOnly,
		Description: "The amount forwarded to the merchant's wallets after fees, in paid_coin."}),
	ReceivedAmountFiat: nullableAmount(Field{Name: "received_amount_fiat", Stages: completedOnly,
		Description: "received_amount in currency (at the payment's rate, else paid_amount_fiat); null when unknown."}),
	AmountDue: nullableAmount(Field{Name: "amount_due", When: "when invoice_status is partial",
		Description: "What the invoice still lacks, in paid_coin, rounded up; null when the coin has no rate."}),
	AmountDueFiat: amount(Field{Name: "amount_due_fiat", When: "when invoice_status is partial",
		Description: "What the invoice still lacks, in currency, rounded up to its minor unit."}),
	OverpaidAmount: nullableAmount(Field{Name: "overpaid_amount", When: "when the invoice is paid above its value",
		Description: "What the invoice received above its value, in paid_coin, rounded down; null when the coin has no rate."}),
	OverpaidAmountFiat: amount(Field{Name: "overpaid_amount_fiat", When: "when the invoice is paid above its value",
		Description: "What the invoice received above its value, in currency, rounded down to its minor unit."}),
	HoldReason: str(Field{Name: "hold_reason", Enum: []string{"late_payment"}, When: "when the payment arrived after the invoice expired and is held for a refund",
		Description: "Why the payment is held instead of forwarded."}),
	TxidIn: str(Field{Name: "txid_in", Description: "The incoming transaction's hash."}),
	TxidOut: str(Field{Name: "txid_out", Stages: completedOnly, When: "when the funds were forwarded by a transaction (not when they are held)",
		Description: "The forwarding transaction's hash."}),
	Confirmations: integer(Field{Name: "confirmations", Description: "The incoming transaction's depth (1 on Solana: accepted)."}),
}

// invoiceFields are the fields of a payment webhook of a checkout
// (checkout true) or a deposit, in wire order.
func invoiceFields(checkout bool) []Def {
	f := Invoice
	l := []Def{f.EventType, f.UUID, f.PaymentID, f.PaymentStatus, f.InvoiceStatus}
	if checkout {
		l = append(l, f.Value)
	}
	l = append(l, f.Currency, f.PaidCoin, f.PaidAmount, f.PaidAmountFiat, f.ReceivedAmount, f.ReceivedAmountFiat)
	if checkout {
		// A deposit has no value: nothing is due or overpaid.
		l = append(l, f.AmountDue, f.AmountDueFiat, f.OverpaidAmount, f.OverpaidAmountFiat)
	}
	return append(l, f.HoldReason, f.TxidIn, f.TxidOut, f.Confirmations)
}

// Subscription defines the fields of the subscription renewal webhooks
// (subscription.payment.*). Amounts are JSON numbers.
var Subscription = struct {
	EventType, UUID, Token, PaymentID, PaymentStatus, InvoiceStatus, Option StringField
	OptionValue                                                             NumberField
	Currency, PaidCoin                                                      StringField
	PaidAmount                                                              NumberField
	PaidAmountFiat                                                          NullableNumberField
	ReceivedAmount                                                          NumberField
	ReceivedAmountFiat                                                      NullableNumberField
	TxidIn, TxidOut                                                         StringField
	Confirmations                                                           IntegerField
}{
	EventType:     str(Field{Name: "event_type", Fixed: EventName, Description: "The event type."}),
	UUID:          str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this webhook; each event has its own."}),
	Token:         str(Field{Name: "token", Description: "The subscription's token."}),
	PaymentID:     str(Field{Name: "payment_id", Description: "The renewal's payment_id."}),
	PaymentStatus: str(Field{Name: "payment_status", Fixed: StageName, Description: "The payment's stage: pending, confirmed (credited) or completed (forwarded)."}),
	InvoiceStatus: str(Field{Name: "invoice_status", Enum: invoiceStatuses, Description: "The renewal's settlement after this payment; paid extends the subscription."}),
	Option:        str(Field{Name: "subscription_option", Description: "The option renewed: its period (1m, 1y, ...)."}),
	OptionValue:   number(Field{Name: "subscription_option_value", Description: "The option's price in payment_currency, rounded to two decimals; 0 when unavailable."}),
	Currency:      str(Field{Name: "payment_currency", Description: "The subscription's fiat currency."}),
	PaidCoin:      str(Field{Name: "payment_paid_coin", Description: "The coin paid, as the API names coins (btc, trc20_usdt)."}),
	PaidAmount:    number(Field{Name: "payment_paid_amount", Description: "The amount received in payment_paid_coin, before fees."}),
	PaidAmountFiat: nullableNumber(Field{Name: "payment_paid_amount_fiat",
		Description: "payment_paid_amount in payment_currency, before fees (the payment's valuation, else the option's value); null when unknown."}),
	ReceivedAmount: number(Field{Name: "payment_received_amount", Stages: completedOnly,
		Description: "The amount forwarded after fees, in payment_paid_coin."}),
	ReceivedAmountFiat: nullableNumber(Field{Name: "payment_received_amount_fiat", Stages: completedOnly,
		Description: "payment_received_amount in payment_currency (at the payment's rate, else payment_paid_amount_fiat); null when unknown."}),
	TxidIn: str(Field{Name: "txid_in", Description: "The incoming transaction's hash."}),
	TxidOut: str(Field{Name: "txid_out", Stages: completedOnly, When: "when the funds were forwarded by a transaction (not when they are held)",
		Description: "The forwarding transaction's hash."}),
	Confirmations: integer(Field{Name: "confirmations", Description: "The incoming transaction's depth (1 on Solana: accepted)."}),
}

func subscriptionFields() []Def {
	f := Subscription
	return []Def{
		f.EventType, f.UUID, f.Token, f.PaymentID, f.PaymentStatus, f.InvoiceStatus, f.Option, f.OptionValue,
		f.Currency, f.PaidCoin, f.PaidAmount, f.PaidAmountFiat, f.ReceivedAmount, f.ReceivedAmountFiat,
		f.TxidIn, f.TxidOut, f.Confirmations,
	}
}

// Callback defines the fields of the low-level callbacks (custom.payment.*),
// the spec's "Callback notification" table. The merchant's custom
// parameters follow them, as strings.
var Callback = struct {
	UUID, AddressIn                         StringField
	AddressOut                              ObjectField
	TxidIn, TxidOut                         StringField
	Confirmations, RequiredConfirmations    IntegerField
	PaymentStatus, Coin, Price              StringField
	ValueCoin, ValueForwardedCoin           NumberField
	FeeCoin, NetworkFee                     NullableNumberField
	ValueCoinConvert, ValueForwardedConvert StringField
}{
	UUID:      str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this callback; each status event has its own."}),
	AddressIn: str(Field{Name: "address_in", Description: "The payment address the payer paid."}),
	AddressOut: object(Field{Name: "address_out", Values: TypeNumber,
		Description: "The forwarding destinations: each address and its share (in GET and form, the same object as JSON text)."}),
	TxidIn: str(Field{Name: "txid_in", Description: "The incoming transaction's hash; one txid_in has a callback per status."}),
	TxidOut: str(Field{Name: "txid_out", Stages: completedOnly, When: "when the funds were forwarded by a transaction",
		Description: "The forwarding transaction's hash."}),
	Confirmations: integer(Field{Name: "confirmations", Description: "The incoming transaction's depth (1 on Solana: accepted)."}),
	RequiredConfirmations: integer(Field{Name: "required_confirmations",
		Description: "The address's confirmation threshold (1 on Solana)."}),
	PaymentStatus: str(Field{Name: "payment_status", Fixed: StageName, Description: "The payment's stage: pending, confirmed (credited) or completed (forwarded)."}),
	Coin:          str(Field{Name: "coin", Description: "The asset's symbol (btc, usdt, ...)."}),
	Price: str(Field{Name: "price", Pattern: decimalPattern, When: "when a USD price of the coin is known",
		Description: "The coin's last known price in USD."}),
	ValueCoin: number(Field{Name: "value_coin", Description: "The amount received, in the coin."}),
	ValueForwardedCoin: number(Field{Name: "value_forwarded_coin", Stages: completedOnly,
		Description: "The amount forwarded to the destinations after fees, in the coin."}),
	FeeCoin: nullableNumber(Field{Name: "fee_coin", Stages: completedOnly,
		Description: "The service fee, in the coin; null when unknown."}),
	NetworkFee: nullableNumber(Field{Name: "network_fee", Stages: completedOnly,
		Description: "The amount deducted for network costs, in the coin; null when unknown."}),
	ValueCoinConvert: str(Field{Name: "value_coin_convert", JSONText: true, When: "when the address was created with convert=1",
		Description: "value_coin in every fiat currency, as JSON text of an object of currency code to amount string ({} when the USD price is unknown)."}),
	ValueForwardedConvert: str(Field{Name: "value_forwarded_coin_convert", JSONText: true, Stages: completedOnly, When: "when the address was created with convert=1",
		Description: "value_forwarded_coin in every fiat currency, as value_coin_convert."}),
}

// CallbackFields are the fields of a low-level callback, in wire order.
func CallbackFields() []Def {
	f := Callback
	return []Def{
		f.UUID, f.AddressIn, f.AddressOut, f.TxidIn, f.TxidOut, f.Confirmations, f.RequiredConfirmations,
		f.PaymentStatus, f.Coin, f.Price, f.ValueCoin, f.ValueForwardedCoin, f.FeeCoin, f.NetworkFee,
		f.ValueCoinConvert, f.ValueForwardedConvert,
	}
}

// WrongAsset defines the fields of the wrong_asset webhook.
var WrongAsset = struct {
	EventType, UUID, AddressIn, Coin, ExpectedCoin StringField
	ValueCoin                                      AmountField
	TxidIn                                         StringField
	Confirmations                                  IntegerField
	PaymentID                                      StringField
}{
	EventType:     str(Field{Name: "event_type", Fixed: EventName, Description: "The event type."}),
	UUID:          str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this webhook."}),
	AddressIn:     str(Field{Name: "address_in", Description: "The payment address that received the other asset."}),
	Coin:          str(Field{Name: "coin", Description: "The asset received, as the API names coins (erc20_usdt)."}),
	ExpectedCoin:  str(Field{Name: "expected_coin", Description: "The asset the address was created for."}),
	ValueCoin:     amount(Field{Name: "value_coin", Description: "The amount received, in coin."}),
	TxidIn:        str(Field{Name: "txid_in", Description: "The incoming transaction's hash: what the wrong-asset forward and refund calls name."}),
	Confirmations: integer(Field{Name: "confirmations", Description: "The incoming transaction's depth."}),
	PaymentID: str(Field{Name: "payment_id", When: "when the address is a checkout's, deposit's or subscription's (the webhook then goes to its notify_url, without custom parameters)",
		Description: "The invoice's payment_id."}),
}

func wrongAssetFields() []Def {
	f := WrongAsset
	return []Def{f.EventType, f.UUID, f.AddressIn, f.Coin, f.ExpectedCoin, f.ValueCoin, f.TxidIn, f.Confirmations, f.PaymentID}
}

// Refund defines the fields of the refund webhooks (checkout.refund.*,
// deposit.refund.*).
var Refund = struct {
	EventType, UUID, PaymentID, RefundID, RefundStatus, Coin StringField
	Value                                                    AmountField
	Address, TxidIn, Txid, Error                             StringField
	Timestamp                                                IntegerField
}{
	EventType:    str(Field{Name: "event_type", Fixed: EventName, Description: "The event type."}),
	UUID:         str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this webhook; each status has its own."}),
	PaymentID:    str(Field{Name: "payment_id", Description: "The refunded invoice's payment_id."}),
	RefundID:     str(Field{Name: "refund_id", Description: "The refund's id (GET /refund/status/)."}),
	RefundStatus: str(Field{Name: "refund_status", Fixed: StageName, Description: "The refund's status."}),
	Coin:         str(Field{Name: "coin", Description: "The refund's coin, as the API names coins (btc, trc20_usdt)."}),
	Value:        amount(Field{Name: "value", Description: "The amount refunded, in coin."}),
	Address:      str(Field{Name: "address", Description: "Where the refund goes."}),
	TxidIn:       str(Field{Name: "txid_in", Description: "The refunded payment's incoming transaction."}),
	Txid: str(Field{Name: "txid", Stages: []string{StageRefundCompleted},
		Description: "The refund's transaction hash."}),
	Error: str(Field{Name: "error", Stages: []string{StageRefundFailed}, When: "when the reason is known",
		Description: "Why the refund's payout failed."}),
	Timestamp: integer(Field{Name: "timestamp", Description: "When the event happened, in Unix seconds."}),
}

func refundFields() []Def {
	f := Refund
	return []Def{f.EventType, f.UUID, f.PaymentID, f.RefundID, f.RefundStatus, f.Coin, f.Value, f.Address, f.TxidIn, f.Txid, f.Error, f.Timestamp}
}

// Payout defines the fields of the payout webhooks (payout.done,
// payout.error), sent to the project's payout_notify_url. They carry no
// event_type: the x-service-event header names the event.
var Payout = struct {
	UUID                                             StringField
	PayoutID                                         IntegerField
	Status, Coin                                     StringField
	TotalRequested, Fee, BlockchainFee, TotalWithFee AmountField
	From, Requests, Txid, Error                      StringField
	Timestamp                                        IntegerField
}{
	UUID:           str(Field{Name: "uuid", Description: "The event's id: the same on every retry of this webhook."}),
	PayoutID:       integer(Field{Name: "payout_id", Description: "The payout's id."}),
	Status:         str(Field{Name: "status", Fixed: StageName, Description: "The payout's status."}),
	Coin:           str(Field{Name: "coin", Description: "The payout's ticker (btc, trc20/usdt)."}),
	TotalRequested: amount(Field{Name: "total_requested", Description: "The sum of the payout's requests, in coin."}),
	Fee:            amount(Field{Name: "fee", Description: "The operator's payout fee, in coin."}),
	BlockchainFee:  amount(Field{Name: "blockchain_fee", Description: "The network fee, in coin."}),
	TotalWithFee:   amount(Field{Name: "total_with_fee", Description: "total_requested + fee + blockchain_fee."}),
	From:           str(Field{Name: "from", Description: "The address the payout is sent from."}),
	Requests: str(Field{Name: "requests", JSONText: true,
		Description: "The payout's requests, as JSON text of an object of address to amount string."}),
	Txid: str(Field{Name: "txid", Stages: []string{StageDone},
		Description: "The payout's transaction hash."}),
	Error: str(Field{Name: "error", Stages: []string{StageError},
		Description: "Why the payout failed."}),
	Timestamp: integer(Field{Name: "timestamp", Description: "When the event happened, in Unix seconds."}),
}

func payoutFields() []Def {
	f := Payout
	return []Def{
		f.UUID, f.PayoutID, f.Status, f.Coin, f.TotalRequested, f.Fee, f.BlockchainFee, f.TotalWithFee,
		f.From, f.Requests, f.Txid, f.Error, f.Timestamp,
	}
}

// Test defines the fields of test.webhook.
var Test = struct {
	EventType, UUID      StringField
	ProjectID, CreatedAt IntegerField
	EndpointID           StringField
}{
	EventType:  str(Field{Name: "event_type", Fixed: EventName, Description: "The event type."}),
	UUID:       str(Field{Name: "uuid", Description: "The event's id: what POST /notification/test/ (or /endpoint/test/) answered."}),
	ProjectID:  integer(Field{Name: "project_id", Description: "The project's id."}),
	CreatedAt:  integer(Field{Name: "created_at", Description: "When the test was asked for, in Unix seconds."}),
	EndpointID: str(Field{Name: "endpoint_id", When: "on a test sent to a webhook endpoint (POST /endpoint/test/)", Description: "The endpoint tested."}),
}

func testFields() []Def {
	f := Test
	return []Def{f.EventType, f.UUID, f.ProjectID, f.CreatedAt, f.EndpointID}
}
