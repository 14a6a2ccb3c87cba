package invoice

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
	"github.com/payhook/payhook/server/payment"
)

// TestWebhooksMatchTheCatalogue builds the payment webhooks of checkouts
// and deposits through the reactor's builder, at every stage, in every
// transport, with and without the optional fields (an open amount, a
// partial and an overpaid invoice, a late payment, unknown valuations),
// and validates each against its event type's schema.
func TestWebhooksMatchTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	btc, ok := family.DefaultRegistry().Lookup("btc")
	if !ok {
		t.Fatal("no btc")
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := NewReactor(nil, price.Default(), "webhook", func() time.Time { return now }, false, nil, nil)
	d := decimal.RequireFromString
	ptr := func(s string) *decimal.Decimal { v := d(s); return &v }
	type variant struct {
		name  string
		value *decimal.Decimal // the checkout's value
		fiat  *decimal.Decimal // the payment's valuation
		st    Settlement
		hold  entpayment.HoldReason
	}
	variants := []variant{
		{name: "paid", value: ptr("10"), fiat: ptr("10"), st: Settlement{Status: Paid, Paid: d("10")}},
		{name: "open amount, unknown valuation", st: Settlement{Status: Pending}},
		{name: "partial", value: ptr("10"), fiat: ptr("4"), st: Settlement{Status: Partial, Paid: d("4"), Due: ptr("6")}},
		{name: "overpaid", value: ptr("10"), fiat: ptr("12.5"), st: Settlement{Status: Paid, Paid: d("12.5"), Overpaid: ptr("2.5")}},
		{name: "late", value: ptr("10"), fiat: ptr("10"), st: Settlement{Status: Expired}, hold: entpayment.HoldReasonLatePayment},
	}
	for _, kind := range []Kind{Checkout, Deposit} {
		for _, status := range []chains.Status{chains.StatusPending, chains.StatusConfirmed, chains.StatusCompleted} {
			for _, v := range variants {
				if kind == Deposit && (v.st.Due != nil || v.st.Overpaid != nil) {
					continue // a deposit has no value
				}
				for _, tr := range []struct{ post, json bool }{{false, false}, {true, false}, {true, true}} {
					inv := &entdb.Invoice{
						ID: 1, ProjectID: 1, PublicID: "pay_1", Kind: entinvoice.Kind(kind), Currency: "USD",
						NotifyURL: "https://shop.example/hook?order=1", Post: tr.post, JSON: tr.json,
					}
					if kind == Checkout {
						inv.Value = v.value
					}
					p := &entdb.Payment{ID: 7, TxidIn: "aa11", ValueFiat: v.fiat, HoldReason: v.hold}
					c := payment.Change{
						Kind: payment.Confirmed, Ticker: btc, Address: &entdb.Address{AddressIn: "bc1q"}, Payment: p,
						Status: status, Confirmations: 2, ValueCoin: d("0.0002"),
					}
					if status == chains.StatusCompleted {
						c.Kind = payment.Distributed
						c.Forward = &entdb.Forward{TxidOut: "bb22", ValueForwardedCoin: d("0.00019"), FeeCoin: d("0.00001")}
					}
					m, err := r.message(c, inv, v.st)
					if err != nil {
						t.Fatalf("%s %s %s: %v", kind, status, v.name, err)
					}
					if err := check.Check(m.Subject.Event, m.Request); err != nil {
						t.Errorf("%s (%s, %s): %v", v.name, payload.TransportFor(tr.post, tr.json), m.Request.Method, err)
					}
				}
			}
		}
	}
}
