// Package chains knows the assets payhook accepts and what their chain
// families have in common. It has no database, no network access and no
// global mutable state; everything in it is a pure function of its inputs.
//
// # Families
//
// Family (family.go) is everything that differs between chain families:
// address validation and derivation, the payment lifecycle, what a
// confirmation count means, the fee model, payment URIs. Each family
// implements it once in its own package (chains/utxo, chains/evm,
// chains/tron, chains/solana); chains/family lists them, the one place they
// are registered. A Registry is loaded with that list and binds every
// Ticker to its family: callers ask t.Rules() and never compare family
// names (FamilyName is only a name, for files and the database). The node
// backends (utxo/bitcoind, evm/jsonrpc, tron/httpapi, solana/rpc) import
// their family, so chains/backend, not the Family, lists them.
//
// # Ticker registry
//
// A Registry lists the payable tickers ("btc", "trc20/usdt", ...) with their
// family, token contract, decimals, confirmation depths and amounts.
// DefaultRegistry is embedded in the binary (registry.json); an operator may
// replace it with a file of the same format read by LoadRegistry. Both take
// the families to bind and refuse an entry whose family is not among them.
// A Registry is immutable once built. Amounts are decimal.Decimal parsed from decimal
// strings, never float64.
//
// Ticker strings have one segment for a network's native coin ("btc") and two
// for "network/coin" ("erc20/usdt"). Two segments do not imply a token:
// "polygon/pol" is the native POL coin of Polygon (Token false, no contract).
//
// # Address validation
//
// ValidateAddress accepts only addresses of the ticker's network (on its
// Net) that funds can safely be sent to, and otherwise says precisely why
// not (bad checksum, wrong length, testnet, wrong network prefix, mixed
// case, ...). Each family's doc comment lists the forms it accepts and the
// deliberate rejections.
//
// # Deposit address derivation
//
// A Deriver turns an operator-held BIP32 seed and an index into a deposit
// address, at the key path the ticker's family names (BIP84 for btc and
// ltc, BIP44 elsewhere, SLIP-0010 ed25519 for Solana: the paths common
// wallets use), so funds stay recoverable from the seed alone. The same
// index always yields the same address; tickers of one family share keys.
//
// # Signing
//
// Node backends build transactions and have a Signer (signer.go) sign
// them: never a bare digest, always the whole transaction and what it is
// for (SignContext: ticker, purpose, project, the outbound key), so that a
// signer in another process (payhook signer) can hold the seed and refuse
// what its policy forbids (ErrSignerRefused). keysign.Local signs with
// Keys in the process.
//
// # Guarantees
//
//   - Every address a Deriver returns passes ValidateAddress for its ticker.
//   - Every Ticker a Registry returns has a Family whose Name is its Family
//     field; the conformance suite (chaintest.Families) checks each family.
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
// library. SLIP-0010 ed25519 derivation (here) and CashAddr (chains/utxo),
// for which no maintained Go module is reachable, are implemented from
// their specifications and tested with the specifications' own vectors.
package chains
