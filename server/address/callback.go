package address

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype"
)

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

// Callback is the content of one low-level callback event, the spec's
// "Callback notification" table. EncodeCallback turns it into bytes:
//
//   - Fields in one fixed order (FieldOrder), the merchant's custom
//     parameters last, in the order given.
//   - In a JSON body address_out is an object of address to number,
//     confirmations and required_confirmations are numbers, value_coin,
//     value_forwarded_coin, fee_coin and network_fee are numbers (or null),
//     every other field, custom parameters included, is a string; the
//     conversion fields are strings holding JSON text. In GET and form
//     every value is a string and null fields are omitted.
//   - Progress events (pending, confirmed) never carry txid_out,
//     value_forwarded_coin, fee_coin, network_fee or
//     value_forwarded_coin_convert, whatever the Callback holds.
//   - Amounts are rounded to the coin's Decimals and written without an
//     exponent or trailing zeros.
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
	// Decimals is the coin's precision, 0..payload.MaxDecimals; every amount
	// is rounded to it.
	Decimals int32
	// Price is the last known USD price, written as a string (not rounded);
	// nil omits it.
	Price *decimal.Decimal
	// ValueCoin is the amount received, in coin units (>= 0); always sent.
	ValueCoin decimal.Decimal
	// ValueForwardedCoin is the amount forwarded after fees; completed events
	// only. It cannot be null (the spec types it number or string).
	ValueForwardedCoin payload.Amount
	// FeeCoin is the service fee in coin units; completed events only; may
	// be null when unknown.
	FeeCoin payload.Amount
	// NetworkFee is the amount deducted for network costs; completed events
	// only; may be null when unknown.
	NetworkFee payload.Amount
	// ValueCoinConvert is the fiat conversion of ValueCoin as JSON text
	// (`{"USD":"12.34"}`, `{}` or `12.5`); nil omits it. Sent at every stage.
	// It is always carried as a string whose content is this text.
	ValueCoinConvert *string
	// ValueForwardedCoinConvert is the same for ValueForwardedCoin;
	// completed events only.
	ValueForwardedCoinConvert *string
	// Params are the merchant's custom parameters in order. In POST bodies
	// a parameter named like a payload field (IsReserved) is left out: the
	// payload field wins.
	Params []payload.Param
}

// cb is the callback's field definitions: every field is written through
// one of them, and the catalogue (GET /events/types/) lists the same.
var cb = &eventtype.Callback

// Wire names of the payload fields, for the messages of refused input.
var (
	fUUID, fAddressIn, fAddressOut         = cb.UUID.Name, cb.AddressIn.Name, cb.AddressOut.Name
	fTxidIn, fTxidOut, fCoin               = cb.TxidIn.Name, cb.TxidOut.Name, cb.Coin.Name
	fConfirmations, fRequiredConfirmations = cb.Confirmations.Name, cb.RequiredConfirmations.Name
	fPaymentStatus, fPrice, fValueCoin     = cb.PaymentStatus.Name, cb.Price.Name, cb.ValueCoin.Name
	fValueForwardedCoin, fFeeCoin          = cb.ValueForwardedCoin.Name, cb.FeeCoin.Name
	fNetworkFee, fValueCoinConvert         = cb.NetworkFee.Name, cb.ValueCoinConvert.Name
	fValueForwardedCoinConvert             = cb.ValueForwardedConvert.Name
)

// fieldOrder is the payload's field names in the order they are written.
var fieldOrder = func() []string {
	defs := eventtype.CallbackFields()
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Spec().Name
	}
	return names
}()

// ReservedFields lists every field name the payload can carry, in the order
// they are written. Custom parameters with these names are refused at
// creation and left out of POST bodies. EncodeCallback does not read this
// variable: changing it changes nothing.
var ReservedFields = FieldOrder()

// FieldOrder returns a fresh copy of the payload field names in the order
// they are written.
func FieldOrder() []string { return append([]string(nil), fieldOrder...) }

// IsReserved reports whether name is a payload field name (case-sensitive),
// which a custom parameter must not use.
func IsReserved(name string) bool { return slices.Contains(fieldOrder, name) }

// EncodeCallback builds the request that delivers c to callbackURL (the
// final callback URL, cb_params included) with transport t; see
// payload.Encode for how each transport writes the fields. It returns an
// error wrapping payload.ErrInvalid (a *payload.FieldError naming the
// field) when c cannot be encoded.
func EncodeCallback(callbackURL string, t payload.Transport, c Callback) (payload.Request, error) {
	fields, err := c.fields()
	if err != nil {
		return payload.Request{}, err
	}
	params := c.Params
	if slices.ContainsFunc(params, func(p payload.Param) bool { return IsReserved(p.Key) }) {
		params = slices.DeleteFunc(slices.Clone(params), func(p payload.Param) bool { return IsReserved(p.Key) })
	}
	req, err := payload.Encode(callbackURL, t, fields, params)
	if fe, ok := err.(*payload.FieldError); ok && fe.Field == "notify_url" {
		fe.Field = "callback_url"
	}
	return req, err
}

