package distribute

import (
	"errors"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// CheckOutputs refuses a split the network cannot carry, when it is made
// rather than when a payment is forwarded: it plans t's minimum payment
// (Compute of t.MinTransaction, with t.NetworkFeeEstimate as the network
// fee) over shares, and returns a *BelowNetworkMinimumError for the first
// destination whose amount (zero when its share rounds to nothing) is
// below t's MinOutput for its address. Every payment the ticker credits is
// at least that minimum, and a larger one gives every destination at least
// as much, so a split that passes carries every payment's outputs at the
// estimated fee.
//
// A ticker whose minimum payment leaves nothing to forward (or whose
// minimum is zero) has no minimum plan: CheckOutputs then accepts any
// split, and such payments are held, not forwarded. Other errors are those
// of Compute (invalid shares, a Ticker outside the registry's limits) or
// of MinOutput (an address invalid for t).
func CheckOutputs(t chains.Ticker, shares []Share) error {
	plan, err := Compute(t, t.MinTransaction, t.NetworkFeeEstimate, shares)
	if errors.Is(err, ErrNothingToForward) || errors.Is(err, ErrBelowMinimum) {
		return nil
	}
	if err != nil {
		return err
	}
	amounts := make(map[string]decimal.Decimal, len(plan.Outputs))
	for _, o := range plan.Outputs {
		amounts[o.Address] = o.Amount
	}
	for _, s := range shares {
		limit, err := t.Rules().MinOutput(t, s.Address)
		if err != nil {
			return fmt.Errorf("destination %s: %w", clip(s.Address), err)
		}
		if amount := amounts[s.Address]; amount.LessThan(limit) {
			return &BelowNetworkMinimumError{Ticker: t.Ticker, Address: s.Address, Amount: amount, Payment: t.MinTransaction, Limit: limit}
		}
	}
	return nil
}
