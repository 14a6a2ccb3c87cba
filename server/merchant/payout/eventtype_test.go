package payout

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
)

// TestWebhooksMatchTheCatalogue builds both payout webhooks' fields
// through the builder, in both transports a project may choose, and
// validates each against its event type's schema.
func TestWebhooksMatchTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	btc, ok := family.DefaultRegistry().Lookup("btc")
	if !ok {
		t.Fatal("no btc")
	}
	d := decimal.RequireFromString
	rs := []*entdb.PayoutRequest{{Address: "bc1qa", Value: d("0.001")}, {Address: "bc1qb", Value: d("0.0025")}}
	for _, st := range []entpayout.Status{entpayout.StatusDone, entpayout.StatusError} {
		p := &entdb.Payout{ID: 9, Status: st, Ticker: "btc", TotalRequested: d("0.0035"), Fee: d("0.00001"), BlockchainFee: d("0.00002"), FromAddress: "bc1qwallet"}
		event := EventDone
		if st == entpayout.StatusDone {
			p.Txid = "dd44"
		} else {
			p.Error, event = "the transaction could not be sent", EventError
		}
		fields, err := webhookFields("u-1", btc, p, rs, time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		for _, post := range []bool{false, true} {
			req, err := payload.Encode("https://shop.example/payouts?shop=1", payload.TransportFor(post, false), fields, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := check.Check(event, req); err != nil {
				t.Errorf("%s: %v", payload.TransportFor(post, false), err)
			}
		}
	}
}
