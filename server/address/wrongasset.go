package address

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
)

// WrongAssetEvent is the event of the webhook that tells the merchant of
// a wrong-asset payment.
const WrongAssetEvent = "wrong_asset"

// WrongAssetReactor tells the merchant of a payment of another asset than
// its address takes (USDT sent to an ETH address created without
// multi_token), once, when it is credited: a wrong_asset webhook to the
// address's callback URL (low-level, signed as its callbacks are) or to
// its invoice's notify_url (signed with the project's secret), with the
// transports they chose. The payment stays held until the merchant
// forwards or refunds it.
type WrongAssetReactor struct {
	queue Enqueuer
}

// NewWrongAssetReactor returns the reactor.
func NewWrongAssetReactor(q Enqueuer) *WrongAssetReactor { return &WrongAssetReactor{queue: q} }

// React implements payment.Reactor.
func (r *WrongAssetReactor) React(ctx context.Context, tx *entdb.Tx, cs []payment.Change) error {
	for _, c := range cs {
		if c.Kind != payment.Confirmed || c.Payment == nil || c.Payment.HoldReason != entpayment.HoldReasonWrongAsset {
			continue
		}
		a := c.Address
		expected, received := strings.ReplaceAll(a.Ticker, "/", "_"), strings.ReplaceAll(c.Ticker.Ticker, "/", "_")
		id := uuid.NewString()
		// Every field through its catalogue definition (eventtype.WrongAsset).
		f := &eventtype.WrongAsset
		fields := []payload.Field{
			f.EventType.Of(WrongAssetEvent),
			f.UUID.Of(id),
			f.AddressIn.Of(a.AddressIn),
			f.Coin.Of(received),
			f.ExpectedCoin.Of(expected),
			f.ValueCoin.Of(c.ValueCoin, c.Ticker.Decimals),
			f.TxidIn.Of(c.Payment.TxidIn),
			f.Confirmations.Of(c.Confirmations),
		}
		url, transport := a.CallbackURL, payload.TransportFor(a.Post, a.JSON)
		scheme, service := signer.SchemeRSAWebhook, ServiceLabel
		var params []payload.Param
		if a.InvoiceID != nil {
			inv, err := tx.Invoice.Get(ctx, *a.InvoiceID)
			if err != nil {
				return fmt.Errorf("invoice of %s: %w", a.AddressIn, err)
			}
			fields = append(fields, f.PaymentID.Of(inv.PublicID))
			url, transport, scheme, service = inv.NotifyURL, payload.TransportFor(inv.Post, inv.JSON), signer.SchemeWebhook, string(inv.Kind)
		} else {
			for _, cp := range a.CustomParams {
				params = append(params, payload.Param{Key: cp.Key, Value: cp.Value})
			}
		}
		req, err := payload.Encode(url, transport, fields, params)
		if err != nil {
			return fmt.Errorf("encode the wrong_asset webhook of %s: %w", a.AddressIn, err)
		}
		if _, err := r.queue.Enqueue(ctx, tx, notifier.Message{
			UUID:  id,
			Owner: a.ProjectID,
			Subject: notifier.Subject{
				Service: service, Event: WrongAssetEvent, Ref: a.AddressIn, Topic: c.Ticker.Ticker,
				Sequence: "wrong-asset:" + strconv.FormatInt(c.Payment.ID, 10), FirstOfSequence: true,
			},
			Request: req,
			Signing: notifier.Signing{Scheme: scheme, Key: project.KeyRef(a.ProjectID)},
			Payload: fields,
		}); err != nil {
			return err
		}
	}
	return nil
}
