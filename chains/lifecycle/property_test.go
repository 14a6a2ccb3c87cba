package lifecycle_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/lifecycle"
)

// sequencesPerTicker is how many random observation sequences each ticker's
// property test folds.
const sequencesPerTicker = 5000

var propertyTickers = []chains.Ticker{btc, eth, erc20, trx, trc20, sol, spl}

// rank orders the statuses that may only move forwards; dropped, reverted
// and unknown statuses are outside the order.
func rank(s chains.Status) (int, bool) {
	switch s {
	case chains.StatusNone:
		return 0, true
	case chains.StatusPending:
		return 1, true
	case chains.StatusConfirmed:
		return 2, true
	case chains.StatusCompleted:
		return 3, true
	}
	return 0, false
}

func credited(s chains.Status) bool {
	return s == chains.StatusConfirmed || s == chains.StatusCompleted
}

// checkStep returns what is wrong with step as the verdict on observation s
// of a payment recorded as prev, or "" if nothing is.
func checkStep(t chains.Ticker, required int64, prev chains.PaymentState, s chains.TxState, step chains.Step) string {
	switch {
	case step.Confirmations < prev.Confirmations:
		return "confirmations decreased"
	case prev.Status == chains.StatusReverted && step.Status != chains.StatusReverted:
		return "left reverted"
	case credited(prev.Status) && step.Status != prev.Status:
		return "a credited status changed"
	case step.Status == chains.StatusDropped && !(prev.Status == chains.StatusNone || prev.Status == chains.StatusPending || prev.Status == chains.StatusDropped):
		return "dropped from " + string(prev.Status)
	case step.Status == chains.StatusReverted && !(prev.Status == chains.StatusNone || prev.Status == chains.StatusPending || prev.Status == chains.StatusDropped || prev.Status == chains.StatusReverted):
		return "reverted from " + string(prev.Status)
	}
	if pr, ok := rank(prev.Status); ok {
		if sr, ok := rank(step.Status); ok && sr < pr {
			return "status regressed"
		}
	}
	if want := step.Status == chains.StatusConfirmed && !credited(prev.Status); step.Credit != want {
		return fmt.Sprintf("Credit = %v, want %v", step.Credit, want)
	}
	isNew := step.Status != prev.Status
	higher := step.Status == chains.StatusPending && step.Confirmations > prev.Confirmations
	if want := (step.Status == chains.StatusPending || step.Status == chains.StatusConfirmed) && (isNew || higher); step.Notify != want {
		return fmt.Sprintf("Notify = %v, want %v", step.Notify, want)
	}
	if step.Forwardable && !credited(step.Status) {
		return "forwardable before credit"
	}
	if (step.Credit || step.Forwardable) && !s.Present {
		return "credited or forwarded a transaction that is not on the chain"
	}
	if t.Family != chains.FamilyUTXO && (step.Credit || step.Forwardable) && !s.Executed {
		return "credited or forwarded a failed execution"
	}
	switch t.Family {
	case chains.FamilyUTXO, chains.FamilyEVM, chains.FamilyTron:
		if step.Credit && s.Confirmations < max(required, 1) {
			return "credited below the required depth"
		}
		if step.Forwardable && s.Confirmations < 1 {
			return "forwarded a transaction that is not in a block"
		}
	}
	switch t.Family {
	case chains.FamilyTron:
		if step.Forwardable && (!s.Solidified || s.Confirmations < lifecycle.DistributionDepth(t, required)) {
			return "forwarded before the distribution depth with a solidified receipt"
		}
	case chains.FamilySolana:
		if step.Status == chains.StatusPending && prev.Status != chains.StatusPending {
			return "solana produced pending"
		}
		need := chains.CommitmentFinalized // native SOL
		if t.Token {
			need = chains.CommitmentConfirmed // SPL tokens
		}
		if (step.Credit || step.Forwardable) && s.Commitment < need {
			return "accepted below the commitment level"
		}
		if step.Confirmations > max(prev.Confirmations, 1) {
			return "solana reported more than 1 confirmation"
		}
	}
	return ""
}

// randomSequence is one transfer's observations: a plausible history (depth
// growing, sometimes by jumps; commitment strengthening; the block
// solidifying late), then, at random, shuffled, and with fields flipped.
func randomSequence(r *rand.Rand) []chains.TxState {
	n := 1 + r.IntN(30)
	seq := make([]chains.TxState, n)
	var depth int64
	commitment := chains.CommitmentNone
	solidAt := int64(15 + r.IntN(15))
	for i := range seq {
		depth += int64(r.IntN(3))
		if r.IntN(8) == 0 {
			depth += int64(r.IntN(25))
		}
		if commitment < chains.CommitmentFinalized && r.IntN(3) == 0 {
			commitment++
		}
		seq[i] = chains.TxState{Present: true, Confirmations: depth, Executed: true, Solidified: depth >= solidAt, Commitment: commitment}
	}
	if r.IntN(2) == 0 {
		r.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	}
	flip := 2 + r.IntN(10) // 1 in flip chance per field per observation
	for i := range seq {
		s := &seq[i]
		if r.IntN(flip) == 0 {
			s.Present = !s.Present
		}
		if r.IntN(flip) == 0 {
			s.Executed = !s.Executed
		}
		if r.IntN(flip) == 0 {
			s.Solidified = !s.Solidified
		}
		if r.IntN(flip) == 0 {
			s.Commitment = chains.Commitment(r.IntN(4))
		}
		if r.IntN(4*flip) == 0 {
			s.Confirmations = int64(r.IntN(60)) - 2
		}
	}
	return seq
}

