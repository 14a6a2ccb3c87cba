package tron_test

import (
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/tron"
)

var (
	trx  = chains.Ticker{Ticker: "trx", Network: "trx", Coin: "trx", Family: chains.FamilyTron}
	usdt = chains.Ticker{Ticker: "trc20/usdt", Network: "trc20", Coin: "usdt", Family: chains.FamilyTron, Token: true, Contract: "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"}
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

// block is a successfully executed transaction n blocks deep whose block is
// not yet solidified.
func block(n int64) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n, Executed: true}
}

// solid is a successfully executed transaction n blocks deep with a
// solidified receipt.
func solid(n int64) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n, Executed: true, Solidified: true}
}

// failed is a transaction n blocks deep whose receipt shows failure.
func failed(n int64, solidified bool) chains.TxState {
	return chains.TxState{Present: true, Confirmations: n, Solidified: solidified}
}

var gone = chains.TxState{Present: false}

func TestDistributionDepth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		want     int64
	}{
		{"TRX below the floor", trx, 5, 23},
		{"TRX at the floor", trx, 23, 23},
		{"TRX above the floor", trx, 30, 30},
		{"TRC20 below the floor", usdt, 5, 20},
		{"TRC20 between the floors", usdt, 21, 21},
		{"TRC20 above both floors", usdt, 30, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tron.DistributionDepth(tt.ticker, tt.required); got != tt.want {
				t.Errorf("DistributionDepth(%s, %d) = %d, want %d", tt.ticker.Ticker, tt.required, got, tt.want)
			}
		})
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
		// Credit at the configured depth.
		{"unconfirmed sighting is not reported", trx, 5, rec(none, 0), block(0), chains.Step{Status: none}},
		{"first block is pending", trx, 5, rec(none, 0), block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
		{"progress notifies", trx, 5, rec(pending, 1), block(3), chains.Step{Status: pending, Confirmations: 3, Notify: true}},
		{"same count is silent", trx, 5, rec(pending, 3), block(3), chains.Step{Status: pending, Confirmations: 3}},
		{"required 5: credit at 5, not yet distributable", trx, 5, rec(pending, 4), block(5), chains.Step{Status: confirmed, Confirmations: 5, Notify: true, Credit: true}},
		{"required 5: solidified at 5 is still short of 23", trx, 5, rec(pending, 4), solid(5), chains.Step{Status: confirmed, Confirmations: 5, Notify: true, Credit: true}},
		{"threshold 1: first event is confirmed", trx, 1, rec(none, 0), block(1), chains.Step{Status: confirmed, Confirmations: 1, Notify: true, Credit: true}},
		{"jump from 0 to 10 credits", trx, 5, rec(none, 0), block(10), chains.Step{Status: confirmed, Confirmations: 10, Notify: true, Credit: true}},
		{"jump from 0 to 25 solidified credits and forwards", trx, 5, rec(none, 0), solid(25), chains.Step{Status: confirmed, Confirmations: 25, Notify: true, Credit: true, Forwardable: true}},

		// The distribution gate, TRX, required 5.
		{"TRX required 5: 22 solidified is too shallow", trx, 5, rec(confirmed, 5), solid(22), chains.Step{Status: confirmed, Confirmations: 22}},
		{"TRX required 5: 23 solidified forwards", trx, 5, rec(confirmed, 22), solid(23), chains.Step{Status: confirmed, Confirmations: 23, Forwardable: true}},
		{"TRX required 5: 23 unsolidified waits", trx, 5, rec(confirmed, 22), block(23), chains.Step{Status: confirmed, Confirmations: 23}},
		{"TRX required 5: failed solidified receipt never forwards", trx, 5, rec(confirmed, 22), failed(40, true), chains.Step{Status: confirmed, Confirmations: 40}},
		{"TRX required 5: gate uses the current depth", trx, 5, rec(confirmed, 30), solid(10), chains.Step{Status: confirmed, Confirmations: 30}},

		// The distribution gate, TRC20, required 5.
		{"TRC20 required 5: 19 solidified is too shallow", usdt, 5, rec(confirmed, 5), solid(19), chains.Step{Status: confirmed, Confirmations: 19}},
		{"TRC20 required 5: 20 solidified forwards", usdt, 5, rec(confirmed, 19), solid(20), chains.Step{Status: confirmed, Confirmations: 20, Forwardable: true}},
		{"TRX required 5: 20 solidified is too shallow", trx, 5, rec(confirmed, 19), solid(20), chains.Step{Status: confirmed, Confirmations: 20}},

		// Required 30: above both floors.
		{"TRX required 30: 29 solidified is pending", trx, 30, rec(pending, 23), solid(29), chains.Step{Status: pending, Confirmations: 29, Notify: true}},
		{"TRX required 30: 30 solidified credits and forwards", trx, 30, rec(pending, 29), solid(30), chains.Step{Status: confirmed, Confirmations: 30, Notify: true, Credit: true, Forwardable: true}},
		{"TRX required 30: 30 unsolidified credits only", trx, 30, rec(pending, 29), block(30), chains.Step{Status: confirmed, Confirmations: 30, Notify: true, Credit: true}},
		{"TRC20 required 30: 25 solidified is pending", usdt, 30, rec(pending, 20), solid(25), chains.Step{Status: pending, Confirmations: 25, Notify: true}},
		{"TRC20 required 30: 30 solidified credits and forwards", usdt, 30, rec(pending, 25), solid(30), chains.Step{Status: confirmed, Confirmations: 30, Notify: true, Credit: true, Forwardable: true}},

		// Execution checks.
		{"failed receipt reverts", trx, 5, rec(none, 0), failed(1, false), chains.Step{Status: reverted, Confirmations: 1}},
		{"TRC20 without Transfer log reverts after a pending callback", usdt, 5, rec(pending, 2), failed(3, false), chains.Step{Status: reverted, Confirmations: 3}},
		{"failed solidified receipt reverts", usdt, 5, rec(pending, 4), failed(25, true), chains.Step{Status: reverted, Confirmations: 25}},
		{"reverted is final", trx, 5, rec(reverted, 3), solid(30), chains.Step{Status: reverted, Confirmations: 30}},

		// Reorganisations and completion.
		{"reorg before credit drops", trx, 5, rec(pending, 3), gone, chains.Step{Status: dropped, Confirmations: 3}},
		{"dropped re-included is pending again", trx, 5, rec(dropped, 3), block(1), chains.Step{Status: pending, Confirmations: 3, Notify: true}},
		{"dropped stays dropped while unconfirmed", trx, 5, rec(dropped, 3), block(0), chains.Step{Status: dropped, Confirmations: 3}},
		{"reorg after credit keeps confirmed, no forwarding", trx, 5, rec(confirmed, 10), gone, chains.Step{Status: confirmed, Confirmations: 10}},
		{"completed stays completed", trx, 5, rec(completed, 23), solid(24), chains.Step{Status: completed, Confirmations: 24, Forwardable: true}},
		{"completed after a reorg stays completed", trx, 5, rec(completed, 23), gone, chains.Step{Status: completed, Confirmations: 23}},
		{"unknown recorded status is left alone", trx, 5, rec("forwarding", 1), solid(30), chains.Step{Status: "forwarding", Confirmations: 30}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tron.Rules{}.Evaluate(tt.ticker, tt.required, tt.prev, tt.state)
			if got != tt.want {
				t.Errorf("Evaluate(%s, required %d, %+v, %+v)\n got %+v\nwant %+v", tt.ticker.Ticker, tt.required, tt.prev, tt.state, got, tt.want)
			}
		})
	}
}

