package httpapi

import "errors"

// Sentinel errors of this package. Errors about the node wrap chains.ErrNode
// and errors about a forward wrap chains.ErrInvalidForward (see the package
// documentation); these classify the rest.
var (
	// ErrInvalidConfig reports a Config that fails Validate; the message
	// names the field.
	ErrInvalidConfig = errors.New("invalid tron backend config")

	// ErrInvalidRange reports a block range that does not fit the chain:
	// after negative, upTo below after, or upTo beyond the node's tip.
	ErrInvalidRange = errors.New("invalid block range")

	// ErrWatchOnly reports Sign on a backend configured without keys.
	ErrWatchOnly = errors.New("tron backend has no signing keys")

	// ErrRejected reports a transaction the node refused: a signature
	// that does not verify, an expired transaction or an unknown reference
	// block (sending the same bytes again fails again), or failed
	// validation such as a balance short of the amount or the bandwidth
	// (which sending again cures only once the balance is there, e.g. the
	// operator's address funded for a top-up). Busy or unconnected nodes
	// wrap chains.ErrNode instead.
	ErrRejected = errors.New("transaction rejected by the tron node")
)
