// Package notification is the merchant interface's view of a project's
// webhooks: test sends, listings and manual resends, each scoped to the
// project that owns the notifications.
package notification

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestEvent is the event type of a test webhook.
const TestEvent = "test.webhook"

// Service sends test webhooks, lists and resends a project's
// notifications.
type Service struct {
	db    *entdb.Client
	queue *notifier.Queue
	rules *egress.Rules
	now   func() time.Time
	quota TestQuota
}

// TestQuota bounds a project's test webhooks (ratelimit.Limiter.TestEvent):
// TestEvent takes one of the project's and returns the error to answer
// when none is left.
type TestQuota interface {
	TestEvent(ctx context.Context, projectID int64) error
}

// New returns the service; quota, when not nil, bounds test webhooks.
func New(db *entdb.Client, queue *notifier.Queue, rules *egress.Rules, now func() time.Time, quota TestQuota) *Service {
	return &Service{db: db, queue: queue, rules: rules, now: now, quota: quota}
}

// Test stores a test.webhook event for url (JSON POST, signed like the
// project's webhooks) and returns its uuid; it is delivered, retried and
// listed like any other notification. Each takes one of the project's
// quota (TestQuota), once the URL is accepted.
func (s *Service) Test(ctx context.Context, projectID int64, rawURL string) (string, error) {
	u, err := invoice.CheckNotifyURL(s.rules, projectID, "url", rawURL)
	if err != nil {
		return "", err
	}
	if s.quota != nil {
		if err := s.quota.TestEvent(ctx, projectID); err != nil {
			return "", err
		}
	}
	id := uuid.NewString()
	req, err := payload.Encode(u, payload.TransportJSON, testFields(id, projectID, s.now()), nil)
	if err != nil {
		return "", fmt.Errorf("encode test webhook: %w", err)
	}
	m := notifier.Message{
		UUID:    id,
		Owner:   projectID,
		Subject: notifier.Subject{Service: "notification", Event: TestEvent, Ref: "test:" + strconv.FormatInt(projectID, 10)},
		Request: req,
		Signing: notifier.Signing{Scheme: signer.SchemeWebhook, Key: project.KeyRef(projectID)},
	}
	err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		_, err := s.queue.Enqueue(ctx, tx, m)
		return err
	})
	return id, err
}

// testFields are the payload of test webhook id of the project, asked
// for at, each through its catalogue definition (eventtype.Test).
func testFields(id string, projectID int64, at time.Time) []payload.Field {
	f := &eventtype.Test
	return []payload.Field{f.EventType.Of(TestEvent), f.UUID.Of(id), f.ProjectID.Of(projectID), f.CreatedAt.Of(at.Unix())}
}

// Resend schedules one more attempt of the project's notification uuid now:
// same uuid, same payload, a fresh signature. Within its window the
// schedule continues after a failure (the deadline never moves); after it,
// or when already acknowledged, it is exactly one attempt. Another
// project's uuid is notifier.ErrNotFound, as an unknown one is.
func (s *Service) Resend(ctx context.Context, projectID int64, id string) (*entdb.Notification, error) {
	if _, err := s.queue.Resend(ctx, projectID, id); err != nil {
		return nil, err
	}
	return s.queue.Get(ctx, projectID, id)
}

// List returns a page of the project's notifications, newest first.
func (s *Service) List(ctx context.Context, projectID int64, f notifier.ListFilter) ([]*entdb.Notification, string, error) {
	return s.queue.List(ctx, projectID, f)
}

// Get returns the project's notification uuid with its attempts; another
// project's uuid is notifier.ErrNotFound, as an unknown one is.
func (s *Service) Get(ctx context.Context, projectID int64, id string) (*entdb.Notification, error) {
	return s.queue.Get(ctx, projectID, id)
}

// Headers returns the headers an attempt of n made at time at sends (its
// signature computed with the project's current secret).
func (s *Service) Headers(ctx context.Context, n *entdb.Notification, at time.Time) (http.Header, error) {
	return s.queue.AttemptHeaders(ctx, n, at)
}

// SentHeaders returns the headers attempt a of n sent, and whether they
// are exactly as recorded (see notifier.Queue.SentHeaders).
func (s *Service) SentHeaders(ctx context.Context, n *entdb.Notification, a *entdb.DeliveryAttempt) (http.Header, bool, error) {
	return s.queue.SentHeaders(ctx, n, a)
}
