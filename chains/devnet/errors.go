package devnet

import (
	"errors"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/internal/kind"
)

// Sentinel errors. Every error the devnet returns, other than a cancelled
// context, wraps exactly one of them; classify with errors.Is. Those a
// caller of the devnet API causes (payment, count, range, forward) are of
// kind Invalid.
var (
	// ErrInvalidOptions reports Options that fail Validate.
	ErrInvalidOptions = errors.New("invalid devnet options")

	// ErrInvalidPayment reports a Pay call the chain cannot accept: an
	// invalid destination (the error also wraps chains.ErrInvalidAddress), a
	// value that is not positive or has more decimal places than the ticker,
	// or a failed execution asked of a family whose transfers cannot fail.
	ErrInvalidPayment = kind.New(kind.Invalid, "invalid payment")

	// ErrInvalidForward (chains.ErrInvalidForward) reports a Sign of a
	// forward that is malformed: no ID, an invalid From or output address
	// (the error also wraps chains.ErrInvalidAddress), no outputs, or an
	// amount that is not positive or has more decimal places than the
	// ticker; or a Send of bytes this devnet did not sign.
	ErrInvalidForward = chains.ErrInvalidForward

	// ErrInvalidCount reports a Mine or Reorg block count out of bounds:
	// Mine takes 1..MaxMine, Reorg 1..the current height.
	ErrInvalidCount = kind.New(kind.Invalid, "invalid block count")

	// ErrInvalidRange reports a Transfers range that is inverted, negative
	// or beyond the tip.
	ErrInvalidRange = kind.New(kind.Invalid, "invalid block range")

	// ErrInvalidBlockTime reports a Start with a block time that is not
	// positive.
	ErrInvalidBlockTime = errors.New("invalid block time")
)
