package payout

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/project"
)

// Enqueuer stores a notification in the transaction of the change it
// reports (notifier.Queue).
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *entdb.Tx, m notifier.Message) (*entdb.Notification, error)
}

// The payout webhook's events (the x-service-event header and the
// notification's event).
const (
	EventDone  = "payout.done"
	EventError = "payout.error"
)

// notify stores p's payout webhook within tx (to the project's
// payout_notify_url if it has one, and to its event log and endpoints in
// any case): one per terminal state (done, error), signed with the
// project's IPN secret at every attempt like every merchant webhook, sent
// as a form POST or a GET (the project's choice), and retried and logged by
// the notifier. Its fields: uuid, payout_id, status, coin, the amounts,
// txid (done) or error (error), requests (a JSON object of address to
// amount) and timestamp.
func (s *Service) notify(ctx context.Context, tx *entdb.Tx, t chains.Ticker, p *entdb.Payout) error {
	if s.webhooks == nil {
		return nil
	}
	pr, err := tx.Project.Get(ctx, p.ProjectID)
	if err != nil {
		return fmt.Errorf("project of payout %d: %w", p.ID, err)
	}
	rs, err := tx.PayoutRequest.Query().Where(payoutrequest.PayoutID(p.ID)).All(ctx)
	if err != nil {
		return fmt.Errorf("payout %d requests: %w", p.ID, err)
	}
	event := EventDone
	if p.Status != entpayout.StatusDone {
		event = EventError
	}
	id := uuid.NewString()
	fields, err := webhookFields(id, t, p, rs, s.cfg.Now())
	if err != nil {
		return err
	}
	// Without a payout_notify_url the message has no destination of its
	// own: the project's endpoints and event log still get its event.
	req, err := payload.EncodeOptional(pr.PayoutNotifyURL, payload.TransportFor(pr.PayoutNotifyPost, false), fields, nil)
	if err != nil {
		return fmt.Errorf("encode the webhook of payout %d: %w", p.ID, err)
	}
	_, err = s.webhooks.Enqueue(ctx, tx, notifier.Message{
		UUID:  id,
		Owner: p.ProjectID,
		Subject: notifier.Subject{
			Service: "payout", Event: event, Ref: "payout:" + strconv.FormatInt(p.ID, 10), Topic: p.Ticker,
		},
		Request: req,
		Signing: notifier.Signing{Scheme: signer.SchemeWebhook, Key: project.KeyRef(p.ProjectID)},
		Payload: fields,
	})
	return err
}

// webhookFields are the payload of payout p's webhook id, whose requests
// are rs, at now: each field through its catalogue definition
// (eventtype.Payout).
func webhookFields(id string, t chains.Ticker, p *entdb.Payout, rs []*entdb.PayoutRequest, now time.Time) ([]payload.Field, error) {
	requests := map[string]string{}
	for _, r := range rs {
		requests[r.Address] = payload.FormatAmount(r.Value, t.Decimals)
	}
	reqJSON, err := json.Marshal(requests)
	if err != nil {
		return nil, fmt.Errorf("payout %d requests: %w", p.ID, err)
	}
	f := &eventtype.Payout
	fields := []payload.Field{
		f.UUID.Of(id),
		f.PayoutID.Of(p.ID),
		f.Status.Of(string(p.Status)),
		f.Coin.Of(p.Ticker),
		f.TotalRequested.Of(p.TotalRequested, t.Decimals),
		f.Fee.Of(p.Fee, t.Decimals),
		f.BlockchainFee.Of(p.BlockchainFee, t.Decimals),
		f.TotalWithFee.Of(p.TotalRequested.Add(p.Fee).Add(p.BlockchainFee), t.Decimals),
		f.From.Of(p.FromAddress),
		f.Requests.Of(string(reqJSON)),
	}
	if p.Txid != "" {
		fields = append(fields, f.Txid.Of(p.Txid))
	}
	if p.Error != "" {
		fields = append(fields, f.Error.Of(p.Error))
	}
	return append(fields, f.Timestamp.Of(now.Unix())), nil
}
