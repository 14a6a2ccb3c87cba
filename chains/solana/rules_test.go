package solana_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/solana"
)

var (
	sol  = chains.Ticker{Ticker: "sol", Network: "sol", Coin: "sol", Family: chains.FamilySolana}
	usdc = chains.Ticker{Ticker: "sol/usdc", Network: "sol", Coin: "usdc", Family: chains.FamilySolana, Token: true, Contract: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"}
)

const (
	none      = chains.StatusNone
	pending   = chains.StatusPending
	confirmed = chains.StatusConfirmed
	completed = chains.StatusCompleted
	dropped   = chains.StatusDropped
	reverted  = chains.StatusReverted
)

func rec(s chains.Status, conf int64) chains.PaymentState {
	return chains.PaymentState{Status: s, Confirmations: conf}
}

// at is a successful transaction seen at commitment c.
func at(c chains.Commitment) chains.TxState {
	return chains.TxState{Present: true, Executed: true, Commitment: c}
}

var gone = chains.TxState{Present: false}

var accepted = chains.Step{Status: confirmed, Confirmations: 1, Notify: true, Credit: true, Forwardable: true}

func TestCommitment(t *testing.T) {
	t.Parallel()
	if got := solana.Commitment(sol); got != chains.CommitmentFinalized {
		t.Errorf("Commitment(sol) = %v, want finalized", got)
	}
	if got := solana.Commitment(usdc); got != chains.CommitmentConfirmed {
		t.Errorf("Commitment(sol/usdc) = %v, want confirmed", got)
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		prev     chains.PaymentState
		state    chains.TxState
		want     chains.Step
	}{
		// Native SOL: finalized.
		{"SOL without commitment is not reported", sol, 1, rec(none, 0), at(chains.CommitmentNone), chains.Step{Status: none}},
		{"SOL processed is not reported", sol, 1, rec(none, 0), at(chains.CommitmentProcessed), chains.Step{Status: none}},
		{"SOL confirmed is not reported", sol, 1, rec(none, 0), at(chains.CommitmentConfirmed), chains.Step{Status: none}},
		{"SOL finalized is accepted", sol, 1, rec(none, 0), at(chains.CommitmentFinalized), accepted},

		// SPL tokens: confirmed.
		{"SPL processed is not reported", usdc, 1, rec(none, 0), at(chains.CommitmentProcessed), chains.Step{Status: none}},
		{"SPL confirmed is accepted", usdc, 1, rec(none, 0), at(chains.CommitmentConfirmed), accepted},
		{"SPL finalized is accepted", usdc, 1, rec(none, 0), at(chains.CommitmentFinalized), accepted},

		// Fixed confirmation fields.
		{"custom depth is not enforced", sol, 32, rec(none, 0), at(chains.CommitmentFinalized), accepted},
		{"reported depth is ignored", usdc, 1, rec(none, 0), chains.TxState{Present: true, Executed: true, Commitment: chains.CommitmentConfirmed, Confirmations: 40}, accepted},
		{"depth without commitment is not reported", sol, 1, rec(none, 0), chains.TxState{Present: true, Executed: true, Confirmations: 40}, chains.Step{Status: none}},

		// After acceptance.
		{"confirmed stays confirmed", sol, 1, rec(confirmed, 1), at(chains.CommitmentFinalized), chains.Step{Status: confirmed, Confirmations: 1, Forwardable: true}},
		{"confirmed at a weaker commitment withholds forwarding", sol, 1, rec(confirmed, 1), at(chains.CommitmentConfirmed), chains.Step{Status: confirmed, Confirmations: 1}},
		{"completed stays completed", usdc, 1, rec(completed, 1), at(chains.CommitmentFinalized), chains.Step{Status: completed, Confirmations: 1, Forwardable: true}},
		{"reorg after credit keeps confirmed", usdc, 1, rec(confirmed, 1), gone, chains.Step{Status: confirmed, Confirmations: 1}},

		// Drops and failures.
		{"gone before acceptance is dropped", sol, 1, rec(none, 0), gone, chains.Step{Status: dropped}},
		{"dropped stays dropped below acceptance", sol, 1, rec(dropped, 0), at(chains.CommitmentConfirmed), chains.Step{Status: dropped}},
		{"dropped then accepted is confirmed", sol, 1, rec(dropped, 0), at(chains.CommitmentFinalized), accepted},
		{"failed transaction at acceptance reverts", usdc, 1, rec(none, 0), chains.TxState{Present: true, Commitment: chains.CommitmentConfirmed}, chains.Step{Status: reverted}},
		{"failed transaction below acceptance is not reported", sol, 1, rec(none, 0), chains.TxState{Present: true, Commitment: chains.CommitmentConfirmed}, chains.Step{Status: none}},
		{"reverted is final", sol, 1, rec(reverted, 0), at(chains.CommitmentFinalized), chains.Step{Status: reverted}},

		// Odd inputs.
		{"recorded pending is kept until acceptance", sol, 1, rec(pending, 1), at(chains.CommitmentProcessed), chains.Step{Status: pending, Confirmations: 1}},
		{"recorded pending is accepted without a new count", sol, 1, rec(pending, 1), at(chains.CommitmentFinalized), accepted},
		{"unknown recorded status is left alone", sol, 1, rec("forwarding", 1), at(chains.CommitmentFinalized), chains.Step{Status: "forwarding", Confirmations: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := solana.Rules{}.Evaluate(tt.ticker, tt.required, tt.prev, tt.state)
			if got != tt.want {
				t.Errorf("Evaluate(%s, required %d, %+v, %+v)\n got %+v\nwant %+v", tt.ticker.Ticker, tt.required, tt.prev, tt.state, got, tt.want)
			}
		})
	}
}

// TestSequences follows Solana payments through commitment levels.
func TestSequences(t *testing.T) {
	t.Parallel()
	type obs struct {
		state chains.TxState
		want  chains.Step
	}
	tests := []struct {
		name   string
		ticker chains.Ticker
		steps  []obs
	}{
		{"SOL: processed, confirmed, finalized", sol, []obs{
			{at(chains.CommitmentProcessed), chains.Step{Status: none}},
			{at(chains.CommitmentConfirmed), chains.Step{Status: none}},
			{at(chains.CommitmentFinalized), accepted},
			{at(chains.CommitmentFinalized), chains.Step{Status: confirmed, Confirmations: 1, Forwardable: true}},
		}},
		{"SPL: confirmed, then finalized", usdc, []obs{
			{at(chains.CommitmentProcessed), chains.Step{Status: none}},
			{at(chains.CommitmentConfirmed), accepted},
			{at(chains.CommitmentFinalized), chains.Step{Status: confirmed, Confirmations: 1, Forwardable: true}},
		}},
		{"SOL: forked out before finalization, then finalized", sol, []obs{
			{at(chains.CommitmentConfirmed), chains.Step{Status: none}},
			{gone, chains.Step{Status: dropped}},
			{at(chains.CommitmentProcessed), chains.Step{Status: dropped}},
			{at(chains.CommitmentFinalized), accepted},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var prev chains.PaymentState
			for i, o := range tt.steps {
				got := solana.Rules{}.Evaluate(tt.ticker, 1, prev, o.state)
				if got != o.want {
					t.Fatalf("step %d: Evaluate(%+v, %+v)\n got %+v\nwant %+v", i, prev, o.state, got, o.want)
				}
				prev = chains.PaymentState{Status: got.Status, Confirmations: got.Confirmations}
			}
		})
	}
}
