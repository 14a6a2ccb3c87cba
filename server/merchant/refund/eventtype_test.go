package refund

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
)

// capture is an Enqueuer that keeps what it is given.
type capture struct{ ms []notifier.Message }

func (c *capture) Enqueue(_ context.Context, _ *entdb.Tx, m notifier.Message) (*entdb.Notification, error) {
	c.ms = append(c.ms, m)
	return &entdb.Notification{}, nil
}

// TestWebhooksMatchTheCatalogue builds the refund webhooks of checkouts and
// deposits through the service's builder, at every status, in every
// transport, and validates each against its event type's schema.
func TestWebhooksMatchTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	btc, ok := family.DefaultRegistry().Lookup("btc")
	if !ok {
		t.Fatal("no btc")
	}
	q := &capture{}
	s := &Service{webhooks: q, now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }}
	for _, kind := range []entinvoice.Kind{entinvoice.KindCheckout, entinvoice.KindDeposit} {
		for _, st := range []entrefund.Status{entrefund.StatusRequested, entrefund.StatusPending, entrefund.StatusCompleted, entrefund.StatusFailed} {
			for _, tr := range []struct{ post, json bool }{{false, false}, {true, false}, {true, true}} {
				inv := &entdb.Invoice{ProjectID: 1, PublicID: "pay_1", Kind: kind, NotifyURL: "https://shop.example/hook", Post: tr.post, JSON: tr.json}
				r := &entdb.Refund{ID: 4, UUID: "ref-1", Status: st, Value: decimal.RequireFromString("0.0001"), Address: "bc1qpayer"}
				switch st {
				case entrefund.StatusCompleted:
					r.Txid = "cc33"
				case entrefund.StatusFailed:
					r.Error = "the transaction could not be sent"
				}
				q.ms = q.ms[:0]
				if err := s.notify(context.Background(), nil, btc, inv, &entdb.Payment{TxidIn: "aa11"}, r); err != nil {
					t.Fatal(err)
				}
				if err := check.Check(q.ms[0].Subject.Event, q.ms[0].Request); err != nil {
					t.Errorf("%s: %v", payload.TransportFor(tr.post, tr.json), err)
				}
			}
		}
	}
}
