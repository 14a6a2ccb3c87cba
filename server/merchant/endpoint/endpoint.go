// Package endpoint keeps a project's webhook endpoints: destinations beside
// the per-payment notify_url that receive every merchant event whose type
// matches their filter, each signed with the endpoint's own secret under
// the Standard Webhooks headers (signer.SchemeStandardWebhooks), each
// delivery with its own schedule and log (a notification of the
// notifier). It records every merchant event of a project in the event log
// (events) that GET /events/ pages through and that replays send again.
//
// Filters: an endpoint lists event types or patterns. A pattern is split at
// dots; "*" as a segment matches exactly one segment, except as the last
// segment, where it matches one or more ("checkout.*" matches
// checkout.payment.confirmed; "*.payment.completed" matches every
// service's completed payments; "*" matches everything).
package endpoint

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/notifier/egress"
	"github.com/payhook/payhook/notifier/signer"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/merchant/invoice"
)

// Limits of an endpoint's fields.
const (
	// MaxPerProject is the most live endpoints a project may have.
	MaxPerProject = 50
	// MaxEventTypes is the most entries of an endpoint's filter.
	MaxEventTypes = 50
	// MaxDescription is the longest description, in characters.
	MaxDescription = 500
	// MaxPerSecondLimit is the highest max_per_second an endpoint may set.
	MaxPerSecondLimit = 1000
	// DefaultGrace is how long a rotated-out secret keeps signing.
	DefaultGrace = 24 * time.Hour
	// IDPrefix starts every endpoint's public id.
	IDPrefix = "ep_"
)

// ErrNotFound reports an endpoint the project does not have (another
// project's is not found either).
var ErrNotFound = kind.New(kind.NotFound, "endpoint not found",
	kind.Public("no endpoint of this project has that endpoint_id"))

// Spec is what a merchant sets on an endpoint.
type Spec struct {
	// URL is where its deliveries go.
	URL string
	// EventTypes is its filter (at least one entry).
	EventTypes []string
	// Description is a note for people.
	Description string
	// MaxPerSecond bounds its deliveries a second; 0 is no limit.
	MaxPerSecond int
}

// Update is a change of an endpoint: nil fields are left as they are.
type Update struct {
	URL          *string
	EventTypes   []string // nil leaves the filter; non-nil replaces it
	Description  *string
	MaxPerSecond *int
}

// Service creates, changes and lists endpoints, and publishes events to
// them (Publish).
type Service struct {
	db    *entdb.Client
	rules *egress.Rules
	now   func() time.Time
	// known are the event types payhook sends (the event catalogue); nil
	// accepts any well-formed entry.
	known []string
	cache endpointCache
	queue Enqueuer
	quota TestQuota
	wake  func()
	// rateChanged tells the dispatcher an endpoint's max_per_second
	// changed.
	rateChanged func(id int64)
	// onPause is told of each committed pause, by reason.
	onPause func(reason string)
	// dialect writes the event log in bulk; pending holds each open
	// transaction's published events (*pendingEvents).
	dialect store.Dialect
	pending sync.Map
}

// TestQuota bounds a project's test events (ratelimit.Limiter.TestEvent).
type TestQuota interface {
	TestEvent(ctx context.Context, projectID int64) error
}

// Config configures a Service.
type Config struct {
	// DB is the database, of Dialect.
	DB      *entdb.Client
	Dialect store.Dialect
	// Rules check endpoint URLs as every webhook URL is checked (public
	// HTTP(S), or the operator's exception for the project).
	Rules *egress.Rules
	// Now is the clock.
	Now func() time.Time
	// KnownTypes lists the event types payhook sends: a filter entry that
	// matches none of them is refused (a typo would otherwise receive
	// nothing, silently). Nil accepts any well-formed entry.
	KnownTypes []string
	// Queue stores deliveries (TestEndpoint's; Publish takes the caller's).
	Queue Enqueuer
	// Wake, when not nil, tells the dispatcher that deliveries are due
	// (after a resume).
	Wake func()
	// RateChanged, when not nil, is told that an endpoint's max_per_second
	// changed (the dispatcher forgets the rate it read).
	RateChanged func(id int64)
	// Paused, when not nil, is told of each pause once committed, by
	// reason (failing, merchant): the operator's metrics.
	Paused func(reason string)
	// CacheTTL is how long a project's endpoints are kept in memory for
	// Publish (DefaultCacheTTL when 0); changes made through this Service
	// are seen at once on this instance.
	CacheTTL time.Duration
}

// DefaultCacheTTL is how long Publish keeps a project's endpoints: other
// instances see a change within it.
const DefaultCacheTTL = time.Second

