package chains

import (
	"errors"
	"fmt"

	"github.com/payhook/payhook/internal/kind"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers (the server's error interceptor) classify with errors.Is and
// never by message.
var (
	// ErrUnknownTicker reports a ticker that is not in the registry.
	// Its kind is NotFound.
	ErrUnknownTicker = kind.New(kind.NotFound, "unknown ticker")

	// ErrInvalidAddress reports a destination address that is not a valid
	// mainnet address of the ticker's network. The concrete error is an
	// *AddressError that says what is wrong. Its kind is Invalid; an answer
	// names the parameter: "address: " and the whole error.
	ErrInvalidAddress = kind.New(kind.Invalid, "invalid address", kind.Prefix("address: "))

	// ErrInvalidRegistry reports a registry file that cannot be used. The
	// concrete error is a *RegistryError naming the entry and field, or a
	// wrapped JSON syntax error.
	ErrInvalidRegistry = errors.New("invalid ticker registry")

	// ErrInvalidSeed reports a master seed outside 16..64 bytes or one from
	// which no master key can be made.
	ErrInvalidSeed = errors.New("invalid seed")

	// ErrInvalidIndex reports an address index that cannot be derived: indices
	// must be below 2^31 (higher values would collide with hardened indices),
	// and, with probability below 2^-127 per index, BIP32 declares a child
	// key invalid; the caller should then skip to the next index.
	ErrInvalidIndex = errors.New("invalid address index")

	// ErrUnsupportedNetwork reports a Ticker whose family or network this
	// package cannot validate or derive addresses for. Tickers taken from a
	// Registry never produce it: LoadRegistry rejects them.
	ErrUnsupportedNetwork = errors.New("unsupported network")

	// ErrInvalidForward reports a Forward a backend refuses to sign: bad
	// addresses, amounts finer than the base unit, no outputs, inputs that
	// do not cover the outputs and fee. Retrying it unchanged fails again:
	// its kind is Invalid.
	ErrInvalidForward = kind.New(kind.Invalid, "invalid forward")

	// ErrNode reports a node that is unreachable, slow, or answers with an
	// error or garbage: transient, retried with backoff. Its kind is
	// Unavailable: an API call that needs the node (a payout request
	// quoting the network fee) answers 503 with a message that names no
	// node, not 500.
	ErrNode = kind.New(kind.Unavailable, "node unavailable", kind.Public("the chain's node is unavailable; try again shortly"))

	// ErrNeverLands reports (from Send) a recorded forward that can never
	// move funds: it expired before any block included it, or a block
	// included it and its execution failed. Signing the forward anew
	// cannot pay twice, and is what the caller does.
	ErrNeverLands = errors.New("the signed forward can never move funds")

	// ErrWrongNetwork reports a node whose network is not the one the
	// operator configured for its ticker.
	ErrWrongNetwork = errors.New("node is on another network")
)

// maxQuotedAddress bounds how much of a rejected input is echoed back in an
// error message; merchants see these messages and inputs can be arbitrary.
const maxQuotedAddress = 128

// AddressError describes why an address was rejected. It wraps
// ErrInvalidAddress. The message reads like
// `invalid btc address "1Bv...": bad checksum`.
type AddressError struct {
	// Ticker is the canonical ticker the address was checked for.
	Ticker string
	// Address is the rejected input, verbatim.
	Address string
	// Reason says what is wrong, in words fit for a merchant.
	Reason string
}

// Error implements error.
func (e *AddressError) Error() string {
	a := e.Address
	if len(a) > maxQuotedAddress {
		a = a[:maxQuotedAddress] + "..."
	}
	return fmt.Sprintf("invalid %s address %q: %s", e.Ticker, a, e.Reason)
}

// Unwrap returns ErrInvalidAddress.
func (e *AddressError) Unwrap() error { return ErrInvalidAddress }

// RegistryError describes a registry entry that failed validation. It wraps
// ErrInvalidRegistry.
type RegistryError struct {
	// Entry is the 1-based position of the entry in the "tickers" array.
	Entry int
	// Ticker is the entry's ticker as written, "" if it has none.
	Ticker string
	// Field is the JSON field at fault, "" when the entry as a whole is.
	Field string
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *RegistryError) Error() string {
	where := fmt.Sprintf("ticker registry entry %d", e.Entry)
	if e.Ticker != "" {
		where += fmt.Sprintf(" (%q)", e.Ticker)
	}
	if e.Field != "" {
		where += ": field " + e.Field
	}
	return where + ": " + e.Reason
}

// Unwrap returns ErrInvalidRegistry.
func (e *RegistryError) Unwrap() error { return ErrInvalidRegistry }
