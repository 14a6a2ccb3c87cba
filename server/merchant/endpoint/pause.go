package endpoint

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/internal/startstop"
)

// DefaultPauseAfter is how long every attempt to an endpoint must have
// failed before its monitor pauses it.
const DefaultPauseAfter = 24 * time.Hour

// DefaultMonitorInterval is how often a Monitor looks for failing
// endpoints.
const DefaultMonitorInterval = time.Minute

// resumeBatch is how many waiting deliveries a resume moves per statement.
const resumeBatch = 500

// ErrNotPaused refuses to resume an endpoint that is not paused.
var ErrNotPaused = kind.New(kind.FailedPrecondition, "endpoint not paused", kind.Public("the endpoint is not paused"))

// PausedFunc is told, in the pausing transaction, that an endpoint was
// paused for failing (the merchant's email: mail.EndpointPaused).
type PausedFunc func(ctx context.Context, tx *entdb.Tx, e *entdb.Endpoint) error

// Pause pauses the project's endpoint id at the merchant's request: its
// deliveries wait, unattempted and with their 48-hour windows stopped,
// until Resume.
func (s *Service) Pause(ctx context.Context, projectID int64, id string) (*entdb.Endpoint, error) {
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if e.PausedAt != nil {
		return e, nil
	}
	err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		return s.pause(ctx, tx, e, entendpoint.PausedReasonMerchant)
	})
	if err != nil {
		return nil, err
	}
	s.cache.forget(projectID)
	s.observePause(entendpoint.PausedReasonMerchant)
	return s.Get(ctx, projectID, id)
}

// observePause tells the observer (metrics) of a committed pause.
func (s *Service) observePause(r entendpoint.PausedReason) {
	if s.onPause != nil {
		s.onPause(r.String())
	}
}

// PausedFailing counts the endpoints, of every project, paused because
// every attempt failed and not resumed (the operator's gauge).
func (s *Service) PausedFailing(ctx context.Context) (int, error) {
	return s.db.Endpoint.Query().
		Where(entendpoint.DeletedAtIsNil(), entendpoint.PausedAtNotNil(), entendpoint.PausedReasonEQ(entendpoint.PausedReasonFailing)).
		Count(ctx)
}

// pause marks e paused and holds its due deliveries.
func (s *Service) pause(ctx context.Context, tx *entdb.Tx, e *entdb.Endpoint, reason entendpoint.PausedReason) error {
	now := s.now()
	n, err := tx.Endpoint.Update().Where(entendpoint.ID(e.ID), entendpoint.PausedAtIsNil()).
		SetPausedAt(now).SetPausedReason(reason).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return fmt.Errorf("pause endpoint %s: %w", e.PublicID, err)
	}
	if n == 0 {
		return nil // paused meanwhile
	}
	return hold(ctx, tx, e.ID, now)
}

// hold moves endpoint id's deliveries that are due or scheduled (and not
// being attempted right now) to paused. An attempt in flight is recorded
// as usual; the monitor holds its row on its next round.
func hold(ctx context.Context, tx *entdb.Tx, id int64, now time.Time) error {
	if _, err := tx.Notification.Update().
		Where(notification.EndpointID(id),
			notification.StatusIn(notification.StatusPending, notification.StatusRetrying),
			notification.Or(notification.LeaseUntilIsNil(), notification.LeaseUntilLT(now))).
		SetStatus(notification.StatusPaused).ClearNextAttemptAt().SetUpdatedAt(now).
		Save(ctx); err != nil {
		return fmt.Errorf("hold the deliveries of endpoint %d: %w", id, err)
	}
	return nil
}

