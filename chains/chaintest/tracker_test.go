package chaintest

import (
	"context"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/utxo"
)

// fakeBackend returns canned answers, to check that a Tracker catches
// backends that break the contract.
type fakeBackend struct {
	head      chains.Head
	transfers []chains.Transfer
	state     chains.TxState
}

func (f *fakeBackend) Head(context.Context) (chains.Head, error) { return f.head, nil }
func (f *fakeBackend) Transfers(context.Context, int64, int64, func(string) bool) ([]chains.Transfer, error) {
	return f.transfers, nil
}
func (f *fakeBackend) Blocks(context.Context, int64, int64) ([]chains.Block, error) {
	return nil, nil
}
func (f *fakeBackend) State(context.Context, chains.Transfer) (chains.TxState, error) {
	return f.state, nil
}
func (f *fakeBackend) NetworkFee(context.Context) (decimal.Decimal, error) { return decimal.Zero, nil }
func (f *fakeBackend) Sign(context.Context, chains.Forward) (chains.Signed, error) {
	return chains.Signed{}, nil
}
func (f *fakeBackend) Send(context.Context, chains.Signed) error { return nil }

var btc = chains.Ticker{Ticker: "btc", Network: "btc", Coin: "btc"}.WithFamily(utxo.Family{})

func TestTrackerCatchesContractViolations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		backend fakeBackend
		want    string // in the error; "" for none
	}{
		{"conforming", fakeBackend{
			head:      chains.Head{Height: 5, Solidified: 5},
			transfers: []chains.Transfer{{TxID: "a", To: "watched", Height: 5}},
			state:     chains.TxState{Present: true, Confirmations: 1, Executed: true},
		}, ""},
		{"solidified beyond the tip", fakeBackend{head: chains.Head{Height: 5, Solidified: 6}}, "inconsistent head"},
		{"negative height", fakeBackend{head: chains.Head{Height: -1, Solidified: -1}}, "inconsistent head"},
		{"unwatched address", fakeBackend{
			head:      chains.Head{Height: 5, Solidified: 5},
			transfers: []chains.Transfer{{TxID: "a", To: "someone else", Height: 5}},
		}, "unwatched"},
		{"beyond the asked range", fakeBackend{
			head:      chains.Head{Height: 5, Solidified: 5},
			transfers: []chains.Transfer{{TxID: "a", To: "watched", Height: 6}},
		}, "asked for"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker(&tt.backend, btc, 3, "watched")
			err := tr.Poll(t.Context())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Poll: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Poll: %v, want an error about %q", err, tt.want)
			}
			if tt.want == "" {
				p, ok := tr.Find("a")
				if !ok || len(p.Notices) != 1 || p.Notices[0] != (Notice{chains.StatusPending, 1}) {
					t.Errorf("payment %+v, want one pending(1) callback", p)
				}
			}
		})
	}
}

func TestCheckInvariants(t *testing.T) {
	t.Parallel()
	step := func(s chains.Status, conf int64, notify, credit, fwd bool) Observed {
		return Observed{Step: chains.Step{Status: s, Confirmations: conf, Notify: notify, Credit: credit, Forwardable: fwd}}
	}
	const (
		pend = chains.StatusPending
		conf = chains.StatusConfirmed
		drop = chains.StatusDropped
		rev  = chains.StatusReverted
	)
	tests := []struct {
		name    string
		history []Observed
		want    string // in the error; "" for none
	}{
		{"progression", []Observed{step(pend, 1, true, false, false), step(pend, 2, true, false, false), step(conf, 3, true, true, true), step(conf, 4, false, false, true)}, ""},
		{"dropped then included again", []Observed{step(pend, 1, true, false, false), step(drop, 1, false, false, false), step(pend, 1, true, false, false)}, ""},
		{"count goes down", []Observed{step(pend, 2, true, false, false), step(pend, 1, false, false, false)}, "confirmations went down"},
		{"status regresses", []Observed{step(conf, 3, true, true, true), step(pend, 3, false, false, false)}, "regressed"},
		{"credited twice", []Observed{step(conf, 3, true, true, true), step(conf, 4, false, true, true)}, "credit"},
		{"confirmed without credit", []Observed{step(conf, 3, true, false, false)}, "without credit"},
		{"announced twice", []Observed{step(conf, 3, true, true, true), step(conf, 4, true, false, true)}, "twice"},
		{"callback for a drop", []Observed{step(drop, 0, true, false, false)}, "callback"},
		{"dropped after credit", []Observed{step(conf, 3, true, true, true), step(drop, 3, false, false, false)}, "after credit"},
		{"reverted is final", []Observed{step(rev, 1, false, false, false), step(pend, 2, true, false, false)}, "reverted"},
		{"forwardable before credit", []Observed{step(pend, 1, true, false, true)}, "forwardable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := (&Payment{History: tt.history}).CheckInvariants()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckInvariants: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckInvariants: %v, want an error about %q", err, tt.want)
			}
		})
	}
}
