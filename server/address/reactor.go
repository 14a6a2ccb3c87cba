package address

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// ServiceLabel is the notifier label (Subject.Service) of low-level callbacks.
const ServiceLabel = "address"

// EventPrefix starts the event type of low-level callbacks: every key
// belongs to a project, so every low-level payment is a custom payment of
// the merchant interface (custom.payment.pending|confirmed|completed), whose
// type the x-service-event header carries.
const EventPrefix = "custom.payment."

// StatusOf returns the payment status an event type ends with
// ("custom.payment.pending" -> "pending"; a bare status, as notifications
// stored before event types had, is returned as it is).
func StatusOf(event string) string {
	if i := strings.LastIndexByte(event, '.'); i >= 0 {
		return event[i+1:]
	}
	return event
}

// Enqueuer stores a notification inside a transaction (notifier.Queue).
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *entdb.Tx, m notifier.Message) (*entdb.Notification, error)
}

// CallbackReactor is the low-level API's reactor: for every change of a
// payment to one of its addresses it stores the callback the spec's
// "Callback notification" table describes, sent by the address's transport
// to its callback URL (cb_params included) and signed once with RSA
// (x-ca-signature).
type CallbackReactor struct {
	queue  Enqueuer
	prices price.Source
}

// NewCallbackReactor returns the reactor; prices give the price and fiat
// conversion fields.
func NewCallbackReactor(q Enqueuer, prices price.Source) *CallbackReactor {
	return &CallbackReactor{queue: q, prices: prices}
}

// React implements payment.Reactor: it owns the low-level (address) and
// custom payment addresses.
func (r *CallbackReactor) React(ctx context.Context, tx *entdb.Tx, cs []payment.Change) error {
	for _, c := range cs {
		m, err := r.Message(c)
		if err != nil {
			return err
		}
		if _, err := r.queue.Enqueue(ctx, tx, m); err != nil {
			return err
		}
	}
	return nil
}

// Sequence is the notifier sequence of a payment's callbacks: they make
// their first attempts in the order stored (pending before confirmed
// before completed).
func Sequence(paymentID int64) string { return "address-payment:" + strconv.FormatInt(paymentID, 10) }

// Message builds a change's callback as a notifier message: the payload
// encoded once for the address's transport, with a new uuid.
func (r *CallbackReactor) Message(c payment.Change) (notifier.Message, error) {
	cb := r.callback(c)
	cb.UUID = uuid.NewString()
	a := c.Address
	req, err := EncodeCallback(a.CallbackURL, payload.TransportFor(a.Post, a.JSON), cb)
	if err != nil {
		return notifier.Message{}, fmt.Errorf("encode callback of %s: %w", a.AddressIn, err)
	}
	return notifier.Message{
		UUID:  cb.UUID,
		Owner: a.ProjectID,
		Subject: notifier.Subject{
			Service:  ServiceLabel,
			Event:    EventPrefix + cb.PaymentStatus,
			Ref:      a.AddressIn,
			Topic:    c.Ticker.Ticker,
			Sequence: Sequence(c.Payment.ID),
			// A payment recorded by this transaction has had no callback.
			FirstOfSequence: c.First,
		},
		Request: req,
		Signing: notifier.Signing{Scheme: signer.SchemeRSAWebhook, Key: project.KeyRef(a.ProjectID)},
	}, nil
}

// callback builds a change's callback content.
func (r *CallbackReactor) callback(c payment.Change) Callback {
	t, a, p, f := c.Ticker, c.Address, c.Payment, c.Forward
	shares := make([]Share, len(a.Destinations))
	for i, d := range a.Destinations {
		shares[i] = Share{Address: d.Address, Share: d.Share}
	}
	params := make([]payload.Param, len(a.CustomParams))
	for i, cp := range a.CustomParams {
		params[i] = payload.Param{Key: cp.Key, Value: cp.Value}
	}
	confs, required := c.Confirmations, int64(a.RequiredConfirmations)
	if n, fixed := t.Rules().FixedConfirmations(t); fixed {
		confs, required = n, n // Solana: accepted by commitment, not depth
	}
	cb := Callback{
		AddressIn:             a.AddressIn,
		AddressOut:            shares,
		TxidIn:                p.TxidIn,
		Confirmations:         confs,
		RequiredConfirmations: required,
		PaymentStatus:         string(c.Status),
		Coin:                  t.Coin,
		Decimals:              t.Decimals,
		ValueCoin:             c.ValueCoin,
		Params:                params,
	}
	if usd, ok := r.prices.USD(t.Coin); ok {
		cb.Price = &usd
	}
	if a.Convert {
		usd, ok := price.USDValue(r.prices, t.Coin, c.ValueCoin)
		conv := price.Convert(r.prices, usd, ok)
		cb.ValueCoinConvert = &conv
	}
	if f != nil {
		cb.TxidOut = f.TxidOut
		cb.ValueForwardedCoin = payload.AmountOf(f.ValueForwardedCoin)
		cb.FeeCoin = payload.AmountOf(f.FeeCoin)
		cb.NetworkFee = payload.AmountOf(f.NetworkFee)
		if a.Convert {
			usd, ok := price.USDValue(r.prices, t.Coin, f.ValueForwardedCoin)
			conv := price.Convert(r.prices, usd, ok)
			cb.ValueForwardedCoinConvert = &conv
		}
	}
	return cb
}
