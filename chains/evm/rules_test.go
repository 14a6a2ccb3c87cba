package evm_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/evm"
)

var (
	eth  = chains.Ticker{Ticker: "eth", Network: "eth", Coin: "eth", Family: chains.FamilyEVM}
	usdt = chains.Ticker{Ticker: "erc20/usdt", Network: "erc20", Coin: "usdt", Family: chains.FamilyEVM, Token: true, Contract: "0xdAC17F958D2ee523a2206206994597C13D831ec7"}
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

// block is a successfully executed transaction n blocks deep (0: in the
// mempool).
func block(n int64) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n, Executed: true}
}

// failed is a transaction n blocks deep whose receipt shows failure.
func failed(n int64) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n}
}

// gone is a transaction a reorganisation removed.
var gone = chains.TxState{Present: false}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	credited := func(n int64) chains.Step {
		return chains.Step{Status: confirmed, Confirmations: n, Notify: true, Credit: true, Forwardable: true}
	}
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		prev     chains.PaymentState
		state    chains.TxState
		want     chains.Step
	}{
		// As UTXO.
		{"mempool sighting is not reported", eth, 12, rec(none, 0), block(0), chains.Step{Status: none}},
		{"mempool has no receipt to fail", eth, 12, rec(none, 0), failed(0), chains.Step{Status: none}},
		{"first block below threshold is pending", eth, 12, rec(none, 0), block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
		{"token first block is pending", usdt, 12, rec(none, 0), block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
		{"threshold 1: first event is confirmed", eth, 1, rec(none, 0), block(1), credited(1)},
		{"jump from 0 to 10 past threshold", eth, 6, rec(none, 0), block(10), credited(10)},
		{"jump from 0 to 10 below threshold", usdt, 12, rec(none, 0), block(10), chains.Step{Status: pending, Confirmations: 10, Notify: true}},
		{"higher count while pending notifies", eth, 12, rec(pending, 3), block(7), chains.Step{Status: pending, Confirmations: 7, Notify: true}},
		{"same count while pending is silent", eth, 12, rec(pending, 7), block(7), chains.Step{Status: pending, Confirmations: 7}},
		{"late lower count keeps the recorded one", eth, 12, rec(pending, 7), block(5), chains.Step{Status: pending, Confirmations: 7}},
		{"threshold reached credits", eth, 12, rec(pending, 11), block(12), credited(12)},
		{"credit needs the current depth", eth, 12, rec(pending, 12), block(3), chains.Step{Status: pending, Confirmations: 12}},
		{"confirmed gets deeper silently", eth, 12, rec(confirmed, 12), block(20), chains.Step{Status: confirmed, Confirmations: 20, Forwardable: true}},
		{"completed stays completed", usdt, 12, rec(completed, 15), block(16), chains.Step{Status: completed, Confirmations: 16, Forwardable: true}},

		// Execution checks.
		{"revert before any callback", eth, 12, rec(none, 0), failed(1), chains.Step{Status: reverted, Confirmations: 1}},
		{"token without Transfer log reverts", usdt, 12, rec(none, 0), failed(3), chains.Step{Status: reverted, Confirmations: 3}},
		{"revert after a pending callback", eth, 12, rec(pending, 4), failed(5), chains.Step{Status: reverted, Confirmations: 5}},
		{"revert deeper than threshold is still not credited", eth, 12, rec(pending, 4), failed(20), chains.Step{Status: reverted, Confirmations: 20}},
		{"reverted is final", eth, 12, rec(reverted, 5), block(20), chains.Step{Status: reverted, Confirmations: 20}},
		{"reverted stays reverted when dropped", eth, 12, rec(reverted, 5), gone, chains.Step{Status: reverted, Confirmations: 5}},
		{"failed receipt after credit keeps confirmed, withholds forwarding", eth, 12, rec(confirmed, 12), failed(13), chains.Step{Status: confirmed, Confirmations: 13}},
		{"failed receipt after completion keeps completed", eth, 12, rec(completed, 12), failed(13), chains.Step{Status: completed, Confirmations: 13}},

		// Reorganisations.
		{"reorg before credit drops", eth, 12, rec(pending, 4), gone, chains.Step{Status: dropped, Confirmations: 4}},
		{"absent transaction's stale depth is ignored", eth, 12, rec(pending, 4), chains.TxState{Confirmations: 30, Executed: true}, chains.Step{Status: dropped, Confirmations: 4}},
		{"dropped stays dropped in the mempool", eth, 12, rec(dropped, 4), block(0), chains.Step{Status: dropped, Confirmations: 4}},
		{"dropped re-included is pending again", eth, 12, rec(dropped, 4), block(2), chains.Step{Status: pending, Confirmations: 4, Notify: true}},
		{"dropped re-included with a failed receipt reverts", eth, 12, rec(dropped, 4), failed(2), chains.Step{Status: reverted, Confirmations: 4}},
		{"reorg after credit keeps confirmed", eth, 12, rec(confirmed, 12), gone, chains.Step{Status: confirmed, Confirmations: 12}},
		{"pending back in the mempool stays pending", eth, 12, rec(pending, 4), block(0), chains.Step{Status: pending, Confirmations: 4}},

		// Odd inputs.
		{"required 0 counts as 1", eth, 0, rec(none, 0), block(1), credited(1)},
		{"unknown recorded status is left alone", eth, 2, rec("forwarding", 1), block(5), chains.Step{Status: "forwarding", Confirmations: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := evm.Rules{}.Evaluate(tt.ticker, tt.required, tt.prev, tt.state)
			if got != tt.want {
				t.Errorf("Evaluate(%s, required %d, %+v, %+v)\n got %+v\nwant %+v", tt.ticker.Ticker, tt.required, tt.prev, tt.state, got, tt.want)
			}
		})
	}
}

// TestSequences folds Evaluate over observation sequences, as the payment
// code does, and checks each step.
func TestSequences(t *testing.T) {
	t.Parallel()
	type obs struct {
		state chains.TxState
		want  chains.Step
	}
	tests := []struct {
		name     string
		required int64
		steps    []obs
	}{
		{"revert before a pending callback sends nothing", 3, []obs{
			{block(0), chains.Step{Status: none}},
			{failed(1), chains.Step{Status: reverted, Confirmations: 1}},
			{block(3), chains.Step{Status: reverted, Confirmations: 3}},
		}},
		{"revert after a pending callback", 3, []obs{
			{block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
			{gone, chains.Step{Status: dropped, Confirmations: 1}},
			{failed(2), chains.Step{Status: reverted, Confirmations: 2}},
			{block(5), chains.Step{Status: reverted, Confirmations: 5}},
		}},
		{"credited, then a reorg with a failed receipt", 3, []obs{
			{block(3), chains.Step{Status: confirmed, Confirmations: 3, Notify: true, Credit: true, Forwardable: true}},
			{gone, chains.Step{Status: confirmed, Confirmations: 3}},
			{failed(1), chains.Step{Status: confirmed, Confirmations: 3}},
			{block(4), chains.Step{Status: confirmed, Confirmations: 4, Forwardable: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var prev chains.PaymentState
			for i, o := range tt.steps {
				got := evm.Rules{}.Evaluate(eth, tt.required, prev, o.state)
				if got != o.want {
					t.Fatalf("step %d: Evaluate(%+v, %+v)\n got %+v\nwant %+v", i, prev, o.state, got, o.want)
				}
				prev = chains.PaymentState{Status: got.Status, Confirmations: got.Confirmations}
			}
		})
	}
}
