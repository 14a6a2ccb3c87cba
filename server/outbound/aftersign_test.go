package outbound

import (
	"context"
	"errors"
	"testing"

	entdb "github.com/payhook/payhook/ent/db"
	entoutbound "github.com/payhook/payhook/ent/db/outbound"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestCrashAfterSignRecordsNothing: a crash between a signature and its
// recording (Faults.AfterSign) records nothing and sends nothing, on every
// path that signs: Send's (the row stays planned, without bytes; Resume of
// a restarted instance signs again and sends exactly one transaction), an
// account chain's turn (the same), and a backend that signs offline at
// planning (PlanAll fails with the crash and the planning transaction
// records no row; planning again signs again, and one transaction is
// sent).
func TestCrashAfterSignRecordsNothing(t *testing.T) {
	t.Parallel()
	for _, ticker := range []string{"btc", "eth"} {
		t.Run(ticker, func(t *testing.T) {
			t.Parallel()
			storetest.ForEach(t, func(t *testing.T, db *store.DB) {
				t.Parallel()
				ctx := context.Background()
				crash := errors.New("killed after signing")
				bn := newBenchOf(t, db, Faults{AfterSign: func() error { return crash }}, ticker)
				o := bn.mustPlan(t, "k1", "0.5")
				if _, err := bn.e.Send(ctx, bn.tk, []int64{o.ID}); !errors.Is(err, crash) {
					t.Fatalf("send: %v; want the crash", err)
				}
				if got := bn.state(t, "k1"); got.State != entoutbound.StatePlanned || hasBytes(got) || got.Txid != "" || bn.b.signs != 1 || bn.b.sends != 0 {
					t.Fatalf("after the crash: %+v, %d signatures, %d sends; want planned, no bytes, nothing sent", got, bn.b.signs, bn.b.sends)
				}
				if len(bn.chain.Forwards()) != 0 || len(bn.h.sent) != 0 {
					t.Fatalf("after the crash: %d on chain, handler %v; want nothing", len(bn.chain.Forwards()), bn.h.sent)
				}
				restarted := newBenchOf(t, db, Faults{}, ticker)
				restarted.b.Backend, restarted.chain = bn.chain, bn.chain
				if open, err := restarted.e.Resume(ctx, bn.tk); err != nil || open {
					t.Fatalf("resume: %v (open %v)", err, open)
				}
				sent := restarted.state(t, "k1")
				if restarted.b.signs != 1 || restarted.b.sends != 1 || sent.State != entoutbound.StateSent || !hasBytes(sent) || sent.Txid == "" ||
					sent.Sends != 1 || len(restarted.h.sent) != 1 || len(bn.chain.Forwards()) != 1 {
					t.Fatalf("after resuming: %+v; %d signatures, %d sends, handler %v, %d on chain; want one signature, one send, one transaction",
						sent, restarted.b.signs, restarted.b.sends, restarted.h.sent, len(bn.chain.Forwards()))
				}
				if open, err := restarted.e.Resume(ctx, bn.tk); err != nil || open || restarted.b.sends != 1 || len(bn.chain.Forwards()) != 1 {
					t.Fatalf("a second resume: %v (open %v), %d sends, %d on chain", err, open, restarted.b.sends, len(bn.chain.Forwards()))
				}
			})
		})
	}
	t.Run("offline", func(t *testing.T) {
		t.Parallel()
		storetest.ForEach(t, func(t *testing.T, db *store.DB) {
			t.Parallel()
			ctx := context.Background()
			crash := errors.New("killed after signing")
			bn := newBench(t, db, Faults{AfterSign: func() error { return crash }})
			bn.b.offline = true
			if _, err := bn.plan(t, "k1", "0.5"); !errors.Is(err, crash) {
				t.Fatalf("plan: %v; want the crash", err)
			}
			if n, err := db.Client.Outbound.Query().Count(ctx); err != nil || n != 0 || bn.b.signs != 1 || bn.b.sends != 0 {
				t.Fatalf("after the crash: %d rows (%v), %d signatures, %d sends; want nothing recorded or sent", n, err, bn.b.signs, bn.b.sends)
			}
			restarted := newBench(t, db, Faults{})
			restarted.b.Backend, restarted.chain, restarted.b.offline = bn.chain, bn.chain, true
			o := restarted.mustPlan(t, "k1", "0.5")
			if open, err := restarted.e.SendPlanned(ctx, bn.tk, []*entdb.Outbound{o}); err != nil || open {
				t.Fatalf("send: %v (open %v)", err, open)
			}
			if open, err := restarted.e.Resume(ctx, bn.tk); err != nil || open {
				t.Fatalf("resume: %v (open %v)", err, open)
			}
			sent := restarted.state(t, "k1")
			if restarted.b.signs != 1 || restarted.b.sends != 1 || sent.State != entoutbound.StateSent || sent.Sends != 1 ||
				len(restarted.h.sent) != 1 || len(bn.chain.Forwards()) != 1 {
				t.Fatalf("after planning again: %+v; %d signatures, %d sends, handler %v, %d on chain; want one of each",
					sent, restarted.b.signs, restarted.b.sends, restarted.h.sent, len(bn.chain.Forwards()))
			}
		})
	})
}
