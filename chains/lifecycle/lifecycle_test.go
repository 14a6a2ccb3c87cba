package lifecycle_test

import (
	"errors"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
	"github.com/payhook/payhook/chains/lifecycle"
	"github.com/payhook/payhook/chains/solana"
	"github.com/payhook/payhook/chains/tron"
	"github.com/payhook/payhook/chains/utxo"
)

var (
	btc   = chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc"}.WithFamily(utxo.Family{})
	eth   = chains.Ticker{Ticker: "eth", Network: "eth", Coin: "eth"}.WithFamily(evm.Family{})
	erc20 = chains.Ticker{Ticker: "erc20/usdt", Network: "erc20", Coin: "usdt", Token: true, Contract: "0xdAC17F958D2ee523a2206206994597C13D831ec7"}.WithFamily(evm.Family{})
	trx   = chains.Ticker{Ticker: "trx", Network: "trx", Coin: "trx"}.WithFamily(tron.Family{})
	trc20 = chains.Ticker{Ticker: "trc20/usdt", Network: "trc20", Coin: "usdt", Token: true, Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"}.WithFamily(tron.Family{})
	sol   = chains.Ticker{Ticker: "sol", Network: "sol", Coin: "sol"}.WithFamily(solana.Family{})
	spl   = chains.Ticker{Ticker: "sol/usdc", Network: "sol", Coin: "usdc", Token: true, Contract: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}.WithFamily(solana.Family{})
)

func TestEvaluate(t *testing.T) {
	t.Parallel()
	block := func(n int64) chains.TxState { return chains.TxState{Present: true, Confirmations: n, Executed: true} }
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		state    chains.TxState
		want     chains.Step
	}{
		{"utxo credits at depth", btc, 2, block(2), chains.Step{Status: chains.StatusConfirmed, Confirmations: 2, Notify: true, Credit: true, Forwardable: true}},
		{"utxo ignores Executed", btc, 2, chains.TxState{Present: true, Confirmations: 1}, chains.Step{Status: chains.StatusPending, Confirmations: 1, Notify: true}},
		{"evm checks execution", eth, 2, chains.TxState{Present: true, Confirmations: 1}, chains.Step{Status: chains.StatusReverted, Confirmations: 1}},
		{"tron withholds forwarding below 23", trx, 5, chains.TxState{Present: true, Confirmations: 5, Executed: true, Solidified: true}, chains.Step{Status: chains.StatusConfirmed, Confirmations: 5, Notify: true, Credit: true}},
		{"solana accepts SOL at finalized only", sol, 1, chains.TxState{Present: true, Executed: true, Commitment: chains.CommitmentConfirmed}, chains.Step{}},
		{"solana accepts SPL at confirmed", spl, 1, chains.TxState{Present: true, Executed: true, Commitment: chains.CommitmentConfirmed}, chains.Step{Status: chains.StatusConfirmed, Confirmations: 1, Notify: true, Credit: true, Forwardable: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := lifecycle.Evaluate(tt.ticker, tt.required, chains.PaymentState{}, tt.state)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if got != tt.want {
				t.Errorf("Evaluate(%s, %d, %+v)\n got %+v\nwant %+v", tt.ticker.Ticker, tt.required, tt.state, got, tt.want)
			}
		})
	}

	t.Run("unknown family", func(t *testing.T) {
		t.Parallel()
		bad := chains.Ticker{Ticker: "atom", Family: "cosmos"}
		if _, err := lifecycle.Evaluate(bad, 1, chains.PaymentState{}, block(1)); !errors.Is(err, chains.ErrUnsupportedNetwork) {
			t.Errorf("Evaluate(cosmos) error = %v, want one wrapping ErrUnsupportedNetwork", err)
		}
	})
}

func TestDistributionDepth(t *testing.T) {
	t.Parallel()
	if lifecycle.TronTRXDistributionDepth != 23 || lifecycle.TronTRC20DistributionDepth != 20 {
		t.Fatalf("TRON distribution depths = %d, %d; want 23, 20", lifecycle.TronTRXDistributionDepth, lifecycle.TronTRC20DistributionDepth)
	}
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		want     int64
	}{
		{"TRX required 5", trx, 5, 23},
		{"TRX required 23", trx, 23, 23},
		{"TRX required 30", trx, 30, 30},
		{"TRC20 required 5", trc20, 5, 20},
		{"TRC20 required 21", trc20, 21, 21},
		{"TRC20 required 30", trc20, 30, 30},
		{"utxo is the required depth", btc, 3, 3},
		{"evm native is the required depth", eth, 12, 12},
		{"evm token is the required depth", erc20, 5, 5},
		{"solana is the required depth", sol, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := lifecycle.DistributionDepth(tt.ticker, tt.required); got != tt.want {
				t.Errorf("DistributionDepth(%s, %d) = %d, want %d", tt.ticker.Ticker, tt.required, got, tt.want)
			}
		})
	}
}
