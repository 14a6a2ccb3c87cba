package subscription

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/payment"
)

// TestWebhooksMatchTheCatalogue builds renewal webhooks through the
// reactor's builder at every stage, in every transport, with known and
// unknown valuations and option values, and validates each against its
// event type's schema.
func TestWebhooksMatchTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	btc, ok := family.DefaultRegistry().Lookup("btc")
	if !ok {
		t.Fatal("no btc")
	}
	h := NewHooks(price.Default(), "webhook")
	for _, status := range []chains.Status{chains.StatusPending, chains.StatusConfirmed, chains.StatusCompleted} {
		for _, known := range []bool{true, false} {
			for _, tr := range []struct{ post, json bool }{{false, false}, {true, false}, {true, true}} {
				sub := &entdb.Subscription{ProjectID: 1, Token: "sub_x", NotifyURL: "https://shop.example/hook", Post: tr.post, JSON: tr.json}
				inv := &entdb.Invoice{ProjectID: 1, PublicID: "ren_x", Kind: entinvoice.KindSubscription, Option: "1m", Currency: "USD"}
				p := &entdb.Payment{ID: 3, TxidIn: "tx-in"}
				if known {
					inv.Value, p.ValueFiat = dec("10"), dec("10")
				}
				c := payment.Change{Kind: payment.Confirmed, Ticker: btc, Payment: p, Status: status, Confirmations: 1, ValueCoin: decimal.RequireFromString("0.1")}
				if status == chains.StatusCompleted {
					c.Kind = payment.Distributed
					c.Forward = &entdb.Forward{TxidOut: "tx-out", ValueForwardedCoin: decimal.RequireFromString("0.098")}
				}
				m, err := h.message(c, sub, inv, invoice.Paid)
				if err != nil {
					t.Fatal(err)
				}
				if err := check.Check(m.Subject.Event, m.Request); err != nil {
					t.Errorf("valuation known %v, %s: %v", known, payload.TransportFor(tr.post, tr.json), err)
				}
			}
		}
	}
}
