package payment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/devnet"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/ledger"
)

// TestLatePaymentHeldUntilRefund: a payment detected on an invoice address
// at or after its late_hold_from (a checkout's expiry under the refund
// policy) is held (late_payment) from its detection, yet watched and
// published through its confirmations to its credit, as any payment; it is
// never forwarded, and the journal holds its value with the reason from
// its credit on. A payment to an address whose late_hold_from is still
// ahead is forwarded as before.
func TestLatePaymentHeldUntilRefund(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.Open(t, d)
			f := newFixture(t, db, "btc")
			chain := devnet.NewChain(f.tk, devnet.Options{})
			rec := &recorder{}
			svc := f.service(db, chain, rec)
			w, err := svc.NewWatcher(f.tk, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			now := svc.now()
			late := lateAddress(t, f, 1, now.Add(-time.Minute))
			onTime := lateAddress(t, f, 2, now.Add(time.Hour))

			payEach(t, chain, []string{late, onTime}, "0.001")
			poll(t, w)
			p := func(addr string) *entdb.Payment {
				t.Helper()
				p, err := db.Client.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(addr))).WithForward().Only(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			if lp := p(late); lp.Status != entpayment.StatusPending || lp.HoldReason != entpayment.HoldReasonLatePayment {
				t.Fatalf("late payment when detected: %s held %s", lp.Status, lp.HoldReason)
			}
			for range 2 {
				if _, err := chain.Mine(1); err != nil {
					t.Fatal(err)
				}
				poll(t, w)
			}
			poll(t, w)
			lp, op := p(late), p(onTime)
			if lp.Status != entpayment.StatusConfirmed || lp.Confirmations != 3 || lp.HoldReason != entpayment.HoldReasonLatePayment || lp.Edges.Forward != nil {
				t.Fatalf("late payment after its credit: %s %d confirmations, held %s, forward %v", lp.Status, lp.Confirmations, lp.HoldReason, lp.Edges.Forward)
			}
			if op.Status != entpayment.StatusCompleted || op.HoldReason != entpayment.HoldReasonNone || op.Edges.Forward == nil {
				t.Fatalf("payment on time: %s held %s forward %v", op.Status, op.HoldReason, op.Edges.Forward)
			}
			if fw := chain.Forwards(); len(fw) != 1 {
				t.Fatalf("%d forwards, want the on-time payment's only", len(fw))
			}
			changes := rec.byPayment()[lp.TxidIn]
			if got := strings.Join(changes, ","); got != "detected:pending:1,depth:pending:2,confirmed:confirmed:3" {
				t.Errorf("late payment's changes %s: want its progress to its credit, no distribution", got)
			}
			bs, err := ledger.Balances(ctx, db.Client, ledger.Held)
			if err != nil || len(bs) != 1 || !ledger.Coins(f.tk, bs[0].Units).Equal(decimal.RequireFromString("0.001")) {
				t.Fatalf("held balance %+v (%v), want the late payment's 0.001", bs, err)
			}
			held, err := ledger.HeldSummary(ctx, db.Client)
			if err != nil || len(held) != 1 || !strings.Contains(fmt.Sprintf("%+v", held), "late_payment") {
				t.Fatalf("held funds %+v (%v), want the late payment with its reason", held, err)
			}
		})
	}
}

// lateAddress creates an invoice address (three confirmations) that holds
// the payments detected from holdFrom on.
func lateAddress(t *testing.T, f *fixture, index uint32, holdFrom time.Time) string {
	t.Helper()
	addrIn, _ := f.der.Address(f.tk, index)
	dest, _ := f.der.Address(f.tk, 1000)
	if _, err := f.db.Client.Address.Create().SetAPIKeyID(f.keyID).SetProjectID(1).SetTicker(f.tk.Ticker).SetFamily(string(f.tk.Family)).
		SetAddressIn(addrIn).SetDerivationIndex(int64(index)).SetCallbackURL("https://shop.example/hook").SetCallbackKey(fmt.Sprintf("%064x", index)).
		SetDestinations([]schema.Destination{{Address: dest, Share: decimal.NewFromInt(1)}}).SetRequiredConfirmations(3).
		SetInvoiceID(int64(index)).SetService("checkout").SetLateHoldFrom(holdFrom).Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	return addrIn
}
