package endpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	entevent "github.com/payhook/payhook/ent/db/event"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/merchant/eventtype"
)

// Enqueuer stores a notification in the transaction of the change it
// reports, and runs a hook before a transaction's notifications are stored
// (notifier.Queue).
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *entdb.Tx, m notifier.Message) (*entdb.Notification, error)
	BeforeStore(tx *entdb.Tx, fn func(ctx context.Context, tx *entdb.Tx) error)
}

// Event is a merchant event to publish: what happened, to which project.
type Event struct {
	// Project owns it.
	Project int64
	// UUID identifies it (the payload's uuid).
	UUID string
	// Type is its event type (checkout.payment.confirmed, ...).
	Type string
	// Service, Ref, Topic and Sequence label its deliveries as the
	// notify_url's are labelled (notifier.Subject).
	Service, Ref, Topic, Sequence string
	// Fields are its payload, as the notify_url's JSON POST carries it.
	Fields []payload.Field
}

// KeyRef is the signing key reference of endpoint id's deliveries (Ring
// reads it).
func KeyRef(id int64) string { return "endpoint:" + strconv.FormatInt(id, 10) }

// ParseKeyRef reads a KeyRef.
func ParseKeyRef(ref string) (int64, error) {
	s, ok := strings.CutPrefix(ref, "endpoint:")
	id, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not an endpoint key reference", ref)
	}
	return id, nil
}

// Fanout is the Enqueuer the merchant event builders write to: it stores
// each message as it is (the notify_url's delivery) and publishes each
// merchant event (an HMAC-signed message with its payload's fields) to
// the project's event log and endpoints, in the same transaction.
// Low-level callbacks (RSA) pass through untouched.
type Fanout struct {
	// Queue stores the messages.
	Queue Enqueuer
	// Endpoints publishes the events.
	Endpoints *Service
}

// Enqueue implements the builders' Enqueuer.
func (f Fanout) Enqueue(ctx context.Context, tx *entdb.Tx, m notifier.Message) (*entdb.Notification, error) {
	event := m.Signing.Scheme == signer.SchemeWebhook && m.Payload != nil && m.EndpointID == 0
	var row *entdb.Notification
	switch {
	case m.Request.URL != "":
		var err error
		if row, err = f.Queue.Enqueue(ctx, tx, m); err != nil {
			return nil, err
		}
	case !event:
		return nil, fmt.Errorf("message %s %s has no URL", m.Subject.Service, m.Subject.Event)
	}
	// A merchant event without a notify URL of its own (no row) still
	// reaches the event log and the endpoints.
	if !event {
		return row, nil
	}
	if err := f.Endpoints.Publish(ctx, tx, f.Queue, Event{
		Project: m.Owner, UUID: m.UUID, Type: m.Subject.Event,
		Service: m.Subject.Service, Ref: m.Subject.Ref, Topic: m.Subject.Topic, Sequence: m.Subject.Sequence,
		Fields: m.Payload,
	}); err != nil {
		return nil, err
	}
	return row, nil
}