// Resume resumes the project's endpoint id: what waited is due at once,
// oldest first, and each delivery's window is extended by the time it
// waited (a delivery made while the endpoint was paused starts its 48 hours
// now). Its failing_since is cleared: the monitor judges it afresh.
func (s *Service) Resume(ctx context.Context, projectID int64, id string) (*entdb.Endpoint, error) {
	e, err := s.Get(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if e.PausedAt == nil {
		return nil, ErrNotPaused
	}
	pausedAt := *e.PausedAt
	now := s.now()
	err = store.WithTx(ctx, s.db, func(tx *entdb.Tx) error {
		n, err := tx.Endpoint.Update().Where(entendpoint.ID(e.ID), entendpoint.PausedAt(pausedAt)).
			ClearPausedAt().ClearPausedReason().ClearFailingSince().SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return fmt.Errorf("resume endpoint %s: %w", id, err)
		}
		if n == 0 {
			return ErrNotPaused // resumed meanwhile
		}
		for {
			rows, err := tx.Notification.Query().
				Where(notification.EndpointID(e.ID), notification.StatusEQ(notification.StatusPaused)).
				Order(entdb.Asc(notification.FieldID)).Limit(resumeBatch).All(ctx)
			if err != nil {
				return fmt.Errorf("read the waiting deliveries of %s: %w", id, err)
			}
			for _, r := range rows {
				from := pausedAt
				if r.CreatedAt.After(from) {
					from = r.CreatedAt
				}
				status := notification.StatusRetrying
				if r.Attempts == 0 {
					status = notification.StatusPending
				}
				if err := tx.Notification.UpdateOneID(r.ID).SetStatus(status).SetNextAttemptAt(now).
					SetExpiresAt(r.ExpiresAt.Add(now.Sub(from))).SetUpdatedAt(now).Exec(ctx); err != nil {
					return fmt.Errorf("release delivery %s: %w", r.UUID, err)
				}
			}
			if len(rows) < resumeBatch {
				return nil
			}
		}
	})
	if err != nil {
		return nil, err
	}
	s.cache.forget(projectID)
	if s.wake != nil {
		s.wake()
	}
	return s.Get(ctx, projectID, id)
}

// Monitor pauses the endpoints whose every attempt has failed for
// PauseAfter, and holds the deliveries of paused endpoints that an attempt
// in flight left due, every interval until Stop. Every instance runs one;
// their rounds overlap harmlessly (a pause is conditional on the endpoint
// being active).
type Monitor struct {
	startstop.Base
	s        *Service
	after    time.Duration
	interval time.Duration
	onPaused PausedFunc
	logger   *slog.Logger
}

// NewMonitor returns the monitor of s's endpoints: after and interval
// default to DefaultPauseAfter and DefaultMonitorInterval; onPaused, when
// not nil, is told of each endpoint it pauses.
func NewMonitor(s *Service, after, interval time.Duration, onPaused PausedFunc, logger *slog.Logger) *Monitor {
	if after <= 0 {
		after = DefaultPauseAfter
	}
	if interval <= 0 {
		interval = DefaultMonitorInterval
	}
	return &Monitor{s: s, after: after, interval: interval, onPaused: onPaused, logger: logger}
}

// Start starts the monitor; it returns at once.
func (m *Monitor) Start(ctx context.Context) error {
	run, err := m.StartInit(ctx)
	if err != nil {
		return err
	}
	m.Go(func() {
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for {
			select {
			case <-run.Done():
				return
			case <-t.C:
			}
			if n, err := m.Check(run); err != nil && run.Err() == nil {
				m.logger.Warn("endpoint monitor", "error", err)
			} else if n > 0 {
				m.logger.Warn("paused failing webhook endpoints", "count", n)
			}
		}
	})
	return nil
}

// Check makes one round: it pauses every active endpoint failing since
// PauseAfter or longer (telling onPaused) and holds paused endpoints'
// deliveries left due. It returns how many endpoints it paused.
func (m *Monitor) Check(ctx context.Context) (int, error) {
	now := m.s.now()
	failing, err := m.s.db.Endpoint.Query().
		Where(entendpoint.DeletedAtIsNil(), entendpoint.PausedAtIsNil(), entendpoint.FailingSinceLTE(now.Add(-m.after))).
		All(ctx)
	if err != nil {
		return 0, fmt.Errorf("find failing endpoints: %w", err)
	}
	paused := 0
	for _, e := range failing {
		err := store.WithTx(ctx, m.s.db, func(tx *entdb.Tx) error {
			if err := m.s.pause(ctx, tx, e, entendpoint.PausedReasonFailing); err != nil {
				return err
			}
			if m.onPaused != nil {
				return m.onPaused(ctx, tx, e)
			}
			return nil
		})
		if err != nil {
			return paused, err
		}
		m.s.cache.forget(e.ProjectID)
		paused++
		m.s.observePause(entendpoint.PausedReasonFailing)
		m.logger.Warn("webhook endpoint paused: every attempt failed", "event", "endpoint.paused", "project", e.ProjectID, "endpoint", e.PublicID,
			"failing_since", e.FailingSince, "url", e.URL)
	}
	ids, err := m.s.db.Endpoint.Query().Where(entendpoint.PausedAtNotNil()).IDs(ctx)
	if err != nil {
		return paused, fmt.Errorf("find paused endpoints: %w", err)
	}
	for _, id := range ids {
		if err := store.WithTx(ctx, m.s.db, func(tx *entdb.Tx) error { return hold(ctx, tx, id, now) }); err != nil {
			return paused, err
		}
	}
	return paused, nil
}
