package distribute

import "errors"

// Sentinel errors. Every error Compute returns wraps exactly one of them, so
// callers classify with errors.Is and never by message.
var (
	// ErrBelowMinimum reports a received value below the ticker's
	// MinTransaction: the payment is not forwarded.
	ErrBelowMinimum = errors.New("below the minimum transaction")

	// ErrNothingToForward reports a value that the service fee and the
	// network fee consume entirely: nothing would be left to send.
	ErrNothingToForward = errors.New("nothing left to forward after fees")

	// ErrInvalidShares reports destination shares that cannot be split: none
	// at all, an empty or repeated address, a share that is not positive, or
	// shares that do not sum to exactly 1.
	ErrInvalidShares = errors.New("invalid destination shares")

	// ErrInvalidAmount reports a negative value or network fee, or a value
	// with more decimal places than the coin has.
	ErrInvalidAmount = errors.New("invalid amount")

	// ErrInvalidTicker reports a Ticker outside the limits LoadRegistry
	// enforces (decimals 0..18, fee rate in [0, 1), a non-negative minimum).
	// Tickers taken from a chains.Registry never produce it.
	ErrInvalidTicker = errors.New("invalid ticker")
)
