package metrics

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/route"
)

// RequestBuckets are the upper bounds, in seconds, of the HTTP and gRPC
// request duration histograms: from a cached 1ms answer to a 30s request;
// streams (WatchDeliveries) land in +Inf.
var RequestBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// OtherRoute is the route label of a path outside the known routes
// (scanners, typos), so no request can add a series of its own.
const OtherRoute = route.OtherLabel

// HTTPRoute returns the bounded route label of a request path, as the route
// table (server/route) derives it: "/" for the root, "/SECTION" for a
// reserved first segment, "/{ticker}/ACTION" for the per-ticker API,
// "/SERVICE" for a Connect or gRPC-Web call to a payhook service, and
// OtherRoute for anything else. Ids, keys and tickers never reach a label.
func HTTPRoute(path string) string { return route.Default().Label(path) }

type routeKey struct{}

// InstrumentHTTP wraps next so every request counts in
// payhook_http_requests_total{method,route,code} and
// payhook_http_request_duration_seconds{method,route}. route is
// HTTPRoute's label; unknown methods are "unknown" (promhttp's rule). The
// wrapper keeps http.Flusher and the other optional interfaces, so streams
// still flush.
func (m *Metrics) InstrumentHTTP(next http.Handler) http.Handler {
	label := promhttp.WithLabelFromCtx("route", func(ctx context.Context) string {
		r, _ := ctx.Value(routeKey{}).(string)
		return r
	})
	h := promhttp.InstrumentHandlerDuration(m.httpDuration,
		promhttp.InstrumentHandlerCounter(m.httpRequests, next, label), label)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, HTTPRoute(r.URL.Path))))
	})
}

// UnaryServerInterceptor counts and times unary gRPC calls in
// payhook_grpc_requests_total{method,code} and
// payhook_grpc_request_duration_seconds{method}. grpc-go runs interceptors
// only for registered methods, which bounds the method label.
func (m *Metrics) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := clock.Now()
		resp, err := handler(ctx, req)
		m.grpcDone(info.FullMethod, err, time.Since(start))
		return resp, err
	}
}

// StreamServerInterceptor is UnaryServerInterceptor for streams: a stream
// counts once, when it ends, with its whole duration.
func (m *Metrics) StreamServerInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := clock.Now()
		err := handler(srv, ss)
		m.grpcDone(info.FullMethod, err, time.Since(start))
		return err
	}
}

func (m *Metrics) grpcDone(method string, err error, d time.Duration) {
	// As grpc-go answers: a status error's code, context errors as
	// Canceled or DeadlineExceeded, anything else Unknown.
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	m.grpcRequests.WithLabelValues(method, st.Code().String()).Inc()
	m.grpcDuration.WithLabelValues(method).Observe(d.Seconds())
}

// newRequestMetrics builds the request collectors New registers.
func newRequestMetrics() (httpRequests *prometheus.CounterVec, httpDuration *prometheus.HistogramVec, grpcRequests *prometheus.CounterVec, grpcDuration *prometheus.HistogramVec) {
	httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "http_requests_total",
		Help:      "HTTP requests answered (REST API, hosted pages, dashboard, /metrics), by method, route (a bounded label, never the raw path) and status code.",
	}, []string{"method", "route", "code"})
	httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Name:      "http_request_duration_seconds",
		Help:      "Duration of HTTP requests until the handler returned, by method and route; streams count their whole life.",
		Buckets:   RequestBuckets,
	}, []string{"method", "route"})
	grpcRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace,
		Name:      "grpc_requests_total",
		Help:      "gRPC calls finished (REST requests included: the gateway calls gRPC), by full method and status code.",
	}, []string{"method", "code"})
	grpcDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace,
		Name:      "grpc_request_duration_seconds",
		Help:      "Duration of gRPC calls, by full method; streams count their whole life.",
		Buckets:   RequestBuckets,
	}, []string{"method"})
	return
}
