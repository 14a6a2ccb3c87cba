package browserrpc_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// allowedOrigin is the one origin the test servers allow.
const allowedOrigin = "https://app.example"

// env is a --dev server (manual delivery) with a merchant receiver its
// callbacks may reach, and an address of KeyA's whose callback it is.
type env struct {
	in        *servertest.Instance
	hook      string // the callback URL
	addressIn string
}

func newEnv(t *testing.T, mutate ...func(*server.Config)) *env {
	t.Helper()
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(recv.Close)
	hook := recv.URL + "/hook"
	in := servertest.Start(t, store.SQLite, append([]func(*server.Config){func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook, servertest.A, servertest.B)
		c.API.CORSOrigins = []string{allowedOrigin}
	}}, mutate...)...)
	e := &env{in: in, hook: hook}
	// The address is created over Connect too.
	resp := unary[payhookv1.CreateAddressRequest, payhookv1.CreateAddressResponse](t, e.url("AddressService", "CreateAddress"), in.KeyA,
		&payhookv1.CreateAddressRequest{Ticker: "btc", Callback: hook, Address: btcDest(t)})
	e.addressIn = resp.GetAddressIn()
	if e.addressIn == "" {
		t.Fatalf("CreateAddress answered %v", resp)
	}
	return e
}

// btcDest is a bitcoin address outside the server's seed.
func btcDest(t *testing.T) string {
	t.Helper()
	d, err := chains.NewDeriver(bytes.Repeat([]byte{0x42}, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := family.DefaultRegistry().Lookup("btc")
	a, err := d.Address(tk, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// url is the Connect URL of service's method.
func (e *env) url(service, method string) string {
	return e.in.BaseURL + "/payhook.v1." + service + "/" + method
}

// unaryErr makes a Connect unary call (binary protobuf unless opts say
// otherwise) to url with key (none when empty).
func unaryErr[Req, Res any](url, key string, req *Req, opts ...connect.ClientOption) (*Res, error) {
	r := connect.NewRequest(req)
	if key != "" {
		r.Header().Set("apikey", key)
	}
	resp, err := connect.NewClient[Req, Res](http.DefaultClient, url, opts...).CallUnary(context.Background(), r)
	if err != nil {
		return nil, err
	}
	return resp.Msg, nil
}

// unary is unaryErr failing the test on an error.
func unary[Req, Res any](t *testing.T, url, key string, req *Req, opts ...connect.ClientOption) *Res {
	t.Helper()
	resp, err := unaryErr[Req, Res](url, key, req, opts...)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp
}

// TestConnectUnary: Connect unary calls with JSON and binary bodies reach
// the gRPC services, and the interceptors answer in the Connect error
// shape: auth (unauthenticated, permission_denied), validation
// (invalid_argument) and the ticker check (not_found). REST at its paths
// is unchanged.
func TestConnectUnary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := func(callback string) string {
		b, _ := json.Marshal(map[string]string{"ticker": "btc", "callback": callback})
		return string(b)
	}
	binLogs, err := proto.Marshal(&payhookv1.GetLogsRequest{Ticker: "btc", Callback: e.hook})
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) http.Header { return http.Header{"Apikey": {k}} }
	cases := []struct {
		name        string
		path        string
		body        string
		header      http.Header
		wantCode    int
		wantErr     string // Connect error code, "" for success
		wantMessage string // in the error message
		check       func(t *testing.T, body []byte)
	}{
		{name: "JSON with key", path: e.url("AddressService", "GetLogs"), body: logs(e.hook), header: key(e.in.KeyA), wantCode: 200,
			check: func(t *testing.T, body []byte) {
				var got struct {
					CallbackURL string `json:"callbackUrl"`
					AddressIn   string `json:"addressIn"`
				}
				if err := json.Unmarshal(body, &got); err != nil || got.CallbackURL != e.hook || got.AddressIn != e.addressIn {
					t.Fatalf("GetLogs answered %s", body)
				}
			}},
		{name: "JSON with the Connect header", path: e.url("AddressService", "GetLogs"), body: logs(e.hook),
			header: http.Header{"Apikey": {e.in.KeyA}, "Connect-Protocol-Version": {"1"}}, wantCode: 200},
		{name: "binary with key", path: e.url("AddressService", "GetLogs"), body: string(binLogs),
			header: http.Header{"Apikey": {e.in.KeyA}, "Content-Type": {"application/proto"}}, wantCode: 200,
			check: func(t *testing.T, body []byte) {
				var got payhookv1.GetLogsResponse
				if err := proto.Unmarshal(body, &got); err != nil || got.GetAddressIn() != e.addressIn {
					t.Fatalf("GetLogs answered %v (%v)", &got, err)
				}
			}},
		{name: "no key", path: e.url("AddressService", "GetLogs"), body: logs(e.hook), wantCode: 401,
			wantErr: "unauthenticated", wantMessage: "missing api key"},
		{name: "unknown key", path: e.url("AddressService", "GetLogs"), body: logs(e.hook), header: key("nope"), wantCode: 401,
			wantErr: "unauthenticated", wantMessage: "unknown api key"},
		{name: "another project's address", path: e.url("AddressService", "GetLogs"), body: logs(e.hook), header: key(e.in.KeyB),
			wantCode: 404, wantErr: "not_found"},
		{name: "invalid request", path: e.url("AddressService", "GetLogs"), body: logs(""), header: key(e.in.KeyA), wantCode: 400,
			wantErr: "invalid_argument", wantMessage: "callback: value is required"},
		{name: "unknown ticker", path: e.url("AddressService", "GetLogs"),
			body: `{"ticker":"nocoin","callback":"https://x.example/"}`, header: key(e.in.KeyA), wantCode: 404, wantErr: "not_found"},
		{name: "operator method, merchant key", path: e.url("OperatorService", "ListHeldFunds"), body: `{}`, header: key(e.in.KeyA),
			wantCode: 403, wantErr: "permission_denied"},
		{name: "public method, no key", path: e.url("AddressService", "GetInfo"), body: `{}`, wantCode: 200,
			check: func(t *testing.T, body []byte) {
				if !strings.Contains(string(body), `"coins"`) {
					t.Fatalf("GetInfo answered %s", body)
				}
			}},
		{name: "malformed JSON", path: e.url("AddressService", "GetLogs"), body: `{"ticker":`, header: key(e.in.KeyA), wantCode: 400,
			wantErr: "invalid_argument", wantMessage: "request body: "},
		{name: "unknown method", path: e.url("AddressService", "Nope"), body: `{}`, wantCode: 404},
		{name: "gRPC belongs to the gRPC listener", path: e.url("AddressService", "GetInfo"), body: "",
			header: http.Header{"Content-Type": {"application/grpc"}}, wantCode: 415},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, h, body := postJSON(t, c.path, c.body, c.header)
			if code != c.wantCode {
				t.Fatalf("HTTP %d, want %d: %s", code, c.wantCode, body)
			}
			if c.wantErr != "" {
				var got connectError
				if err := json.Unmarshal(body, &got); err != nil || got.Code != c.wantErr || !strings.Contains(got.Message, c.wantMessage) {
					t.Fatalf("error body %s, want code %q with %q", body, c.wantErr, c.wantMessage)
				}
				if ct := h.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("error Content-Type %q", ct)
				}
			}
			if c.check != nil {
				c.check(t, body)
			}
			if g := h.Get("Grpc-Metadata-Content-Type"); g != "" {
				t.Fatalf("gRPC internals in the answer: %q", g)
			}
		})
	}

	// The REST API is the gateway's, as before.
	r := e.in.Get(t, "/info/", nil, "")
	if r.Code != 200 || r.JSON["btc"] == nil {
		t.Fatalf("REST /info/ answered %d %s", r.Code, r.Body)
	}
}

