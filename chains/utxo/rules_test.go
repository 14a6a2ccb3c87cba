package utxo_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

var btc = chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc", Family: chains.FamilyUTXO}

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

// block is a transaction n blocks deep (0: in the mempool).
func block(n int64) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n, Executed: true}
}

// gone is a transaction a reorganisation removed.
var gone = chains.TxState{Present: false}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		required int64
		prev     chains.PaymentState
		state    chains.TxState
		want     chains.Step
	}{
		// Detection.
		{"mempool sighting is not reported", 3, rec(none, 0), block(0), chains.Step{Status: none}},
		{"first block below threshold is pending", 3, rec(none, 0), block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
		{"threshold 1: first event is confirmed", 1, rec(none, 0), block(1), chains.Step{Status: confirmed, Confirmations: 1, Notify: true, Credit: true, Forwardable: true}},
		{"jump from 0 to 10 past threshold skips pending", 6, rec(none, 0), block(10), chains.Step{Status: confirmed, Confirmations: 10, Notify: true, Credit: true, Forwardable: true}},
		{"jump from 0 to 10 below threshold", 20, rec(none, 0), block(10), chains.Step{Status: pending, Confirmations: 10, Notify: true}},

		// Progress.
		{"higher count while pending notifies", 3, rec(pending, 1), block(2), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
		{"same count while pending is silent", 3, rec(pending, 2), block(2), chains.Step{Status: pending, Confirmations: 2}},
		{"late lower count keeps the recorded one", 6, rec(pending, 4), block(2), chains.Step{Status: pending, Confirmations: 4}},
		{"threshold reached credits once", 3, rec(pending, 2), block(3), chains.Step{Status: confirmed, Confirmations: 3, Notify: true, Credit: true, Forwardable: true}},
		{"pending jumps past threshold", 3, rec(pending, 1), block(9), chains.Step{Status: confirmed, Confirmations: 9, Notify: true, Credit: true, Forwardable: true}},
		{"credit needs the current depth, not the recorded one", 3, rec(pending, 5), block(1), chains.Step{Status: pending, Confirmations: 5}},
		{"pending back in the mempool stays pending", 3, rec(pending, 2), block(0), chains.Step{Status: pending, Confirmations: 2}},

		// After credit.
		{"confirmed gets deeper silently", 3, rec(confirmed, 3), block(4), chains.Step{Status: confirmed, Confirmations: 4, Forwardable: true}},
		{"confirmed sees a late shallow observation", 3, rec(confirmed, 5), block(2), chains.Step{Status: confirmed, Confirmations: 5, Forwardable: true}},
		{"completed stays completed", 3, rec(completed, 6), block(7), chains.Step{Status: completed, Confirmations: 7, Forwardable: true}},

		// Reorganisations.
		{"reorg before credit drops", 3, rec(pending, 2), gone, chains.Step{Status: dropped, Confirmations: 2}},
		{"mempool transaction evicted is dropped", 3, rec(none, 0), gone, chains.Step{Status: dropped}},
		{"absent transaction's stale depth is ignored", 3, rec(pending, 1), chains.TxState{Confirmations: 9}, chains.Step{Status: dropped, Confirmations: 1}},
		{"dropped stays dropped while absent", 3, rec(dropped, 2), gone, chains.Step{Status: dropped, Confirmations: 2}},
		{"dropped stays dropped in the mempool", 3, rec(dropped, 2), block(0), chains.Step{Status: dropped, Confirmations: 2}},
		{"dropped re-included is pending again", 3, rec(dropped, 2), block(1), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
		{"dropped re-included past threshold is confirmed", 3, rec(dropped, 2), block(3), chains.Step{Status: confirmed, Confirmations: 3, Notify: true, Credit: true, Forwardable: true}},
		{"reorg after credit keeps confirmed, withholds forwarding", 3, rec(confirmed, 3), gone, chains.Step{Status: confirmed, Confirmations: 3}},
		{"reorg after credit back to the mempool", 3, rec(confirmed, 3), block(0), chains.Step{Status: confirmed, Confirmations: 3}},
		{"re-included after credit is forwardable again", 3, rec(confirmed, 3), block(1), chains.Step{Status: confirmed, Confirmations: 3, Forwardable: true}},
		{"reorg after completion keeps completed", 3, rec(completed, 4), gone, chains.Step{Status: completed, Confirmations: 4}},

		// Odd inputs.
		{"required 0 counts as 1", 0, rec(none, 0), block(1), chains.Step{Status: confirmed, Confirmations: 1, Notify: true, Credit: true, Forwardable: true}},
		{"negative depth counts as 0", 3, rec(none, 0), block(-1), chains.Step{Status: none}},
		{"Executed is not read", 2, rec(none, 0), chains.TxState{Present: true, Confirmations: 2}, chains.Step{Status: confirmed, Confirmations: 2, Notify: true, Credit: true, Forwardable: true}},
		{"recorded reverted is left alone", 2, rec(reverted, 1), block(5), chains.Step{Status: reverted, Confirmations: 5}},
		{"unknown recorded status is left alone", 2, rec("forwarding", 1), block(5), chains.Step{Status: "forwarding", Confirmations: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := utxo.Rules{}.Evaluate(btc, tt.required, tt.prev, tt.state)
			if got != tt.want {
				t.Errorf("Evaluate(required %d, %+v, %+v)\n got %+v\nwant %+v", tt.required, tt.prev, tt.state, got, tt.want)
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
		{"mempool, progress, credit, deeper", 3, []obs{
			{block(0), chains.Step{Status: none}},
			{block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
			{block(2), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
			{block(2), chains.Step{Status: pending, Confirmations: 2}},
			{block(3), chains.Step{Status: confirmed, Confirmations: 3, Notify: true, Credit: true, Forwardable: true}},
			{block(4), chains.Step{Status: confirmed, Confirmations: 4, Forwardable: true}},
		}},
		{"out of order observations", 4, []obs{
			{block(3), chains.Step{Status: pending, Confirmations: 3, Notify: true}},
			{block(1), chains.Step{Status: pending, Confirmations: 3}},
			{block(5), chains.Step{Status: confirmed, Confirmations: 5, Notify: true, Credit: true, Forwardable: true}},
			{block(4), chains.Step{Status: confirmed, Confirmations: 5, Forwardable: true}},
		}},
		{"reorg before credit, re-included deeper", 3, []obs{
			{block(2), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
			{gone, chains.Step{Status: dropped, Confirmations: 2}},
			{block(0), chains.Step{Status: dropped, Confirmations: 2}},
			{block(1), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
			{block(3), chains.Step{Status: confirmed, Confirmations: 3, Notify: true, Credit: true, Forwardable: true}},
		}},
		{"reorg after credit is not reversed", 2, []obs{
			{block(2), chains.Step{Status: confirmed, Confirmations: 2, Notify: true, Credit: true, Forwardable: true}},
			{gone, chains.Step{Status: confirmed, Confirmations: 2}},
			{block(1), chains.Step{Status: confirmed, Confirmations: 2, Forwardable: true}},
			{block(2), chains.Step{Status: confirmed, Confirmations: 2, Forwardable: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var prev chains.PaymentState
			for i, o := range tt.steps {
				got := utxo.Rules{}.Evaluate(btc, tt.required, prev, o.state)
				if got != o.want {
					t.Fatalf("step %d: Evaluate(%+v, %+v)\n got %+v\nwant %+v", i, prev, o.state, got, o.want)
				}
				prev = chains.PaymentState{Status: got.Status, Confirmations: got.Confirmations}
			}
		})
	}
}
