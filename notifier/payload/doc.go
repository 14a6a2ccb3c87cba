// Package payload builds the exact bytes of a notification: the URL,
// method, content type and body that payhook sends to a merchant, from an
// ordered list of typed fields. It knows no domain: the low-level callback
// (server/address) and the merchant webhooks decide their fields; this
// package writes them.
//
// Guarantees:
//
//   - Deterministic: the same fields, URL and Transport always give the
//     same bytes. Fields are written in the order given, custom parameters
//     last, in their order; nothing iterates a map. The bytes are meant to
//     be built once, stored and sent unchanged on every retry, so a stored
//     signature stays valid.
//   - Exact money: amounts are decimal.Decimal, rounded to a given number of
//     places (half away from zero) and written as plain decimal text with
//     trailing zeros trimmed and never an exponent ("0.001", "12")
//     (FormatAmount, Money). No float64 is involved anywhere.
//   - Typed JSON: each field says whether it is a JSON string, number,
//     object or null; in GET and form every value is a string and null
//     fields are omitted. Custom parameters are always strings.
//   - What is signed is what is sent: SignedData returns the GET URL or the
//     POST body, and Encode refuses URLs that egress.CheckURL refuses (the
//     one set of destination URL rules), among them any whose request line
//     an HTTP client would rewrite, so a receiver rebuilding the URL from
//     the request it got sees the signed text.
//
// Encode validates its input and returns an error wrapping ErrInvalid (a
// *FieldError naming the field) instead of producing a payload a receiver
// could misread. The package knows nothing of storage or signing keys.
package payload
