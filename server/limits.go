package server

import (
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