// TestSequences follows TRON payments from detection to distribution.
func TestSequences(t *testing.T) {
	t.Parallel()
	type obs struct {
		state chains.TxState
		want  chains.Step
	}
	tests := []struct {
		name     string
		ticker   chains.Ticker
		required int64
		steps    []obs
	}{
		{"TRX required 5: credit at 5, forward at 23 solidified", trx, 5, []obs{
			{block(1), chains.Step{Status: pending, Confirmations: 1, Notify: true}},
			{block(4), chains.Step{Status: pending, Confirmations: 4, Notify: true}},
			{block(5), chains.Step{Status: confirmed, Confirmations: 5, Notify: true, Credit: true}},
			{solid(19), chains.Step{Status: confirmed, Confirmations: 19}},
			{block(23), chains.Step{Status: confirmed, Confirmations: 23}},
			{solid(23), chains.Step{Status: confirmed, Confirmations: 23, Forwardable: true}},
		}},
		{"TRC20 required 5: forward at 20 solidified", usdt, 5, []obs{
			{block(6), chains.Step{Status: confirmed, Confirmations: 6, Notify: true, Credit: true}},
			{solid(20), chains.Step{Status: confirmed, Confirmations: 20, Forwardable: true}},
		}},
		{"TRX required 30: credit and forward together", trx, 30, []obs{
			{block(2), chains.Step{Status: pending, Confirmations: 2, Notify: true}},
			{solid(29), chains.Step{Status: pending, Confirmations: 29, Notify: true}},
			{solid(31), chains.Step{Status: confirmed, Confirmations: 31, Notify: true, Credit: true, Forwardable: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var prev chains.PaymentState
			for i, o := range tt.steps {
				got := tron.Rules{}.Evaluate(tt.ticker, tt.required, prev, o.state)
				if got != o.want {
					t.Fatalf("step %d: Evaluate(%+v, %+v)\n got %+v\nwant %+v", i, prev, o.state, got, o.want)
				}
				prev = chains.PaymentState{Status: got.Status, Confirmations: got.Confirmations}
			}
		})
	}
}
