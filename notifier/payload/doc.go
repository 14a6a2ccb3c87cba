// Package payload builds the exact bytes of a low-level callback: the URL,
// method, content type and body that payhook sends to a merchant and signs
// with the x-ca-signature header.
//
// Guarantees:
//
//   - Deterministic: the same Callback, URL and Transport always give the
//     same bytes. Fields are written in one fixed order (see FieldOrder), the
//     merchant's custom parameters last, in the order given; nothing iterates
//     a map. The bytes are meant to be built once, stored and sent unchanged
//     on every retry, so a stored signature stays valid.
//   - Exact money: amounts are decimal.Decimal, rounded to the coin's
//     Decimals (half away from zero) and written as plain decimal text with
//     trailing zeros trimmed and never an exponent ("0.001", "12"). No float64
//     is involved anywhere.
//   - Typed JSON: in a JSON body address_out is an object of address to
//     number, confirmations and required_confirmations are numbers, value_coin,
//     value_forwarded_coin, fee_coin and network_fee are numbers (or null),
//     every other field, custom parameters included, is a string; the
//     conversion fields are strings holding JSON text. In GET and form every
//     value is a string and null fields are omitted.
//   - Progress events (pending, confirmed) never carry txid_out,
//     value_forwarded_coin, fee_coin, network_fee or
//     value_forwarded_coin_convert, whatever the Callback holds.
//   - What is signed is what is sent: SignedData returns the GET URL or the
//     POST body, and Encode refuses callback URLs whose request line an HTTP
//     client would rewrite (ValidateCallbackURL), so a receiver rebuilding the
//     URL from the request it got sees the signed text.
//
// Encode validates its input and returns an error wrapping ErrInvalid (a
// *FieldError naming the field) instead of producing a payload a receiver
// could misread. The package knows nothing of storage, transport or signing
// keys.
package payload
