package server

import (
	"context"
	"strconv"
	"time"

	"github.com/payhook/payhook/server/ratelimit"
)

// buildLimiter builds the request limits and quotas (server/ratelimit) of
// Config.Limits, reading clients' addresses through the trusted proxies.
func (s *Server) buildLimiter() (*ratelimit.Limiter, error) {
	proxies, err := s.cfg.API.trustedProxies()
	if err != nil {
		return nil, err
	}
	return ratelimit.New(s.db, ratelimit.Config{Limits: s.cfg.Limits, TrustedProxies: proxies, Now: s.cfg.Now}, s.logger)
}

// endpointThrottle holds webhook endpoints to their max_per_second: each
// endpoint's bucket (key endpoint:<id>) holds a second's worth of starts.
type endpointThrottle struct{ b *ratelimit.Buckets }

func (t endpointThrottle) TakeUpTo(ctx context.Context, id int64, perSecond, n int) (int, time.Duration, error) {
	return t.b.TakeUpTo(ctx, "endpoint:"+strconv.FormatInt(id, 10), ratelimit.Limit{Rate: float64(perSecond), Burst: perSecond}, n)
}
