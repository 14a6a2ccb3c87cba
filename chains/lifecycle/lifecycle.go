package lifecycle

import (
	"fmt"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/solana"
	"github.com/payhook/payhook/chains/tron"
	"github.com/payhook/payhook/chains/utxo"
)

// TRON distribution depths: the fewest confirmations before a TRON payment's
// funds are distributed, whatever depth the merchant configured.
const (
	// TronTRXDistributionDepth applies to native TRX.
	TronTRXDistributionDepth = tron.TRXDistributionDepth
	// TronTRC20DistributionDepth applies to TRC20 tokens.
	TronTRC20DistributionDepth = tron.TRC20DistributionDepth
)

// For returns the lifecycle rules of family f. The error wraps
// chains.ErrUnsupportedNetwork when f has none.
func For(f chains.Family) (chains.Rules, error) {
	switch f {
	case chains.FamilyUTXO:
		return utxo.Rules{}, nil
	case chains.FamilyEVM:
		return evm.Rules{}, nil
	case chains.FamilyTron:
		return tron.Rules{}, nil
	case chains.FamilySolana:
		return solana.Rules{}, nil
	}
	return nil, fmt.Errorf("lifecycle rules for family %q: %w", f, chains.ErrUnsupportedNetwork)
}

// Evaluate applies one observation s of a transfer of t to the recorded
// state prev, with the rules of t's family; required is the address's
// required confirmations. The error wraps chains.ErrUnsupportedNetwork when
// t's family has no rules.
func Evaluate(t chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState) (chains.Step, error) {
	r, err := For(t.Family)
	if err != nil {
		return chains.Step{}, fmt.Errorf("evaluate %s: %w", t.Ticker, err)
	}
	return r.Evaluate(t, required, prev, s), nil
}

// DistributionDepth returns the depth a transfer of t must reach before its
// funds are distributed. On TRON it is required or the family's floor,
// whichever is higher: TronTRXDistributionDepth for native TRX,
// TronTRC20DistributionDepth for a token. Elsewhere it is required. (Solana
// accepts by commitment, not depth; see chains/solana.)
func DistributionDepth(t chains.Ticker, required int64) int64 {
	if t.Family == chains.FamilyTron {
		return tron.DistributionDepth(t, required)
	}
	return required
}