// New returns the service.
func New(cfg Config) *Service {
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	s := &Service{db: cfg.DB, rules: cfg.Rules, now: cfg.Now, cache: endpointCache{ttl: cfg.CacheTTL, now: cfg.Now},
		queue: cfg.Queue, wake: cfg.Wake, rateChanged: cfg.RateChanged, onPause: cfg.Paused, dialect: cfg.Dialect}
	s.known = slices.Clone(cfg.KnownTypes)
	return s
}

// SetQuota sets the bound of test events (the request limiter, which the
// server builds after the service); without one they are unbounded.
func (s *Service) SetQuota(q TestQuota) { s.quota = q }

// Create adds an endpoint to project projectID and returns it with its
// signing secret (shown this once by the API; it stays readable by the
// owner through the secret's rotation only).
func (s *Service) Create(ctx context.Context, projectID int64, spec Spec) (*entdb.Endpoint, error) {
	u, err := invoice.CheckNotifyURL(s.rules, projectID, "url", spec.URL)
	if err != nil {
		return nil, err
	}
	types, err := s.checkTypes(spec.EventTypes)
	if err != nil {
		return nil, err
	}
	if err := checkDescription(spec.Description); err != nil {
		return nil, err
	}
	if err := checkRate(spec.MaxPerSecond); err != nil {
		return nil, err
	}
	secret, err := signer.GenerateSecret()
	if err != nil {
		return nil, err
	}
	id, err := publicID()
	if err != nil {
		return nil, err
	}
	now := s.now()
	var e *entdb.Endpoint
	err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		n, err := tx.Endpoint.Query().Where(entendpoint.ProjectID(projectID), entendpoint.DeletedAtIsNil()).Count(ctx)
		if err != nil {
			return fmt.Errorf("count the project's endpoints: %w", err)
		}
		if n >= MaxPerProject {
			return kind.New(kind.FailedPrecondition, "too many endpoints",
				kind.Public(fmt.Sprintf("the project has %d endpoints, the most it may have: delete one first", n)))
		}
		e, err = tx.Endpoint.Create().SetProjectID(projectID).SetPublicID(id).SetURL(u).
			SetEventTypes(types).SetDescription(spec.Description).SetMaxPerSecond(spec.MaxPerSecond).
			SetSecret(secret).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.cache.forget(projectID)
	return e, nil
}

// Get returns the project's live endpoint id.
func (s *Service) Get(ctx context.Context, projectID int64, id string) (*entdb.Endpoint, error) {
	e, err := s.db.Endpoint.Query().
		Where(entendpoint.PublicID(id), entendpoint.ProjectID(projectID), entendpoint.DeletedAtIsNil()).
		Only(ctx)
	if entdb.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read endpoint %q: %w", id, err)
	}
	return e, nil
}

// List returns the project's live endpoints, oldest first.
func (s *Service) List(ctx context.Context, projectID int64) ([]*entdb.Endpoint, error) {
	es, err := s.db.Endpoint.Query().
		Where(entendpoint.ProjectID(projectID), entendpoint.DeletedAtIsNil()).
		Order(entdb.Asc(entendpoint.FieldID)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the project's endpoints: %w", err)
	}
	return es, nil
}

// Update changes the project's endpoint id.
func (s *Service) Update(ctx context.Context, projectID int64, id string, up Update) (*entdb.Endpoint, error) {
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	m := s.db.Endpoint.UpdateOne(e).SetUpdatedAt(s.now())
	if up.URL != nil {
		u, err := invoice.CheckNotifyURL(s.rules, projectID, "url", *up.URL)
		if err != nil {
			return nil, err
		}
		m.SetURL(u)
	}
	if up.EventTypes != nil {
		types, err := s.checkTypes(up.EventTypes)
		if err != nil {
			return nil, err
		}
		m.SetEventTypes(types)
	}
	if up.Description != nil {
		if err := checkDescription(*up.Description); err != nil {
			return nil, err
		}
		m.SetDescription(*up.Description)
	}
	if up.MaxPerSecond != nil {
		if err := checkRate(*up.MaxPerSecond); err != nil {
			return nil, err
		}
		m.SetMaxPerSecond(*up.MaxPerSecond)
	}
	e, err = m.Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("update endpoint %q: %w", id, err)
	}
	s.cache.forget(projectID)
	if up.MaxPerSecond != nil && s.rateChanged != nil {
		s.rateChanged(e.ID)
	}
	return e, nil
}