// Envelope is the body of an endpoint's delivery: the Standard Webhooks
// payload shape, the event's type and time around its payload (the fields
// a JSON notify_url receives, unchanged).
type Envelope struct {
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Publish records ev in the project's event log and stores one delivery
// of it to each of the project's live endpoints whose filter matches, all
// in tx: a paused endpoint's delivery is stored paused. The events of a
// transaction are written together when it commits (one statement, before
// its notifications: q.BeforeStore), so a block of payments costs one
// insert, not one per event.
func (s *Service) Publish(ctx context.Context, tx *entdb.Tx, q Enqueuer, ev Event) error {
	data, err := payload.JSON(ev.Fields)
	if err != nil {
		return fmt.Errorf("event %s: %w", ev.Type, err)
	}
	now := s.now()
	body := envelope(ev.Type, now, data)
	p, loaded := s.pending.LoadOrStore(tx, &pendingEvents{})
	pe := p.(*pendingEvents)
	pe.evs = append(pe.evs, pendingEvent{ev: ev, body: body, at: now})
	if !loaded {
		tx.OnRollback(func(next entdb.Rollbacker) entdb.Rollbacker {
			return entdb.RollbackFunc(func(ctx context.Context, tx *entdb.Tx) error {
				s.pending.Delete(tx)
				return next.Rollback(ctx, tx)
			})
		})
		q.BeforeStore(tx, func(ctx context.Context, tx *entdb.Tx) error {
			s.pending.Delete(tx)
			return s.flush(ctx, tx, q, pe.evs)
		})
	}
	return nil
}

// pendingEvents are the events a transaction published, written when it
// commits.
type pendingEvents struct{ evs []pendingEvent }

type pendingEvent struct {
	ev   Event
	body []byte
	at   time.Time
}

var eventColumns = []store.Column{
	{Name: entevent.FieldCreatedAt, PGType: "timestamptz"}, {Name: entevent.FieldProjectID, PGType: "bigint"},
	{Name: entevent.FieldUUID, PGType: "text"}, {Name: entevent.FieldType, PGType: "text"},
	{Name: entevent.FieldRef, PGType: "text"}, {Name: entevent.FieldPayload, PGType: "bytea"},
}

// flush writes a transaction's events in one statement, then stores their
// deliveries to the endpoints that want them.
func (s *Service) flush(ctx context.Context, tx *entdb.Tx, q Enqueuer, evs []pendingEvent) error {
	vals := make([][]any, len(evs))
	for i, e := range evs {
		vals[i] = []any{e.at, e.ev.Project, e.ev.UUID, e.ev.Type, e.ev.Ref, e.body}
	}
	ids, err := store.InsertRows(ctx, tx, s.dialect, entevent.Table, eventColumns, vals, "", true)
	if err != nil {
		return fmt.Errorf("record %d events: %w", len(evs), err)
	}
	for i, e := range evs {
		eps, err := s.cache.get(ctx, s.db, e.ev.Project)
		if err != nil {
			return err
		}
		row := &entdb.Event{ID: ids[i], Type: e.ev.Type, Payload: e.body}
		for _, ep := range eps {
			if !Wants(ep, e.ev.Type) {
				continue
			}
			if err := s.deliver(ctx, tx, q, ep, row, e.ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// envelope is the body of an endpoint's delivery (Envelope), written
// without reflection: {"type":..,"timestamp":..,"data":..}.
func envelope(typ string, at time.Time, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(typ)+64)
	b = append(b, `{"type":`...)
	b = payload.AppendJSONString(b, typ)
	b = append(b, `,"timestamp":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// deliver stores one delivery of event row to endpoint e.
func (s *Service) deliver(ctx context.Context, tx *entdb.Tx, q Enqueuer, e *entdb.Endpoint, row *entdb.Event, ev Event) error {
	subject := notifier.Subject{Service: ev.Service, Event: row.Type, Ref: ev.Ref, Topic: ev.Topic}
	if ev.Sequence != "" {
		// Each endpoint's deliveries of a payment keep their order, apart
		// from the notify_url's.
		subject.Sequence = ev.Sequence + "@" + e.PublicID
	}
	if _, err := q.Enqueue(ctx, tx, delivery(e, subject, row.Payload, row.ID)); err != nil {
		return fmt.Errorf("deliver event %s to endpoint %s: %w", row.Type, e.PublicID, err)
	}
	return nil
}

// delivery is the message that delivers body (an event's envelope) to
// endpoint e: a JSON POST signed with the endpoint's secret, stored paused
// while the endpoint is; eventID is the event's row (0 for a test).
func delivery(e *entdb.Endpoint, subject notifier.Subject, body []byte, eventID int64) notifier.Message {
	return notifier.Message{
		UUID:       uuid.NewString(),
		Owner:      e.ProjectID,
		Subject:    subject,
		Request:    payload.Request{Method: "POST", URL: e.URL, ContentType: payload.ContentTypeJSON, Body: body},
		Signing:    notifier.Signing{Scheme: signer.SchemeStandardWebhooks, Key: KeyRef(e.ID)},
		EndpointID: e.ID, EventID: eventID, Paused: e.PausedAt != nil,
	}
}

// TestEvent is the event type of a test delivery (the same as the
// notify_url's test webhook).
const TestEvent = "test.webhook"

// Test stores a test.webhook delivery to the project's endpoint id,
// whatever its filter, and returns its uuid. It is not recorded in the
// event log (it reports nothing that happened); it takes one of the
// project's test events (TestQuota).
func (s *Service) Test(ctx context.Context, projectID int64, id string) (string, error) {
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return "", err
	}
	if s.quota != nil {
		if err := s.quota.TestEvent(ctx, projectID); err != nil {
			return "", err
		}
	}
	now := s.now()
	evID := uuid.NewString()
	f := &eventtype.Test
	data, err := payload.JSON([]payload.Field{
		f.EventType.Of(TestEvent), f.UUID.Of(evID), f.ProjectID.Of(projectID), f.CreatedAt.Of(now.Unix()), f.EndpointID.Of(e.PublicID),
	})
	if err != nil {
		return "", err
	}
	body := envelope(TestEvent, now, data)
	m := delivery(e, notifier.Subject{Service: "endpoint", Event: TestEvent, Ref: e.PublicID}, body, 0)
	err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		_, err := s.queue.Enqueue(ctx, tx, m)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store the test delivery to %s: %w", e.PublicID, err)
	}
	return evID, nil
}

// endpointCache keeps each project's live endpoints for ttl, so that
// publishing an event costs no query on a busy project.
type endpointCache struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[int64]cachedEndpoints
}

type cachedEndpoints struct {
	eps   []*entdb.Endpoint
	until time.Time
}

func (c *endpointCache) get(ctx context.Context, db *entdb.Client, project int64) ([]*entdb.Endpoint, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[project]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.eps, nil
	}
	eps, err := db.Endpoint.Query().
		Where(entendpoint.ProjectID(project), entendpoint.DeletedAtIsNil()).
		Order(entdb.Asc(entendpoint.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the endpoints of project %d: %w", project, err)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[int64]cachedEndpoints{}
	}
	c.m[project] = cachedEndpoints{eps: eps, until: now.Add(c.ttl)}
	c.mu.Unlock()
	return eps, nil
}

func (c *endpointCache) forget(project int64) {
	c.mu.Lock()
	delete(c.m, project)
	c.mu.Unlock()
}

// Ring is the endpoints' secret ring (signer.SecretRing) for KeyRef keys:
// an endpoint's current secret and, during a rotation's grace, the one it
// replaced. A deleted endpoint's deliveries still sign. What it read is
// kept for its TTL (one read a second per busy endpoint, not one per
// attempt); a rotation signs the attempts that start after that.
type Ring struct {
	db  *entdb.Client
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[int64]ringEntry
}

type ringEntry struct {
	e     *entdb.Endpoint
	until time.Time
}

var _ signer.SecretRing = (*Ring)(nil)

// NewRing returns the ring of db's endpoints, keeping what it reads for ttl.
func NewRing(db *entdb.Client, ttl time.Duration, now func() time.Time) *Ring {
	return &Ring{db: db, ttl: ttl, now: now}
}

// Secrets implements signer.SecretRing.
func (r *Ring) Secrets(ctx context.Context, key string, at time.Time) ([]string, error) {
	id, err := ParseKeyRef(key)
	if err != nil {
		return nil, err
	}
	now := r.now()
	r.mu.Lock()
	c, ok := r.m[id]
	r.mu.Unlock()
	if !ok || !now.Before(c.until) {
		e, err := r.db.Endpoint.Get(ctx, id)
		if entdb.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read endpoint %d's secrets: %w", id, err)
		}
		c = ringEntry{e: e, until: now.Add(r.ttl)}
		r.mu.Lock()
		if r.m == nil {
			r.m = map[int64]ringEntry{}
		}
		r.m[id] = c
		r.mu.Unlock()
	}
	out := []string{c.e.Secret}
	if c.e.PreviousSecret != "" && c.e.PreviousSecretUntil != nil && at.Before(*c.e.PreviousSecretUntil) {
		out = append(out, c.e.PreviousSecret)
	}
	return out, nil
}
