package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	_ "google.golang.org/grpc/health/grpc_health_v1" // links grpc.health.v1.Health: still not a route
)

func TestHTTPRoute(t *testing.T) {
	t.Parallel()
	rows := []struct{ name, path, want string }{
		{"root", "/", "/"},
		{"empty", "", "/"},
		{"health", "/healthz", "/healthz"},
		{"ticker create", "/btc/create/", "/{ticker}/create"},
		{"ticker create without slash", "/btc/create", "/{ticker}/create"},
		{"two-segment ticker", "/trc20/usdt/logs/", "/{ticker}/logs"},
		{"ticker info", "/ltc/info/", "/{ticker}/info"},
		{"global info", "/info/", "/info"},
		{"hosted page with id", "/subscription/sub_8f3k2/", "/subscription"},
		{"payment page with id", "/payment/6c1a7f0e-44bb-4c1e-9f0e-0d6b1b8f1a55/", "/payment"},
		{"dashboard page", "/dashboard/keys/12/revoke", "/dashboard"},
		{"api group", "/checkout/request", "/checkout"},
		{"devnet", "/devnet/btc/mine", "/devnet"},
		{"key in path is not a label", "/ph_abcdefghijklmnopqrstuvwxyz234567", OtherRoute},
		{"scanner", "/wp-admin/setup.php", OtherRoute},
		{"deep unknown", "/a/b/c/d/create", OtherRoute},
		{"payhook service (Connect)", "/payhook.v1.AddressService/GetInfo", "/payhook.v1.AddressService"},
		// Linked into the binary but not served on the HTTP listener.
		{"health service is not served over HTTP", "/grpc.health.v1.Health/Check", OtherRoute},
		{"unknown service", "/evil.v1.Service/Do", OtherRoute},
		{"method name is not a service", "/payhook.v1.AddressService.GetInfo/x", OtherRoute},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := HTTPRoute(r.path); got != r.want {
				t.Fatalf("HTTPRoute(%q) = %q, want %q", r.path, got, r.want)
			}
		})
	}
}

// TestHTTPLabelsStayBounded sends thousands of distinct paths, methods and
// ids; the number of series stays at what the fixed route set allows.
func TestHTTPLabelsStayBounded(t *testing.T) {
	t.Parallel()
	m := New(nil, nil)
	h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
		}
	}))
	methods := []string{"GET", "POST", "FROB", "X-" + strings.Repeat("A", 30)}
	for i := range 2000 {
		for _, p := range []string{
			fmt.Sprintf("/payment/%d/", i),
			fmt.Sprintf("/coin%d/create/", i),
			fmt.Sprintf("/random/%d/missing", i),
			fmt.Sprintf("/ph_%032d", i),
		} {
			req := httptest.NewRequest(methods[i%len(methods)], p, nil)
			h.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	// 3 methods (get, post, unknown) x routes {/payment, /{ticker}/create,
	// other} x codes {200, 404}: far below one series per request.
	if n := testutil.CollectAndCount(m.httpRequests); n > 12 {
		t.Fatalf("%d request series after 8000 distinct requests", n)
	}
	if n := testutil.CollectAndCount(m.httpDuration); n > 9 {
		t.Fatalf("%d duration series", n)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues("get", "/payment", "200")); got != 500 {
		t.Fatalf("GET /payment 200 counted %v times, want 500", got)
	}
	if got := testutil.ToFloat64(m.httpRequests.WithLabelValues("unknown", OtherRoute, "404")); got != 1000 {
		t.Fatalf("unknown-method requests to other routes counted %v, want 1000", got)
	}
}

// TestHTTPInstrumentKeepsFlusher: the REST stream flushes each event, so
// the wrapper must not hide http.Flusher.
func TestHTTPInstrumentKeepsFlusher(t *testing.T) {
	t.Parallel()
	m := New(nil, nil)
	var flushed bool
	h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if ok {
			f.Flush()
		}
		flushed = ok
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/deliveries/watch", nil))
	if !flushed {
		t.Fatal("the instrumented ResponseWriter is not an http.Flusher")
	}
}

func TestGRPCInterceptors(t *testing.T) {
	t.Parallel()
	m := New(nil, nil)
	unary := m.UnaryServerInterceptor()
	for _, err := range []error{nil, nil, status.Error(codes.Unauthenticated, "unknown api key")} {
		_, _ = unary(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/payhook.v1.AddressService/CreateAddress"},
			func(context.Context, any) (any, error) { return nil, err })
	}
	stream := m.StreamServerInterceptor()
	_ = stream(nil, nil, &grpc.StreamServerInfo{FullMethod: "/payhook.v1.DeliveryService/WatchDeliveries"},
		func(any, grpc.ServerStream) error { return context.Canceled })
	for _, c := range []struct {
		method, code string
		want         float64
	}{
		{"/payhook.v1.AddressService/CreateAddress", "OK", 2},
		{"/payhook.v1.AddressService/CreateAddress", "Unauthenticated", 1},
		{"/payhook.v1.DeliveryService/WatchDeliveries", "Canceled", 1},
	} {
		if got := testutil.ToFloat64(m.grpcRequests.WithLabelValues(c.method, c.code)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.method, c.code, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.grpcDuration); n != 2 {
		t.Fatalf("%d duration series, want 2 (one per method)", n)
	}
}

func TestBuildInfo(t *testing.T) {
	t.Parallel()
	b := ReadBuild("v1.2.3")
	if b.Version != "v1.2.3" || b.GoVersion == "" || b.Commit == "" {
		t.Fatalf("ReadBuild: %+v", b)
	}
	if ReadBuild("").Version == "" {
		t.Fatal("no version falls back to nothing")
	}
	m := New(nil, nil)
	m.ObserveBuild(BuildInfo{Version: "v1.2.3", Commit: "abc123", GoVersion: "go1.25.0"})
	srv := serve(t, m)
	body := scrape(t, srv)
	want := `payhook_build_info{commit="abc123",goversion="go1.25.0",version="v1.2.3"} 1`
	if !strings.Contains(body, want) {
		t.Fatalf("scrape lacks %s:\n%s", want, body)
	}
}
