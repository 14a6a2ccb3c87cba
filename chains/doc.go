// Package chains knows the assets payhook accepts and the address rules of
// their networks. It has no database, no network access and no global
// mutable state; everything in it is a pure function of its inputs.
//
// # Ticker registry
//
// A Registry lists the payable tickers ("btc", "trc20/usdt", ...) with their
// family, token contract, decimals, confirmation depths and amounts.
// DefaultRegistry is embedded in the binary (registry.json); an operator may
// replace it with a file of the same format read by LoadRegistry. A Registry
// is immutable once built. Amounts are decimal.Decimal parsed from decimal
// strings, never float64.
//
// Ticker strings have one segment for a network's native coin ("btc") and two
// for "network/coin" ("erc20/usdt"). Two segments do not imply a token:
// "polygon/pol" is the native POL coin of Polygon (Token false, no contract).
//
// # Address validation
//
// ValidateAddress accepts only mainnet addresses of the ticker's network that
// funds can safely be sent to, and otherwise says precisely why not (bad
// checksum, wrong length, testnet, wrong network prefix, mixed case, ...).
// Its doc comment lists the accepted forms and the deliberate rejections.
//
// # Deposit address derivation
//
// A Deriver turns an operator-held BIP32 seed and an index into a deposit
// address, on the paths common wallets use (BIP84 for btc and ltc, BIP44
// elsewhere, SLIP-0010 ed25519 for Solana), so funds stay recoverable from
// the seed alone. The same index always yields the same address; tickers of
// one family share keys.
//
// # Guarantees
//
//   - Every address a Deriver returns passes ValidateAddress for its ticker.
//   - Registries returned by LoadRegistry satisfy every documented limit;
//     DefaultRegistry never fails.
//   - Registry and Deriver are safe for concurrent use.
//   - Error messages may reach merchants: they quote the rejected input
//     (truncated) but never key material, and never suggest a "corrected"
//     address.
//
// # Failure modes
//
// Errors wrap one sentinel from errors.go: ErrUnknownTicker,
// ErrInvalidAddress (concrete *AddressError), ErrInvalidRegistry (concrete
// *RegistryError or a JSON error), ErrInvalidSeed, ErrInvalidIndex and
// ErrUnsupportedNetwork. Classify them with errors.Is; never by message.
//
// Address formats cannot tell EVM, TRON or Solana testnet addresses from
// mainnet ones, and btc/bch legacy base58 addresses are identical, so those
// mix-ups pass validation. A Deriver holds the Solana extended private key in
// memory: treat it as a secret.
//
// # Implementations
//
// BIP32, base58check, bech32/bech32m and btc address decoding come from
// btcsuite (btcutil, hdkeychain, chaincfg; no chaincfg.Register calls);
// Keccak-256 from golang.org/x/crypto/sha3; ed25519 from the standard
// library. CashAddr and SLIP-0010 ed25519 derivation, for which no maintained
// Go module is reachable, are implemented here from their specifications and
// tested with the specifications' own vectors.
package chains