// TestFoldProperties folds Evaluate over thousands of random observation
// sequences per ticker, feeding each Step back as the recorded state (and, at
// random, completing a forwardable payment as the forwarding code would), and
// checks every step and every sequence.
func TestFoldProperties(t *testing.T) {
	t.Parallel()
	for i, tk := range propertyTickers {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(20240601, uint64(i)))
			for n := range sequencesPerTicker {
				required := int64(r.IntN(41)) // 0..40; 0 counts as 1
				seq := randomSequence(r)
				var prev chains.PaymentState
				credits := 0
				for j, s := range seq {
					step, err := lifecycle.Evaluate(tk, required, prev, s)
					if err != nil {
						t.Fatal(err)
					}
					if msg := checkStep(tk, required, prev, s, step); msg != "" {
						t.Fatalf("sequence %d step %d (required %d): %s\nprev %+v\nstate %+v\nstep %+v\nsequence %+v", n, j, required, msg, prev, s, step, seq)
					}
					if step.Credit {
						credits++
					}
					prev = chains.PaymentState{Status: step.Status, Confirmations: step.Confirmations}
					if step.Forwardable && step.Status == chains.StatusConfirmed && r.IntN(3) == 0 {
						prev.Status = chains.StatusCompleted
					}
				}
				if credits > 1 {
					t.Fatalf("sequence %d (required %d): credited %d times\nsequence %+v", n, required, credits, seq)
				}
			}
		})
	}
}

// TestAnyRecordedState applies random observations to random recorded
// states, including ones the rules never produce, and checks each step.
func TestAnyRecordedState(t *testing.T) {
	t.Parallel()
	statuses := []chains.Status{
		chains.StatusNone, chains.StatusPending, chains.StatusConfirmed,
		chains.StatusCompleted, chains.StatusDropped, chains.StatusReverted,
	}
	for i, tk := range propertyTickers {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(7, uint64(i)))
			for n := range 20 * sequencesPerTicker {
				required := int64(r.IntN(41))
				prev := chains.PaymentState{Status: statuses[r.IntN(len(statuses))], Confirmations: int64(r.IntN(50))}
				s := chains.TxState{
					Present:       r.IntN(4) != 0,
					Confirmations: int64(r.IntN(60)) - 2,
					Executed:      r.IntN(4) != 0,
					Solidified:    r.IntN(2) == 0,
					Commitment:    chains.Commitment(r.IntN(4)),
				}
				step, err := lifecycle.Evaluate(tk, required, prev, s)
				if err != nil {
					t.Fatal(err)
				}
				if msg := checkStep(tk, required, prev, s, step); msg != "" {
					t.Fatalf("case %d (required %d): %s\nprev %+v\nstate %+v\nstep %+v", n, required, msg, prev, s, step)
				}
			}
		})
	}
}

// TestCleanHistoriesCredit checks liveness: a transfer observed in order,
// successfully executed and never reorganised is credited exactly once, by
// the time it reaches the required depth (Solana: its commitment level), and
// on TRON becomes forwardable once past the distribution depth with a
// solidified receipt.
func TestCleanHistoriesCredit(t *testing.T) {
	t.Parallel()
	for i, tk := range propertyTickers {
		t.Run(tk.Ticker, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(99, uint64(i)))
			for n := range sequencesPerTicker {
				required := 1 + int64(r.IntN(40))
				final := max(required, lifecycle.DistributionDepth(tk, required)) + int64(r.IntN(5))
				var (
					prev       chains.PaymentState
					depth      int64
					commitment chains.Commitment
					credits    int
					forwarded  bool
				)
				for depth < final || commitment < chains.CommitmentFinalized {
					depth = min(final, depth+int64(r.IntN(4)))
					if commitment < chains.CommitmentFinalized && r.IntN(2) == 0 {
						commitment++
					}
					s := chains.TxState{Present: true, Confirmations: depth, Executed: true, Solidified: depth == final, Commitment: commitment}
					step, err := lifecycle.Evaluate(tk, required, prev, s)
					if err != nil {
						t.Fatal(err)
					}
					if msg := checkStep(tk, required, prev, s, step); msg != "" {
						t.Fatalf("history %d: %s\nprev %+v\nstate %+v\nstep %+v", n, msg, prev, s, step)
					}
					if step.Credit {
						credits++
					}
					forwarded = forwarded || step.Forwardable
					prev = chains.PaymentState{Status: step.Status, Confirmations: step.Confirmations}
				}
				if credits != 1 || prev.Status != chains.StatusConfirmed || !forwarded {
					t.Fatalf("history %d (required %d, final depth %d): %d credits, final status %q, forwarded %v; want 1, confirmed, true", n, required, final, credits, prev.Status, forwarded)
				}
				wantConf := final
				if tk.Family == chains.FamilySolana {
					wantConf = 1
				}
				if prev.Confirmations != wantConf {
					t.Fatalf("history %d: final confirmations %d, want %d", n, prev.Confirmations, wantConf)
				}
			}
		})
	}
}
