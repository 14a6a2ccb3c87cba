package address

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
	"github.com/payhook/payhook/server/payment"
)

// capture is an Enqueuer that keeps what it is given.
type capture struct{ ms []notifier.Message }

func (c *capture) Enqueue(_ context.Context, _ *entdb.Tx, m notifier.Message) (*entdb.Notification, error) {
	c.ms = append(c.ms, m)
	return &entdb.Notification{}, nil
}

// eventAddress is a low-level address with two destinations and custom
// parameters, in transport post/json.
func eventAddress(post, json, convert bool) *entdb.Address {
	return &entdb.Address{
		ProjectID: 1, Ticker: "eth", AddressIn: "0xin", CallbackURL: "https://shop.example/cb?order=7&token=x",
		Post: post, JSON: json, Convert: convert, RequiredConfirmations: 2,
		Destinations: []schema.Destination{{Address: "0xa", Share: decimal.RequireFromString("0.6")}, {Address: "0xb", Share: decimal.RequireFromString("0.4")}},
		CustomParams: []schema.Param{{Key: "order", Value: "7"}, {Key: "token", Value: "x"}},
	}
}

var transports = []struct{ post, json bool }{{false, false}, {true, false}, {true, true}}

// TestCallbacksMatchTheCatalogue builds low-level callbacks through the
// callback reactor at every stage, in every transport, with and without
// conversions, and validates each against its event type's schema; the
// encoder's field order is the catalogue's.
func TestCallbacksMatchTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	eth, ok := family.DefaultRegistry().Lookup("eth")
	if !ok {
		t.Fatal("no eth")
	}
	r := NewCallbackReactor(nil, price.Default())
	for _, status := range []chains.Status{chains.StatusPending, chains.StatusConfirmed, chains.StatusCompleted} {
		for _, convert := range []bool{false, true} {
			for _, tr := range transports {
				c := payment.Change{
					Kind: payment.Confirmed, Ticker: eth, Address: eventAddress(tr.post, tr.json, convert), Payment: &entdb.Payment{ID: 1, TxidIn: "0xtx"},
					Status: status, Confirmations: 3, ValueCoin: decimal.RequireFromString("0.5"),
				}
				if status == chains.StatusCompleted {
					c.Kind = payment.Distributed
					c.Forward = &entdb.Forward{TxidOut: "0xout", ValueForwardedCoin: decimal.RequireFromString("0.49"), FeeCoin: decimal.RequireFromString("0.005"), NetworkFee: decimal.RequireFromString("0.005")}
				}
				m, err := r.Message(c)
				if err != nil {
					t.Fatal(err)
				}
				if err := check.Check(m.Subject.Event, m.Request); err != nil {
					t.Errorf("convert %v, %s: %v", convert, payload.TransportFor(tr.post, tr.json), err)
				}
			}
		}
	}
	e, err := eventtype.Lookup(EventPrefix + StatusCompleted)
	if err != nil {
		t.Fatal(err)
	}
	order := FieldOrder()
	if len(order) != len(e.Fields) {
		t.Fatalf("the encoder writes %d fields, the catalogue lists %d", len(order), len(e.Fields))
	}
	for i, f := range e.Fields {
		if order[i] != f.Name {
			t.Errorf("field %d: encoder %s, catalogue %s", i, order[i], f.Name)
		}
	}
}

// TestWrongAssetMatchesTheCatalogue builds a low-level address's
// wrong_asset webhook through its reactor, in every transport, and
// validates it (the invoice's form, which reads the invoice, is checked
// by the server's tests through servertest).
func TestWrongAssetMatchesTheCatalogue(t *testing.T) {
	check, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	usdt, ok := family.DefaultRegistry().Lookup("erc20/usdt")
	if !ok {
		t.Fatal("no erc20/usdt")
	}
	for _, tr := range transports {
		q := &capture{}
		c := payment.Change{
			Kind: payment.Confirmed, Ticker: usdt, Address: eventAddress(tr.post, tr.json, false),
			Payment: &entdb.Payment{ID: 1, TxidIn: "0xtx", HoldReason: entpayment.HoldReasonWrongAsset},
			Status:  chains.StatusConfirmed, Confirmations: 3, ValueCoin: decimal.RequireFromString("12.5"),
		}
		if err := NewWrongAssetReactor(q).React(context.Background(), nil, []payment.Change{c}); err != nil {
			t.Fatal(err)
		}
		if len(q.ms) != 1 {
			t.Fatalf("%d messages", len(q.ms))
		}
		if err := check.Check(q.ms[0].Subject.Event, q.ms[0].Request); err != nil {
			t.Errorf("%s: %v", payload.TransportFor(tr.post, tr.json), err)
		}
	}
}
