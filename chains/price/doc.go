// Package price values coins in US dollars and expands a USD value into every
// fiat currency, for the price, value_coin_convert and
// value_forwarded_coin_convert fields of the callback. It has no network
// access and no package state: prices come from a Table, read from a JSON
// file (the embedded data.json, or an operator's file in the same format).
//
// # Prices
//
// A Table maps asset symbols ("btc", "usdt") to the USD price of one coin
// unit. Lookups accept a symbol or a registry ticker path and ignore case:
// "trc20/usdt" is looked up as itself first and then as "usdt", so every
// network's USDT and USDC share their symbol's price unless the file prices
// a ticker path separately.
//
// # Conversion
//
// Convert renders the value_coin_convert text: a JSON object from every
// currency code of the Source to the value as a JSON string, rounded half
// away from zero to the currency's ISO 4217 minor unit (JPY 0, USD 2, BHD 3,
// CLF 4 places) and written with exactly that many places, keys sorted, no
// whitespace. A missing, non-positive or absurdly large USD value gives
// exactly "{}", as the spec requires. The result is text, never a number:
// the payload encoders embed it as a JSON string in every transport.
//
// # The embedded table
//
// data.json holds approximate reference rates (see its as_of date), not
// market data: good enough for development, the devnet and a service that
// has no rate feed, and clearly labelled as such. It covers every coin of
// the default ticker registry and the active ISO 4217 currency and fund
// codes that have a minor unit.
//
// # Guarantees and failure modes
//
//   - A Table is immutable and safe for concurrent use; Fiat returns a copy.
//   - Load rejects a file with an error wrapping ErrInvalidTable that names
//     the entry and field (*LoadError); it never returns a partial table.
//   - Default and Fixed panic only on invalid input that tests rule out (the
//     embedded file; literals in test code).
//   - Amounts are decimal.Decimal throughout; nothing passes through float64.
package price
