package distribute

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
)

// maxQuotedAddress bounds how much of an address is echoed in an error
// message; addresses come from merchants and can be arbitrary.
const maxQuotedAddress = 128

// Share is one forwarding destination and its fraction of the forwarded
// amount. The shares of one payment sum to exactly 1.
type Share struct {
	// Address is the destination wallet, already validated for the ticker's
	// network (chains.ValidateAddress) when the payment address was created.
	Address string
	// Share is the fraction of Forwarded sent to Address, in (0, 1].
	Share decimal.Decimal
}

// Plan is the outcome of Compute: where a received value goes. All amounts
// are in coin units and whole numbers of the coin's base unit, and Value =
// Fee + NetworkFee + Forwarded exactly.
type Plan struct {
	// Value is the amount received on the payment address.
	Value decimal.Decimal
	// Fee is the service fee: Value x FeeRate, rounded down to the coin's
	// precision.
	Fee decimal.Decimal
	// NetworkFee is the deduction for the cost of the forwarding
	// transaction: the estimate, rounded up to the coin's precision.
	NetworkFee decimal.Decimal
	// Forwarded is Value - Fee - NetworkFee; always positive.
	Forwarded decimal.Decimal
	// Outputs are the destinations and amounts, in the order of the shares,
	// without zero amounts. Their amounts sum to exactly Forwarded.
	Outputs []chains.Output
}

// Compute plans the forwarding of value, received in t's coin, to the
// destinations in shares, deducting the service fee (t.FeeRate) and
// networkFee, the caller's estimate of the forwarding cost in coin units
// (a backend's NetworkFee, or t.NetworkFeeEstimate).
//
// Inputs are checked first: t within the registry's limits
// (ErrInvalidTicker); value non-negative with at most t.Decimals places and
// networkFee non-negative (ErrInvalidAmount); shares non-empty, each with a
// distinct non-empty address and a positive share, summing to exactly 1
// (ErrInvalidShares). Then value below t.MinTransaction is ErrBelowMinimum,
// and fees that leave nothing is ErrNothingToForward. On error the Plan is
// the zero value.
//
// The fee is rounded down and the network fee up, each to a base unit. Each
// output is Forwarded x share rounded down to a base unit; the base units
// this leaves over go to the destination with the largest share (the first
// listed among equals); outputs that come to zero are dropped.
func Compute(t chains.Ticker, value, networkFee decimal.Decimal, shares []Share) (Plan, error) {
	if err := checkTicker(t); err != nil {
		return Plan{}, err
	}
	if value.Sign() < 0 {
		return Plan{}, fmt.Errorf("%s value %s is negative: %w", t.Ticker, value, ErrInvalidAmount)
	}
	if !value.Equal(value.Truncate(t.Decimals)) {
		return Plan{}, fmt.Errorf("%s value %s has more than %d decimal places: %w", t.Ticker, value, t.Decimals, ErrInvalidAmount)
	}
	if networkFee.Sign() < 0 {
		return Plan{}, fmt.Errorf("%s network fee %s is negative: %w", t.Ticker, networkFee, ErrInvalidAmount)
	}
	largest, err := checkShares(shares)
	if err != nil {
		return Plan{}, err
	}
	if value.LessThan(t.MinTransaction) {
		return Plan{}, fmt.Errorf("%s value %s is below the minimum %s: %w", t.Ticker, value, t.MinTransaction, ErrBelowMinimum)
	}

	fee := Fee(t, value)
	netFee := networkFee.RoundCeil(t.Decimals)
	forwarded := value.Sub(fee).Sub(netFee)
	if forwarded.Sign() <= 0 {
		return Plan{}, fmt.Errorf("%s value %s minus fee %s and network fee %s leaves %s: %w",
			t.Ticker, value, fee, netFee, forwarded, ErrNothingToForward)
	}

	amounts := make([]decimal.Decimal, len(shares))
	rest := forwarded
	for i, s := range shares {
		amounts[i] = forwarded.Mul(s.Share).RoundFloor(t.Decimals)
		rest = rest.Sub(amounts[i])
	}
	// rest is a whole number of base units, 0 <= rest < len(shares) units,
	// since each floor loses less than one unit.
	amounts[largest] = amounts[largest].Add(rest)

	outputs := make([]chains.Output, 0, len(shares))
	for i, s := range shares {
		if amounts[i].Sign() > 0 {
			outputs = append(outputs, chains.Output{Address: s.Address, Amount: amounts[i]})
		}
	}
	return Plan{Value: value, Fee: fee, NetworkFee: netFee, Forwarded: forwarded, Outputs: outputs}, nil
}

// Fee is the service fee on value received in t's coin: t.FeeRate of it,
// rounded down to a base unit. Compute deducts it from a forward; a payment
// to a merchant's own key owes it.
func Fee(t chains.Ticker, value decimal.Decimal) decimal.Decimal {
	return value.Mul(t.FeeRate).RoundFloor(t.Decimals)
}

// checkTicker rejects what LoadRegistry would, as far as Compute depends on
// it.
func checkTicker(t chains.Ticker) error {
	switch {
	case t.Decimals < 0 || t.Decimals > chains.MaxDecimals:
		return fmt.Errorf("ticker %q: decimals %d outside 0..%d: %w", t.Ticker, t.Decimals, chains.MaxDecimals, ErrInvalidTicker)
	case t.FeeRate.Sign() < 0 || t.FeeRate.GreaterThanOrEqual(decimal.NewFromInt(1)):
		return fmt.Errorf("ticker %q: fee rate %s outside [0, 1): %w", t.Ticker, t.FeeRate, ErrInvalidTicker)
	case t.MinTransaction.Sign() < 0:
		return fmt.Errorf("ticker %q: minimum transaction %s is negative: %w", t.Ticker, t.MinTransaction, ErrInvalidTicker)
	}
	return nil
}

// checkShares validates shares and returns the index of the destination that
// takes the rounding remainder: the largest share, the first among equals.
func checkShares(shares []Share) (int, error) {
	if len(shares) == 0 {
		return 0, fmt.Errorf("no destinations: %w", ErrInvalidShares)
	}
	seen := make(map[string]struct{}, len(shares))
	sum := decimal.Zero
	largest := 0
	for i, s := range shares {
		if s.Address == "" {
			return 0, fmt.Errorf("destination %d: empty address: %w", i+1, ErrInvalidShares)
		}
		if _, dup := seen[s.Address]; dup {
			return 0, fmt.Errorf("destination %d: address %q listed twice: %w", i+1, clip(s.Address), ErrInvalidShares)
		}
		seen[s.Address] = struct{}{}
		if s.Share.Sign() <= 0 {
			return 0, fmt.Errorf("destination %d (%q): share %s is not positive: %w", i+1, clip(s.Address), s.Share, ErrInvalidShares)
		}
		if s.Share.GreaterThan(shares[largest].Share) {
			largest = i
		}
		sum = sum.Add(s.Share)
	}
	if !sum.Equal(decimal.NewFromInt(1)) {
		return 0, fmt.Errorf("shares sum to %s, not 1: %w", sum, ErrInvalidShares)
	}
	return largest, nil
}

// clip shortens an address for an error message.
func clip(a string) string {
	if len(a) > maxQuotedAddress {
		return a[:maxQuotedAddress] + "..."
	}
	return a
}
