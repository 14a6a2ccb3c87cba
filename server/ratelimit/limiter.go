package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"sync"
	"time"

	entproject "github.com/payhook/payhook/ent/db/project"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
)

// Config configures a Limiter.
type Config struct {
	// Limits are the operator's settings; the zero ones take their
	// defaults.
	Limits Limits
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client (--trusted-proxy); without them the peer is the client.
	TrustedProxies []netip.Prefix
	// Now is the clock of the buckets; clock.Now when nil.
	Now func() time.Time
}

// ProjectTTL is how long a project's own limit (rate_limit, rate_burst) is
// kept before it is read again: a change takes effect within it.
const ProjectTTL = 10 * time.Second

// maxProjects bounds the projects whose limits are kept.
const maxProjects = 10000

// Limiter applies the limits: to gRPC calls (Unary, Stream), to the hosted
// pages (HTTP), and to test webhooks (TestEvent).
type Limiter struct {
	cfg     Config
	limits  Limits
	db      *store.DB
	buckets *Buckets
	logger  *slog.Logger
	// token marks the calls of the server's own client connection (REST
	// and browser calls forwarded to gRPC), whose client network the HTTP
	// side found: a call without it is a direct gRPC client's.
	token string

	mu       sync.Mutex
	projects map[int64]projectLimit
}

// projectLimit is a project's own limit as read at.
type projectLimit struct {
	rate  float64
	burst int
	at    time.Time
}

// New returns the limiter of db.
func New(db *store.DB, cfg Config, logger *slog.Logger) (*Limiter, error) {
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	limits := cfg.Limits.WithDefaults()
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("rate limiter: %w", err)
	}
	return &Limiter{
		cfg: cfg, limits: limits, db: db, logger: logger, token: hex.EncodeToString(b[:]),
		buckets:  NewBuckets(db, cfg.Now, logger),
		projects: map[int64]projectLimit{},
	}, nil
}

// Limits are the limits in force (defaults filled in).
func (l *Limiter) Limits() Limits { return l.limits }

// keyLimit is the limit of the keys of project id: the project's own
// rate_limit and rate_burst where set (a negative rate_limit: none), the
// server's otherwise.
func (l *Limiter) keyLimit(ctx context.Context, projectID int64) (Limit, error) {
	p, err := l.project(ctx, projectID)
	if err != nil {
		return Limit{}, err
	}
	lim := l.limits.Key()
	switch {
	case p.rate < 0:
		return Limit{}, nil
	case p.rate > 0:
		lim.Rate = p.rate
	}
	if p.burst > 0 {
		lim.Burst = p.burst
	}
	return lim, nil
}

// project returns project id's own limit, read at most every ProjectTTL.
func (l *Limiter) project(ctx context.Context, id int64) (projectLimit, error) {
	now := l.cfg.Now()
	l.mu.Lock()
	p, ok := l.projects[id]
	l.mu.Unlock()
	if ok && now.Sub(p.at) < ProjectTTL && !now.Before(p.at) {
		return p, nil
	}
	row, err := l.db.Client.Project.Query().Where(entproject.ID(id)).
		Select(entproject.FieldRateLimit, entproject.FieldRateBurst).Only(ctx)
	if err != nil {
		return projectLimit{}, fmt.Errorf("read the rate limit of project %d: %w", id, err)
	}
	p = projectLimit{rate: row.RateLimit, burst: row.RateBurst, at: now}
	l.mu.Lock()
	if len(l.projects) >= maxProjects {
		clear(l.projects)
	}
	l.projects[id] = p
	l.mu.Unlock()
	return p, nil
}

// Key takes a token of API key keyID's bucket (of project projectID). It
// returns the result (On false when no limit applies) and a *Denied when
// the key must wait.
func (l *Limiter) Key(ctx context.Context, keyID, projectID int64) (Result, bool, error) {
	lim, err := l.keyLimit(ctx, projectID)
	if err != nil || !lim.On() {
		return Result{}, false, err
	}
	r, err := l.buckets.Take(ctx, "key:"+strconv.FormatInt(keyID, 10), lim)
	if err != nil {
		return Result{}, false, err
	}
	if !r.Allowed {
		return r, true, keyDenied(r, lim.normal())
	}
	return r, true, nil
}

// Network takes a token of client network n's bucket. It returns the
// result (On false when no limit applies) and a *Denied when the network
// must wait.
func (l *Limiter) Network(ctx context.Context, n netip.Prefix) (Result, bool, error) {
	lim := l.limits.Anon()
	if !lim.On() {
		return Result{}, false, nil
	}
	r, err := l.buckets.Take(ctx, "net:"+n.String(), lim)
	if err != nil {
		return Result{}, false, err
	}
	if !r.Allowed {
		return r, true, networkDenied(r)
	}
	return r, true, nil
}

// TestEvent takes one of project projectID's test webhooks of the day
// (Limits.TestEvents): nil when it may send one, a *Denied when its quota
// is used up.
func (l *Limiter) TestEvent(ctx context.Context, projectID int64) error {
	lim := l.limits.Tests()
	r, err := l.buckets.Take(ctx, "test:"+strconv.FormatInt(projectID, 10), lim)
	if err != nil {
		return err
	}
	if !r.Allowed {
		return testDenied(r, lim.Burst)
	}
	return nil
}

// internal reports whether token is the limiter's own.
func (l *Limiter) internal(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(l.token)) == 1
}