// grpcWebFrames splits a gRPC-Web response body into its messages and its
// trailer frame.
func grpcWebFrames(t *testing.T, body []byte) (msgs [][]byte, trailer string) {
	t.Helper()
	for len(body) > 0 {
		if len(body) < 5 {
			t.Fatalf("truncated frame header %x", body)
		}
		n := int(binary.BigEndian.Uint32(body[1:5]))
		if len(body) < 5+n {
			t.Fatalf("truncated frame: %d of %d bytes", len(body)-5, n)
		}
		if body[0]&0x80 != 0 {
			trailer = string(body[5 : 5+n])
		} else {
			msgs = append(msgs, body[5:5+n])
		}
		body = body[5+n:]
	}
	return msgs, trailer
}

// TestGRPCWebUnary: a gRPC-Web call in binary framing, by hand and with
// connect-go's gRPC-Web client; errors travel in the trailer frame.
func TestGRPCWebUnary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	raw := func(t *testing.T, key string) (int, [][]byte, string) {
		t.Helper()
		msg, err := proto.Marshal(&payhookv1.GetLogsRequest{Ticker: "btc", Callback: e.hook})
		if err != nil {
			t.Fatal(err)
		}
		frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(len(msg)))
		req, err := http.NewRequest(http.MethodPost, e.url("AddressService", "GetLogs"), bytes.NewReader(append(frame, msg...)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/grpc-web+proto")
		req.Header.Set("X-Grpc-Web", "1")
		if key != "" {
			req.Header.Set("apikey", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode == 200 && ct != "application/grpc-web+proto" {
			t.Fatalf("Content-Type %q", ct)
		}
		msgs, trailer := grpcWebFrames(t, body)
		if trailer == "" {
			// A trailers-only answer carries its status in the headers.
			trailer = fmt.Sprintf("grpc-status: %s\r\ngrpc-message: %s\r\n", resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message"))
		}
		// Trailer names are case-insensitive, as header names.
		return resp.StatusCode, msgs, strings.ToLower(trailer)
	}
	t.Run("raw frames with key", func(t *testing.T) {
		code, msgs, trailer := raw(t, e.in.KeyA)
		if code != 200 || len(msgs) != 1 || !strings.Contains(trailer, "grpc-status: 0\r\n") {
			t.Fatalf("HTTP %d, %d messages, trailer %q", code, len(msgs), trailer)
		}
		var got payhookv1.GetLogsResponse
		if err := proto.Unmarshal(msgs[0], &got); err != nil || got.GetAddressIn() != e.addressIn {
			t.Fatalf("GetLogs answered %v (%v)", &got, err)
		}
	})
	t.Run("raw frames without key", func(t *testing.T) {
		code, msgs, trailer := raw(t, "")
		if code != 200 || len(msgs) != 0 || !strings.Contains(trailer, "grpc-status: 16\r\n") || !strings.Contains(trailer, "missing api key") {
			t.Fatalf("HTTP %d, %d messages, trailer %q", code, len(msgs), trailer)
		}
	})
	t.Run("connect-go client", func(t *testing.T) {
		getLogs := func(key string, req *payhookv1.GetLogsRequest) (*payhookv1.GetLogsResponse, error) {
			return unaryErr[payhookv1.GetLogsRequest, payhookv1.GetLogsResponse](e.url("AddressService", "GetLogs"), key, req, connect.WithGRPCWeb())
		}
		got, err := getLogs(e.in.KeyA, &payhookv1.GetLogsRequest{Ticker: "btc", Callback: e.hook})
		if err != nil || got.GetAddressIn() != e.addressIn {
			t.Fatalf("GetLogs answered %v (%v)", got, err)
		}
		if _, err := getLogs("", &payhookv1.GetLogsRequest{Ticker: "btc", Callback: e.hook}); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("without a key: %v", err)
		}
		if _, err := getLogs(e.in.KeyA, &payhookv1.GetLogsRequest{Ticker: "btc"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Fatalf("invalid request: %v", err)
		}
	})
}

// metricValue returns the sum of the samples of name whose labels include
// every one given (`code="OK"`), 0 when there is none.
func metricValue(t *testing.T, in *servertest.Instance, name string, labels ...string) float64 {
	t.Helper()
	r := in.Get(t, "/metrics", nil, in.OperatorKey(t))
	if r.Code != 200 {
		t.Fatalf("/metrics: HTTP %d", r.Code)
	}
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	sum := 0.0
next:
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") {
			continue
		}
		for _, l := range labels {
			if !strings.Contains(line, l) {
				continue next
			}
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// TestInterceptorsRunOnce: each Connect or gRPC-Web call is one gRPC call
// (the request metrics interceptor, first in the chain, counts one), and
// one HTTP request under the service's bounded route label.
func TestInterceptorsRunOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	grpcCalls := func(method, code string) float64 {
		return metricValue(t, e.in, "payhook_grpc_requests_total", `method="/payhook.v1.AddressService/`+method+`"`, `code="`+code+`"`)
	}
	httpCalls := func() float64 {
		return metricValue(t, e.in, "payhook_http_requests_total", `route="/payhook.v1.AddressService"`)
	}
	okBefore, deniedBefore, httpBefore := grpcCalls("GetLogs", "OK"), grpcCalls("GetLogs", "Unauthenticated"), httpCalls()
	req := &payhookv1.GetLogsRequest{Ticker: "btc", Callback: e.hook}
	for _, opts := range [][]connect.ClientOption{nil, {connect.WithProtoJSON()}, {connect.WithGRPCWeb()}} {
		getLogs := func(key string) (*payhookv1.GetLogsResponse, error) {
			return unaryErr[payhookv1.GetLogsRequest, payhookv1.GetLogsResponse](e.url("AddressService", "GetLogs"), key, req, opts...)
		}
		if _, err := getLogs(e.in.KeyA); err != nil {
			t.Fatal(err)
		}
		if _, err := getLogs(""); connect.CodeOf(err) != connect.CodeUnauthenticated {
			t.Fatalf("without a key: %v", err)
		}
	}
	if ok, denied, h := grpcCalls("GetLogs", "OK")-okBefore, grpcCalls("GetLogs", "Unauthenticated")-deniedBefore, httpCalls()-httpBefore; ok != 3 || denied != 3 || h != 6 {
		t.Fatalf("6 browser calls (3 OK, 3 refused) counted %v OK and %v Unauthenticated gRPC calls, %v HTTP requests", ok, denied, h)
	}
}

// watch opens a WatchDeliveries stream of key's deliveries with opts.
func (e *env) watch(ctx context.Context, t *testing.T, key string, opts ...connect.ClientOption) *connect.ServerStreamForClient[payhookv1.WatchDeliveriesResponse] {
	t.Helper()
	c := connect.NewClient[payhookv1.WatchDeliveriesRequest, payhookv1.WatchDeliveriesResponse](
		http.DefaultClient, e.url("DeliveryService", "WatchDeliveries"), opts...)
	req := connect.NewRequest(&payhookv1.WatchDeliveriesRequest{})
	req.Header().Set("apikey", key)
	s, err := c.CallServerStream(ctx, req)
	if err != nil {
		t.Fatalf("WatchDeliveries: %v", err)
	}
	return s
}

// payAndMine pays the env's address on the devnet and mines a block, over
// Connect; the server's watcher stores the callback (an event "created"),
// and the dispatcher attempts it (an event "attempt").
func (e *env) payAndMine(t *testing.T) {
	t.Helper()
	unary[payhookv1.PayRequest, payhookv1.PayResponse](t, e.url("DevnetService", "Pay"), "",
		&payhookv1.PayRequest{Ticker: "btc", AddressIn: e.addressIn, ValueCoin: "0.01"})
	one := int32(1)
	unary[payhookv1.MineRequest, payhookv1.MineResponse](t, e.url("DevnetService", "Mine"), "",
		&payhookv1.MineRequest{Ticker: "btc", Blocks: &one})
	if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// waitWatchers waits until the server has n live watch streams.
func (e *env) waitWatchers(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for e.in.Server.Notifier().Events.Watchers() != n {
		select {
		case <-deadline:
			t.Fatalf("%d watchers, want %d", e.in.Server.Notifier().Events.Watchers(), n)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestWatchDeliveriesStream: over Connect and over gRPC-Web, a
// WatchDeliveries stream outlives the HTTP server's read and write
// timeouts (set short here), receives the events of a devnet payment, and
// ends on the server when the client cancels.
func TestWatchDeliveriesStream(t *testing.T) {
	t.Parallel()
	for _, p := range []struct {
		name string
		opts []connect.ClientOption
	}{{"connect", nil}, {"connect-json", []connect.ClientOption{connect.WithProtoJSON()}}, {"grpc-web", []connect.ClientOption{connect.WithGRPCWeb()}}} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			const timeout = 300 * time.Millisecond
			e := newEnv(t, func(c *server.Config) { c.API.ReadTimeout, c.API.WriteTimeout = timeout, timeout })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			s := e.watch(wctx, t, e.in.KeyA, p.opts...)
			e.waitWatchers(t, 1)
			// The server's deadlines run on the wall clock: let both pass
			// with the stream open and idle.
			select {
			case <-time.After(2 * timeout):
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
			e.payAndMine(t)
			// The callbacks' "created" events, then their attempts.
			var kinds []string
			for len(kinds) == 0 || kinds[len(kinds)-1] != "attempt" {
				if !s.Receive() {
					t.Fatalf("stream ended after %v: %v", kinds, s.Err())
				}
				ev := s.Msg().GetEvent()
				if ev.GetAddressIn() != e.addressIn {
					t.Fatalf("event of address %q, want %q", ev.GetAddressIn(), e.addressIn)
				}
				kinds = append(kinds, ev.GetKind())
			}
			if kinds[0] != "created" {
				t.Fatalf("events %v, want created first", kinds)
			}
			watches := func() float64 {
				return metricValue(t, e.in, "payhook_grpc_requests_total", `method="/payhook.v1.DeliveryService/WatchDeliveries"`)
			}
			before := watches()
			stop()
			if s.Receive() || connect.CodeOf(s.Err()) != connect.CodeCanceled {
				t.Fatalf("after cancel: %v", s.Err())
			}
			_ = s.Close()
			e.waitWatchers(t, 0)
			// The gRPC call ended too, and was one call.
			deadline := time.After(10 * time.Second)
			for watches() != before+1 {
				select {
				case <-deadline:
					t.Fatalf("%v WatchDeliveries calls ended, want %v", watches(), before+1)
				case <-time.After(10 * time.Millisecond):
				}
			}
		})
	}
}

// TestStreamEndsOnStop: stopping the server ends an open browser stream
// at once with unavailable (the client resumes from its cursor), well
// before the shutdown timeout.
func TestStreamEndsOnStop(t *testing.T) {
	t.Parallel()
	const shutdown = 20 * time.Second
	e := newEnv(t, func(c *server.Config) { c.API.ShutdownTimeout = shutdown })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	streams := []*connect.ServerStreamForClient[payhookv1.WatchDeliveriesResponse]{
		e.watch(ctx, t, e.in.KeyA),
		e.watch(ctx, t, e.in.KeyA, connect.WithGRPCWeb()),
	}
	e.waitWatchers(t, len(streams))
	start := clock.Now()
	if err := e.in.Server.Stop(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > shutdown/2 {
		t.Fatalf("Stop took %v with browser streams open (shutdown timeout %v)", took, shutdown)
	}
	for i, s := range streams {
		if s.Receive() {
			t.Fatalf("stream %d: an event after Stop", i)
		}
		var ce *connect.Error
		if !errors.As(s.Err(), &ce) || ce.Code() != connect.CodeUnavailable || !strings.Contains(ce.Message(), "after_cursor") {
			t.Fatalf("stream %d ended with %v, want unavailable naming after_cursor", i, s.Err())
		}
		_ = s.Close()
	}
}

// TestCORS: a preflight from an allowed origin is answered with the
// Connect and gRPC-Web headers and the apikey header; from another origin
// it gets no CORS header. An actual call from the allowed origin exposes
// the gRPC-Web status headers.
func TestCORS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	preflight := func(t *testing.T, origin string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodOptions, e.url("AddressService", "GetLogs"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "apikey,connect-protocol-version,content-type,x-grpc-web,x-user-agent")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	t.Run("allowed origin", func(t *testing.T) {
		resp := preflight(t, allowedOrigin)
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != allowedOrigin ||
			h.Get("Access-Control-Allow-Methods") != "POST" ||
			h.Get("Access-Control-Allow-Headers") != "apikey,connect-protocol-version,content-type,x-grpc-web,x-user-agent" ||
			h.Get("Access-Control-Max-Age") == "" || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("preflight answered %d %v", resp.StatusCode, h)
		}
	})
	t.Run("other origin", func(t *testing.T) {
		resp := preflight(t, "https://evil.example")
		for k := range resp.Header {
			if strings.HasPrefix(k, "Access-Control-") {
				t.Fatalf("preflight from another origin got %s: %v", k, resp.Header)
			}
		}
	})
	t.Run("actual call", func(t *testing.T) {
		for _, origin := range []string{allowedOrigin, "https://evil.example"} {
			code, h, body := postJSON(t, e.url("AddressService", "GetInfo"), `{}`, http.Header{"Origin": {origin}})
			if code != 200 {
				t.Fatalf("HTTP %d: %s", code, body)
			}
			allowed := origin == allowedOrigin
			if got := h.Get("Access-Control-Allow-Origin"); (got == origin) != allowed {
				t.Fatalf("origin %s: Access-Control-Allow-Origin %q", origin, got)
			}
			if exp := h.Get("Access-Control-Expose-Headers"); allowed && !strings.Contains(exp, "Grpc-Status") {
				t.Fatalf("exposed headers %q", exp)
			}
		}
	})
}

// TestManyCompressedFramesRefused: a small gRPC-Web body of many gzip
// frames, each decompressing to a large message, is refused after its
// first message with invalid_argument (no method takes a client stream),
// without a key and without the server holding every message.
func TestManyCompressedFramesRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	if _, err := zw.Write(make([]byte, 512<<10)); err != nil { // zeros: an invalid message, but read first
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var body []byte
	for range 200 {
		body = append(binary.BigEndian.AppendUint32(append(body, 1), uint32(zipped.Len())), zipped.Bytes()...)
	}
	req, err := http.NewRequest(http.MethodPost, e.url("AddressService", "GetPublicKey"), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/grpc-web+proto")
	req.Header.Set("Grpc-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	_, trailer := grpcWebFrames(t, raw)
	if trailer == "" {
		trailer = fmt.Sprintf("grpc-status: %s\r\ngrpc-message: %s\r\n", resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message"))
	}
	trailer = strings.ToLower(trailer)
	if !strings.Contains(trailer, "grpc-status: 3\r\n") || !strings.Contains(trailer, "more than one message") {
		t.Fatalf("HTTP %d, trailer %q", resp.StatusCode, trailer)
	}
}
