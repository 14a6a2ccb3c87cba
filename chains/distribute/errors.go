package distribute

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"
)

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

// ErrBelowNetworkMinimum reports (from CheckOutputs) a split that gives a
// destination less of the ticker's minimum payment than the network
// carries to that address (dust, or Solana's rent-exempt minimum): a
// forward of such a payment could never land. The concrete error is a
// *BelowNetworkMinimumError.
var ErrBelowNetworkMinimum = errors.New("output below the network's minimum")

// BelowNetworkMinimumError names the destination, what it would receive of
// the minimum payment, and the network's limit for its address. It wraps
// ErrBelowNetworkMinimum.
type BelowNetworkMinimumError struct {
	// Ticker is the canonical ticker.
	Ticker string
	// Address is the destination as given.
	Address string
	// Amount is what Address would receive of Payment, in coin units (zero
	// when its share rounds to nothing).
	Amount decimal.Decimal
	// Payment is the ticker's minimum payment (MinTransaction) the split
	// was planned for.
	Payment decimal.Decimal
	// Limit is the smallest output the network carries to Address
	// (chains.Family.MinOutput).
	Limit decimal.Decimal
}

// Error implements error.
func (e *BelowNetworkMinimumError) Error() string {
	return fmt.Sprintf("destination %s would receive %s %s of the minimum payment of %s %s, below %s %s, the smallest output the %s network carries to that address",
		clip(e.Address), e.Amount, e.Ticker, e.Payment, e.Ticker, e.Limit, e.Ticker, e.Ticker)
}

// Unwrap returns ErrBelowNetworkMinimum.
func (e *BelowNetworkMinimumError) Unwrap() error { return ErrBelowNetworkMinimum }