// fields validates c and returns its payload fields in wire order.
func (c *Callback) fields() ([]payload.Field, error) {
	for _, s := range [...]struct{ name, v string }{
		{fUUID, c.UUID}, {fAddressIn, c.AddressIn}, {fTxidIn, c.TxidIn}, {fCoin, c.Coin},
	} {
		if s.v == "" {
			return nil, payload.Invalid(s.name, "is required")
		}
	}
	for _, s := range [...]struct{ name, v string }{
		{fUUID, c.UUID}, {fAddressIn, c.AddressIn}, {fTxidIn, c.TxidIn}, {fTxidOut, c.TxidOut},
		{fCoin, c.Coin}, {fPaymentStatus, c.PaymentStatus},
	} {
		if !utf8.ValidString(s.v) {
			return nil, payload.Invalid(s.name, "is not valid UTF-8")
		}
	}
	var progress bool
	switch c.PaymentStatus {
	case StatusPending, StatusConfirmed:
		progress = true
	case StatusCompleted:
	case "":
		return nil, payload.Invalid(fPaymentStatus, "is required")
	default:
		return nil, payload.Invalid(fPaymentStatus, "%q is not one of pending, confirmed, completed", c.PaymentStatus)
	}
	if c.Confirmations < 0 {
		return nil, payload.Invalid(fConfirmations, "must not be negative, got %d", c.Confirmations)
	}
	if c.RequiredConfirmations < 1 {
		return nil, payload.Invalid(fRequiredConfirmations, "must be at least 1, got %d", c.RequiredConfirmations)
	}
	if c.Decimals < 0 || c.Decimals > payload.MaxDecimals {
		return nil, payload.Invalid("decimals", "must be between 0 and %d, got %d", payload.MaxDecimals, c.Decimals)
	}
	addressOut, err := addressOutJSON(c.AddressOut)
	if err != nil {
		return nil, err
	}
	var price string
	if c.Price != nil {
		if r := payload.CheckDecimal(*c.Price); r != "" {
			return nil, payload.Invalid(fPrice, "%s", r)
		}
		price = c.Price.String()
	}
	if r := payload.CheckDecimal(c.ValueCoin); r != "" {
		return nil, payload.Invalid(fValueCoin, "%s", r)
	}
	for _, a := range [...]struct {
		name     string
		a        payload.Amount
		nullable bool
	}{
		{fValueForwardedCoin, c.ValueForwardedCoin, false},
		{fFeeCoin, c.FeeCoin, true},
		{fNetworkFee, c.NetworkFee, true},
	} {
		switch {
		case a.a.Valid && a.a.Null:
			return nil, payload.Invalid(a.name, "is both null and set")
		case a.a.Null && !a.nullable:
			return nil, payload.Invalid(a.name, "cannot be null; leave it absent")
		case a.a.Valid:
			if r := payload.CheckDecimal(a.a.Value); r != "" {
				return nil, payload.Invalid(a.name, "%s", r)
			}
		}
	}
	for _, cv := range [...]struct {
		name string
		v    *string
	}{{fValueCoinConvert, c.ValueCoinConvert}, {fValueForwardedCoinConvert, c.ValueForwardedCoinConvert}} {
		if cv.v == nil {
			continue
		}
		if !utf8.ValidString(*cv.v) || !json.Valid([]byte(*cv.v)) {
			return nil, payload.Invalid(cv.name, "is not valid JSON text")
		}
	}

	l := make([]payload.Field, 0, len(fieldOrder))
	l = append(l,
		cb.UUID.Of(c.UUID),
		cb.AddressIn.Of(c.AddressIn),
		cb.AddressOut.Of(addressOut),
		cb.TxidIn.Of(c.TxidIn))
	if !progress && c.TxidOut != "" {
		l = append(l, cb.TxidOut.Of(c.TxidOut))
	}
	l = append(l,
		cb.Confirmations.Of(c.Confirmations),
		cb.RequiredConfirmations.Of(c.RequiredConfirmations),
		cb.PaymentStatus.Of(c.PaymentStatus),
		cb.Coin.Of(c.Coin))
	if c.Price != nil {
		l = append(l, cb.Price.Of(price))
	}
	l = append(l, cb.ValueCoin.Of(c.ValueCoin, c.Decimals))
	if !progress {
		for _, m := range [...]struct {
			money func(payload.Amount, int32) (payload.Field, bool)
			a     payload.Amount
		}{{cb.ValueForwardedCoin.Money, c.ValueForwardedCoin}, {cb.FeeCoin.Money, c.FeeCoin}, {cb.NetworkFee.Money, c.NetworkFee}} {
			if f, ok := m.money(m.a, c.Decimals); ok {
				l = append(l, f)
			}
		}
	}
	if c.ValueCoinConvert != nil {
		l = append(l, cb.ValueCoinConvert.Of(*c.ValueCoinConvert))
	}
	if !progress && c.ValueForwardedCoinConvert != nil {
		l = append(l, cb.ValueForwardedConvert.Of(*c.ValueForwardedCoinConvert))
	}
	return l, nil
}

// addressOutJSON renders the destinations as {"address":share,...} in the
// order given.
func addressOutJSON(shares []Share) (string, error) {
	var seen map[string]bool
	if len(shares) > 16 {
		seen = make(map[string]bool, len(shares))
	}
	n := 2
	for _, s := range shares {
		n += len(s.Address) + 16
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, s := range shares {
		switch {
		case s.Address == "":
			return "", payload.Invalid(fAddressOut, "destination %d has no address", i+1)
		case !utf8.ValidString(s.Address):
			return "", payload.Invalid(fAddressOut, "destination %d is not valid UTF-8", i+1)
		}
		dup := false
		if seen != nil {
			dup = seen[s.Address]
			seen[s.Address] = true
		} else {
			for _, p := range shares[:i] {
				dup = dup || p.Address == s.Address
			}
		}
		if dup {
			return "", payload.Invalid(fAddressOut, "destination %s is listed twice", s.Address)
		}
		if r := payload.CheckDecimal(s.Share); r != "" {
			return "", payload.Invalid(fAddressOut, "share of destination %d %s", i+1, r)
		}
		if s.Share.Sign() == 0 {
			return "", payload.Invalid(fAddressOut, "share of destination %d must be positive", i+1)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = payload.AppendJSONString(b, s.Address)
		b = append(b, ':')
		b = append(b, s.Share.String()...)
	}
	b = append(b, '}')
	return string(b), nil
}
