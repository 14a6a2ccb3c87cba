package payout

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"github.com/payhook/payhook/chains"
	entdb "github.com/payhook/payhook/ent/db"
	entpayout "github.com/payhook/payhook/ent/db/payout"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
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

// notify stores p's payout webhook within tx when its project has a
// payout_notify_url: one per terminal state (done, error), signed with the
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
	if pr.PayoutNotifyURL == "" {
		return nil
	}
	rs, err := tx.PayoutRequest.Query().Where(payoutrequest.PayoutID(p.ID)).All(ctx)
	if err != nil {
		return fmt.Errorf("payout %d requests: %w", p.ID, err)
	}
	requests := map[string]string{}
	for _, r := range rs {
		requests[r.Address] = payload.FormatAmount(r.Value, t.Decimals)
	}
	reqJSON, err := json.Marshal(requests)
	if err != nil {
		return fmt.Errorf("payout %d requests: %w", p.ID, err)
	}
	event := EventDone
	if p.Status != entpayout.StatusDone {
		event = EventError
	}
	id := uuid.NewString()
	fields := []payload.Field{
		payload.String("uuid", id),
		payload.Int("payout_id", p.ID),
		payload.String("status", string(p.Status)),
		payload.String("coin", p.Ticker),
		payload.String("total_requested", payload.FormatAmount(p.TotalRequested, t.Decimals)),
		payload.String("fee", payload.FormatAmount(p.Fee, t.Decimals)),
		payload.String("blockchain_fee", payload.FormatAmount(p.BlockchainFee, t.Decimals)),
		payload.String("total_with_fee", payload.FormatAmount(p.TotalRequested.Add(p.Fee).Add(p.BlockchainFee), t.Decimals)),
		payload.String("from", p.FromAddress),
		payload.String("requests", string(reqJSON)),
	}
	if p.Txid != "" {
		fields = append(fields, payload.String("txid", p.Txid))
	}
	if p.Error != "" {
		fields = append(fields, payload.String("error", p.Error))
	}
	fields = append(fields, payload.Int("timestamp", s.cfg.Now().Unix()))
	req, err := payload.Encode(pr.PayoutNotifyURL, payload.TransportFor(pr.PayoutNotifyPost, false), fields, nil)
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
	})
	return err
}