// Delete deletes the project's endpoint id: it receives nothing more (its
// notifications already stored are still delivered and listed).
func (s *Service) Delete(ctx context.Context, projectID int64, id string) error {
	n, err := s.db.Endpoint.Update().
		Where(entendpoint.PublicID(id), entendpoint.ProjectID(projectID), entendpoint.DeletedAtIsNil()).
		SetDeletedAt(s.now()).Save(ctx)
	if err != nil {
		return fmt.Errorf("delete endpoint %q: %w", id, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	s.cache.forget(projectID)
	return nil
}

// RotateSecret gives the project's endpoint id a new secret and returns the
// endpoint with it; the old one also signs for grace (DefaultGrace when
// 0).
func (s *Service) RotateSecret(ctx context.Context, projectID int64, id string, grace time.Duration) (*entdb.Endpoint, error) {
	if grace < 0 {
		return nil, address.Invalid("grace", "must not be negative")
	}
	if grace == 0 {
		grace = DefaultGrace
	}
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	secret, err := signer.GenerateSecret()
	if err != nil {
		return nil, err
	}
	now := s.now()
	n, err := s.db.Endpoint.Update().
		Where(entendpoint.ID(e.ID), entendpoint.UpdatedAt(e.UpdatedAt)). // the secret is sealed at rest: compare the row's version
		SetSecret(secret).SetPreviousSecret(e.Secret).SetPreviousSecretUntil(now.Add(grace)).SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, fmt.Errorf("rotate the secret of endpoint %q: %w", id, err)
	}
	if n == 0 {
		return nil, kind.New(kind.Aborted, "the endpoint's secret changed meanwhile", kind.Public("the endpoint's secret was rotated at the same moment; try again"))
	}
	return s.Get(ctx, projectID, id)
}

// checkTypes checks a filter and returns it normalised (trimmed, without
// duplicates, in the order given).
func (s *Service) checkTypes(types []string) ([]string, error) {
	if len(types) == 0 {
		return nil, address.Invalid("event_types", `name at least one event type or pattern ("*" for every event; GET /events/types/ lists them)`)
	}
	if len(types) > MaxEventTypes {
		return nil, address.Invalid("event_types", "%d entries; at most %d", len(types), MaxEventTypes)
	}
	var out []string
	for _, t := range types {
		t = strings.TrimSpace(t)
		if err := checkPattern(t); err != nil {
			return nil, address.Invalid("event_types", "%q: %v", truncate(t), err)
		}
		if len(s.known) > 0 && !slices.ContainsFunc(s.known, func(k string) bool { return Matches(t, k) }) {
			return nil, address.Invalid("event_types", "%q matches no event type payhook sends (GET /events/types/ lists them)", truncate(t))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkPattern checks one filter entry: dot-separated segments of lowercase
// letters, digits and underscores, or "*".
func checkPattern(p string) error {
	if p == "" {
		return errors.New("empty")
	}
	if len(p) > 100 {
		return errors.New("longer than 100 characters")
	}
	for seg := range strings.SplitSeq(p, ".") {
		if seg == "*" {
			continue
		}
		if seg == "" {
			return errors.New("an empty segment (two dots, or a dot at an end)")
		}
		for _, r := range seg {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
				return fmt.Errorf("%q is not allowed: use lowercase letters, digits, _ and . with * as a whole segment", r)
			}
		}
	}
	return nil
}

// Matches tells whether event type t matches filter entry p (see the
// package's doc).
func Matches(p, t string) bool {
	ps, ts := strings.Split(p, "."), strings.Split(t, ".")
	for i, seg := range ps {
		if i >= len(ts) {
			return false
		}
		if seg == "*" {
			if i == len(ps)-1 {
				return true // the last * takes the rest (one or more)
			}
			continue
		}
		if seg != ts[i] {
			return false
		}
	}
	return len(ps) == len(ts)
}

// Wants tells whether endpoint e receives events of type t.
func Wants(e *entdb.Endpoint, t string) bool {
	return slices.ContainsFunc(e.EventTypes, func(p string) bool { return Matches(p, t) })
}

func checkDescription(d string) error {
	if !utf8.ValidString(d) {
		return address.Invalid("description", "is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(d); n > MaxDescription {
		return address.Invalid("description", "is %d characters; at most %d", n, MaxDescription)
	}
	return nil
}

func checkRate(n int) error {
	if n < 0 || n > MaxPerSecondLimit {
		return address.Invalid("max_per_second", "must be 0 (no limit) to %d", MaxPerSecondLimit)
	}
	return nil
}

// publicID returns a new endpoint id: IDPrefix and 26 random base32
// characters.
func publicID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("endpoint id: %w", err)
	}
	return IDPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)), nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
