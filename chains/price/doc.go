// Package price values coins in US dollars and expands a USD value into every
// fiat currency, for the price, value_coin_convert and
// value_forwarded_coin_convert fields of the callback. It has no package
// state. Prices come from a Source: a Table, read from a JSON file (the
// embedded data.json, or an operator's file in the same format), which has
// no network access; or Live, which fetches current prices through its
// Providers over HTTP, only from the base URLs they are configured with,
// takes the median of their answers, keeps the last known good values
// through a Store the server provides, and keeps a Table beneath as the
// last fallback.
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
// # Providers
//
// A Provider answers one request with a Quote: USD prices per asset symbol,
// fiat units per USD per ISO 4217 code, and the time it was fetched. Four
// are implemented against documented public endpoints, each at a
// configurable base URL with an injectable *http.Client:
//
//   - CoinGecko: GET /api/v3/simple/price?ids=...&vs_currencies=usd; coin
//     prices by CoinGecko id (CoinGeckoIDs maps symbols to ids); optional
//     key in the x-cg-demo-api-key or x-cg-pro-api-key header.
//   - Coinbase: GET /v2/exchange-rates?currency=USD; fiat rates (the codes
//     configured) and coin prices as 1/rate, rounded to MaxRatePlaces.
//   - Kraken: GET /0/public/Ticker?pair=...; coin prices by USD pair
//     (KrakenPairs maps symbols to pairs), the last trade price; Kraken's
//     error array (sent with status 200) fails the answer.
//   - Frankfurter: GET /v1/latest?base=USD; fiat reference rates only.
//
// Every value read is checked against the limits of Load (> 0, below 10^15,
// rounded half away from zero to MaxRatePlaces). One bad value fails the
// whole answer: a *ProviderError naming the provider and JSON field, wrapping
// ErrBadQuote; transport errors, timeouts and non-200 statuses wrap
// ErrUnavailable. Nothing of a failed answer is used; no provider panics on
// any input. API keys travel in headers, never in URLs or error messages.
//
// # Live prices
//
// Every value Live knows has an as-of time: a live value the time its quote
// was fetched (never later than Live's clock), a table value midnight UTC
// of the table's as_of date (unknown when the file has none).
//
//   - Refresh asks every provider at once for the configured coins and the
//     table's currencies. Each coin and currency gets the median of the
//     answers quoting it (for an even count the mean of the two middle
//     values, in decimal), as of the oldest of those answers, with those
//     providers as its sources: one provider's wrong or outdated answer is
//     outvoted once three answer. A provider that fails is logged and
//     counted (Providers), never fatal while another answers. Each value is
//     only ever replaced by a newer one. When no provider answers, Refresh
//     returns ErrNoQuote and the cache is unchanged: values keep aging.
//   - Last known good: with a Store, every new median is saved (a coin's
//     price as (symbol, "USD"), a fiat rate as ("usd", code)); Load reads
//     them back at start, so a restart without network access knows its
//     prices and their age.
//   - USD returns the newer of the live and the table value (a ticker path
//     first as written, then by its symbol, as for Table), and no price when
//     that value is older than MaxAge (default one hour). Convert then gives
//     exactly "{}" and the callback omits price, as the spec requires.
//   - Fiat lists the table's currencies (the fiat database: codes and minor
//     units), sorted by code, each at the newer of its live and table rate,
//     leaving out any rate older than MaxAge. USD is always listed, at 1. A
//     provider's codes the table lacks are ignored.
//   - With MaxAge NoMaxAge nothing is omitted and the table never goes
//     stale; a table without as_of counts as stale under any other MaxAge.
//   - Ages gives, per configured coin, how old the value USD would use is,
//     also when it is too old to be served: the "price age per coin" metric.
//   - Why (and price.Why for any Source) says why a coin has no fresh price
//     in a currency: a *StaleError, of kind Unavailable, naming the value,
//     the providers that failed at the last refresh, the age of the last
//     known value and MaxAge ("no fresh ltc/USD price: providers coinbase,
//     coingecko, kraken failed; last known 3h ago (max age 1h)"). Stale
//     lists the coins of a set without a fresh price: the server's health.
//   - Start refreshes at once and then every TTL (default five minutes) in
//     one goroutine until Stop; Stop cancels a refresh in flight and waits.
//     Callers wanting prices before serving call Refresh first.
//
// # Guarantees and failure modes
//
//   - A Table is immutable and safe for concurrent use; Fiat returns a copy.
//   - Live is safe for concurrent use; Fiat returns a new slice, sorted and
//     valid. One Refresh runs at a time; readers never wait for the network.
//   - Load rejects a file with an error wrapping ErrInvalidTable that names
//     the entry and field (*LoadError); it never returns a partial table.
//   - Default and Fixed panic only on invalid input that tests rule out (the
//     embedded file; literals in test code).
//   - Amounts are decimal.Decimal throughout; nothing passes through float64.
package price
