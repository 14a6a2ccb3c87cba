package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/payhook/payhook/server/interceptor"
)

// What the operator alone sees over HTTP: /healthz's details (every chain's
// node URL, head and last error) and /metrics. On the public listener they
// need an operator's API key; the operator listener (--operator-listen)
// serves them without one, for monitoring on a private network.

// requestKey is the API key a request carries: the apikey header (where
// the query's apikey parameter is moved on the public listener), or an
// Authorization: Bearer credential (what Prometheus's scrape configuration
// sends with `authorization: credentials:`).
func requestKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get(interceptor.APIKeyMetadata)); k != "" {
		return k
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(cred)
	}
	return ""
}

// access is what a request may see of the operator's resources.
type access int

const (
	// accessAnonymous: the request carries no key.
	accessAnonymous access = iota
	// accessOperator: an operator's key, or the operator listener.
	accessOperator
	// accessRefused: a key that is unknown, revoked or a merchant's (or
	// one that cannot be checked now); the request was answered.
	accessRefused
)

// operatorGate checks operator keys on the public listener, as the gRPC
// interceptor does for the operator API: looked up on every request, so a
// revoked key is refused from its next request on.
type operatorGate struct {
	keys interceptor.KeyResolver
	// open grants every request operator access: the operator listener.
	open bool
}

// check returns what r may see; for accessRefused it has answered r (401,
// 403 or 503, naming what is wrong). what names the resource in messages.
func (g operatorGate) check(w http.ResponseWriter, r *http.Request, what string) access {
	if g.open {
		return accessOperator
	}
	raw := requestKey(r)
	if raw == "" {
		return accessAnonymous
	}
	key, err := g.keys.ResolveAPIKey(r.Context(), raw)
	switch {
	case errors.Is(err, interceptor.ErrUnknownKey):
		unauthorized(w, "unknown api key")
		return accessRefused
	case err != nil:
		writeHealth(w, http.StatusServiceUnavailable, healthBody{Status: "error", Error: "the api key cannot be checked now (database unavailable); the operator listener (--operator-listen) needs none"})
		return accessRefused
	case !key.Operator:
		writeHealth(w, http.StatusForbidden, healthBody{Status: "error", Error: what + " needs an operator's key (payhook apikey create --operator)"})
		return accessRefused
	}
	return accessOperator
}

// unauthorized answers 401 with the family's error body and the Bearer
// challenge (RFC 6750).
func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="payhook"`)
	writeHealth(w, http.StatusUnauthorized, healthBody{Status: "error", Error: msg})
}

// metricsHandler serves h (the Prometheus exposition) to an operator only:
// without a key it is a 401.
func metricsHandler(g operatorGate, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch g.check(w, r, "/metrics") {
		case accessOperator:
			h.ServeHTTP(w, r)
		case accessAnonymous:
			unauthorized(w, "missing api key: /metrics needs an operator's key in the apikey header or as Authorization: Bearer (or scrape the --operator-listen address)")
		case accessRefused:
		}
	})
}

// healthHandler answers /healthz: 200 {"status":"success","health":"serving"}
// while the server serves, 503 {"status":"error","error":"not serving"}
// otherwise, to anyone. With operator access the answer adds every chain's
// status (chainStatus: node URLs without credentials, heads, last errors);
// an anonymous answer names no host and repeats no error text.
func healthHandler(c healthpb.HealthClient, chainStatus func(context.Context) map[string]ChainStatus, degraded func() string, g operatorGate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := g.check(w, r, "/healthz's details")
		if a == accessRefused {
			return
		}
		resp, err := c.Check(r.Context(), &healthpb.HealthCheckRequest{})
		code, body := http.StatusOK, healthBody{Status: "success", Health: "serving"}
		var reason string
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			code, body = http.StatusServiceUnavailable, healthBody{Status: "error", Error: "not serving"}
		} else if reason = degraded(); reason != "" {
			// Degraded still serves (200): every instance shares the cause
			// (stale prices), so routing elsewhere would not help. Anyone
			// sees that it is degraded; the operator sees why.
			body.Health = "degraded"
		}
		if a != accessOperator {
			writeHealth(w, code, body)
			return
		}
		// One ticker's node being down does not make the server unhealthy:
		// every other ticker is still served. Its entry says so.
		chs := chainStatus(r.Context())
		if chs == nil {
			chs = map[string]ChainStatus{}
		}
		writeHealth(w, code, healthDetails{healthBody: body, Reason: reason, Chains: chs})
	})
}
