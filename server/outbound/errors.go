package outbound

import (
	"fmt"

	"github.com/shopspring/decimal"
)

// BelowMinimumError is an output below the smallest amount the network
// carries to its destination (dust, a rent-exempt minimum).
type BelowMinimumError struct {
	// Ticker is the coin.
	Ticker string
	// Address is the destination.
	Address string
	// Amount is the output's amount, Minimum the network's, in coin units.
	Amount, Minimum decimal.Decimal
}

func (e *BelowMinimumError) Error() string {
	return fmt.Sprintf("an output of %s %s to %s is below the %s the network carries to that address", e.Amount, e.Ticker, e.Address, e.Minimum)
}
