package lifecycle

import (
	"fmt"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/tron"
)

// TRON distribution depths: the fewest confirmations before a TRON payment's
// funds are distributed, whatever depth the merchant configured.
const (
	// TronTRXDistributionDepth applies to native TRX.
	TronTRXDistributionDepth = tron.TRXDistributionDepth
	// TronTRC20DistributionDepth applies to TRC20 tokens.
	TronTRC20DistributionDepth = tron.TRC20DistributionDepth
)

// Evaluate applies one observation s of a transfer of t to the recorded
// state prev, with the rules of t's family (t.Rules()); required is the
// address's required confirmations. The error wraps
// chains.ErrUnsupportedNetwork when t has no family (it was not taken from
// a chains.Registry).
func Evaluate(t chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState) (chains.Step, error) {
	if !t.HasRules() {
		return chains.Step{}, fmt.Errorf("evaluate %s: %w: family %q has no rules bound", t.Ticker, chains.ErrUnsupportedNetwork, t.Family)
	}
	return t.Rules().Evaluate(t, required, prev, s), nil
}

// DistributionDepth returns the depth a transfer of t must reach before its
// funds are distributed: the family's gate (Family.DistributionDepth; on
// TRON, required or TronTRXDistributionDepth for native TRX,
// TronTRC20DistributionDepth for a token, whichever is higher) where it has
// one, required elsewhere. (Solana accepts by commitment, not depth; see
// chains/solana.)
func DistributionDepth(t chains.Ticker, required int64) int64 {
	if d := t.Rules().DistributionDepth(t, required); d > 0 {
		return d
	}
	return required
}
