package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// rawRequest makes a request with an exact target (no re-encoding), extra
// headers and an optional body, and decodes the answer.
func rawRequest(t *testing.T, in *servertest.Instance, method, target string, header http.Header, body io.Reader) servertest.Response {
	t.Helper()
	req, err := http.NewRequest(method, in.BaseURL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := servertest.Response{Code: resp.StatusCode, Body: b}
	_ = json.Unmarshal(b, &r.JSON)
	return r
}

// TestInvalidUTF8IsNamed: a path or query parameter that is not UTF-8
// after percent-decoding, or a forwarded header that is not printable
// ASCII, is a 400 naming it, never gRPC's internal marshalling error.
func TestInvalidUTF8IsNamed(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.Dev = true; c.ManualDelivery = true })
	cb := "callback=https%3A%2F%2Fshop.example%2Fhook"
	rows := []struct {
		name, method, target string
		header               http.Header
		body                 string
		want                 string
	}{
		{"logs callback", "GET", "/btc/logs/?callback=%ff", nil, "", "callback: is not valid UTF-8"},
		{"info ticker", "GET", "/%ff/info/", nil, "", "ticker: is not valid UTF-8"},
		{"create ticker", "GET", "/%c3%28/create/?" + cb, nil, "", "ticker: is not valid UTF-8"},
		{"token ticker", "GET", "/trc20/%ff/create/?" + cb, nil, "", "ticker: is not valid UTF-8"},
		{"create address", "GET", "/btc/create/?" + cb + "&address=%ed%a0%80", nil, "", "address: is not valid UTF-8"},
		{"create cb_params", "GET", "/btc/create/?" + cb + "&cb_params=x%3D%ff", nil, "", "cb_params: is not valid UTF-8"},
		{"query name", "GET", "/btc/create/?" + cb + "&%ff=1", nil, "", `query parameter "\xff": name is not valid UTF-8`},
		{"watch filter", "GET", "/deliveries/watch?address_in=%fe", nil, "", "address_in: is not valid UTF-8"},
		{"devnet ticker", "POST", "/devnet/%ff/mine/", nil, `{"blocks":1}`, "ticker: is not valid UTF-8"},
		{"apikey header", "GET", "/btc/create/?" + cb, http.Header{"Apikey": {"ph_\xff"}}, "", "header apikey: must be printable ASCII"},
		{"user agent header", "GET", "/info/", http.Header{"User-Agent": {"agent\xff"}}, "", "header user-agent: must be printable ASCII"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			h := http.Header{"Apikey": {in.KeyA}}
			for k, v := range r.header {
				h[k] = v
			}
			var body io.Reader
			if r.body != "" {
				body = strings.NewReader(r.body)
			}
			got := rawRequest(t, in, r.method, r.target, h, body)
			wantStatus(t, got, http.StatusBadRequest)
			if got.JSON["error"] != r.want {
				t.Fatalf("error %q, want %q", got.JSON["error"], r.want)
			}
		})
	}
	// A JSON body with invalid UTF-8 is refused by the JSON decoder: 400 too.
	got := rawRequest(t, in, "POST", "/devnet/btc/pay/", nil, strings.NewReader("{\"address_in\":\"\xff\",\"value_coin\":\"1\"}"))
	if got.Code != http.StatusBadRequest {
		t.Fatalf("invalid UTF-8 in a JSON body: HTTP %d %s", got.Code, got.Body)
	}
}

// unsizedReader hides a reader's length, so the request is sent chunked.
type unsizedReader struct{ io.Reader }

// TestRequestBodyLimit: a body over the limit is answered 413 with the
// API's error body, whether its length is declared or not, on a route that
// reads bodies (devnet POST) and on one that discards them (GET create).
func TestRequestBodyLimit(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.Dev = true; c.ManualDelivery = true })
	// Valid JSON up to its last byte: only its size is wrong.
	big := func(n int) []byte {
		b := append([]byte(`{"blocks":1,"x":"`), bytes.Repeat([]byte("a"), n)...)
		return append(b, `"}`...)
	}
	const limit = server.DefaultMaxBodyBytes
	rows := []struct {
		name, method, target string
		body                 io.Reader
	}{
		{"declared 10 MB", "POST", "/devnet/btc/mine/", bytes.NewReader(big(10 << 20))},
		{"chunked just over", "POST", "/devnet/btc/mine/", unsizedReader{bytes.NewReader(big(limit))}},
		{"chunked on a GET", "GET", "/btc/create/?callback=https%3A%2F%2Fshop.example%2Fhook&address=" + btcDest, unsizedReader{bytes.NewReader(big(limit))}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := rawRequest(t, in, r.method, r.target, http.Header{"Apikey": {in.KeyA}, "Content-Type": {"application/json"}}, r.body)
			wantStatus(t, got, http.StatusRequestEntityTooLarge)
			if want := "request body: larger than the limit of 1048576 bytes"; got.JSON["error"] != want {
				t.Fatalf("error %q, want %q", got.JSON["error"], want)
			}
		})
	}
	// Just under the limit is read as usual.
	got := rawRequest(t, in, "POST", "/devnet/btc/mine/", http.Header{"Content-Type": {"application/json"}}, unsizedReader{bytes.NewReader(big(limit - 64))})
	wantStatus(t, got, http.StatusOK)
}

// TestWatchStreamOverREST: the REST stream sends its headers before any
// event, outlives the server's read and write timeouts (set short here),
// writes heartbeats while idle, and still delivers events afterwards.
func TestWatchStreamOverREST(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	e := newDeliveryEnv(t, string(store.SQLite), func(c *server.Config) {
		c.API.ReadTimeout, c.API.WriteTimeout = timeout, timeout
		c.API.StreamHeartbeat = 20 * time.Millisecond
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.in.BaseURL+"/deliveries/watch?live_only=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", e.in.KeyA)
	start := clock.Now()
	// Nothing has been enqueued: Do returns only because the headers came
	// without an event.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("no headers before the first event: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("HTTP %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	// Heartbeats (empty lines) keep coming past both timeouts.
	beats := 0
	for time.Since(start) < 3*timeout {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("stream cut after %s and %d heartbeats: %v", time.Since(start), beats, err)
		}
		if line != "\n" {
			t.Fatalf("idle stream wrote %q, want only heartbeats", line)
		}
		beats++
	}
	if beats < 2 {
		t.Fatalf("%d heartbeats in %s", beats, time.Since(start))
	}
	// An event still arrives on the same stream.
	row := e.enqueue(t, e.addr, e.pay, "pending")
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no event after the timeouts: %v", err)
		}
		if line == "\n" {
			continue
		}
		var msg struct {
			Result struct {
				Event struct {
					UUID string `json:"uuid"`
				} `json:"event"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil || msg.Result.Event.UUID != row.UUID {
			t.Fatalf("event line %q (%v), want uuid %s", line, err, row.UUID)
		}
		break
	}
	// A watch without a key is still refused with a status of its own.
	if r := e.in.Get(t, "/deliveries/watch", nil, ""); r.Code != http.StatusUnauthorized || r.JSON["error"] == nil {
		t.Fatalf("watch without a key: HTTP %d %s", r.Code, r.Body)
	}
	// An ordinary request on the same server still has its deadlines: the
	// server still answers.
	wantStatus(t, e.in.Get(t, "/pubkey/", nil, ""), http.StatusOK)
}

// TestFloodOfCreatesOnPostgres: 500 concurrent REST creates against a
// server whose PostgreSQL pool is bounded (10 here, to spare the shared test
// server) all succeed: they wait for a connection instead of failing, the
// pool never grows past its bound, and health stays SERVING throughout
// (probed every few milliseconds meanwhile).
func TestFloodOfCreatesOnPostgres(t *testing.T) {
	t.Parallel()
	const maxConns, requests = 10, 500
	in := servertest.Start(t, store.Postgres, func(c *server.Config) {
		c.Store.MaxConns = maxConns
		c.Store.HealthProbeInterval = 5 * time.Millisecond
	})
	tr := &http.Transport{MaxIdleConnsPerHost: requests}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	get := func(target string, key string) (int, []byte, error) {
		req, err := http.NewRequest(http.MethodGet, in.BaseURL+target, nil)
		if err != nil {
			return 0, nil, err
		}
		if key != "" {
			req.Header.Set("apikey", key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}

	// Watch health and the pool while the flood runs.
	done := make(chan struct{})
	type watch struct {
		checks, maxOpen int
		bad             []string
	}
	watched := make(chan watch, 1)
	go func() {
		var w watch
		defer func() { watched <- w }()
		for {
			select {
			case <-done:
				return
			default:
			}
			code, body, err := get("/healthz", "")
			if err != nil || code != http.StatusOK {
				w.bad = append(w.bad, fmt.Sprintf("HTTP %d %s %v", code, body, err))
			}
			w.checks++
			w.maxOpen = max(w.maxOpen, in.Server.DB().SQL.Stats().OpenConnections)
		}
	}()

	start := make(chan struct{})
	results := make(chan string, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cb := url.QueryEscape(fmt.Sprintf("https://shop.example/flood/%d", i))
			code, body, err := get("/btc/create/?address="+btcDest+"&callback="+cb, in.KeyA)
			switch {
			case err != nil:
				results <- err.Error()
			case code != http.StatusOK:
				results <- fmt.Sprintf("HTTP %d %s", code, body)
			default:
				results <- ""
			}
		}()
	}
	close(start)
	wg.Wait()
	close(done)
	w := <-watched
	close(results)
	failed := map[string]int{}
	for r := range results {
		if r != "" {
			failed[r]++
		}
	}
	if len(failed) > 0 {
		t.Fatalf("failed creates: %v", failed)
	}
	if len(w.bad) > 0 {
		t.Fatalf("health not SERVING during the flood (%d of %d checks): %v", len(w.bad), w.checks, w.bad)
	}
	st := in.Server.DB().SQL.Stats()
	if st.MaxOpenConnections != maxConns || w.maxOpen > maxConns {
		t.Fatalf("pool bound %d, at most %d open during the flood; want bound and peak %d", st.MaxOpenConnections, w.maxOpen, maxConns)
	}
	if st.WaitCount == 0 {
		t.Fatalf("no request ever waited for a connection: the flood did not load the pool (%+v)", st)
	}
	t.Logf("%d creates, %d health checks, %d waits for a connection (%s in total)", requests, w.checks, st.WaitCount, st.WaitDuration)
}

// TestCreateRefusesHostsThatAreNeverPublic: a callback whose host can never
// be a public address is refused at creation, with the reason an attempt
// would give, instead of being retried for 48 hours; the operator's exact
// exception for a development receiver is still accepted.
func TestCreateRefusesHostsThatAreNeverPublic(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate("http://127.0.0.1:3000/hook", servertest.A)
	})
	rows := []struct{ name, callback, want string }{
		{"decimal", "http://2130706433/", `callback: host "2130706433" is the IPv4 address 127.0.0.1, a loopback address (RFC 1122)`},
		{"hex", "http://0x7f000001/hook", "127.0.0.1, a loopback address"},
		{"octal", "http://0177.0.0.1/hook", "127.0.0.1, a loopback address"},
		{"short", "http://127.1/hook", "127.0.0.1, a loopback address"},
		{"localhost dot", "http://localhost./hook", "loopback name"},
		{"localhost", "http://localhost:3000/hook", "loopback name"},
		{"sub.localhost", "https://shop.localhost/hook", "loopback name"},
		{"IPv6 loopback", "http://[::1]:3000/hook", "host [::1] is the loopback address"},
		{"IPv6 mapped", "http://[::ffff:10.0.0.1]/hook", "a private address"},
		{"private", "http://10.0.0.1/hook", "host 10.0.0.1 is a private address (RFC 1918)"},
		{"metadata", "http://169.254.169.254/latest", "a link-local address"},
		{"exception's host, other port", "http://127.0.0.1:3001/hook", "loopback address"},
		{"not an IPv4 address", "http://shop.256/hook", "ends in a number but is not an IPv4 address"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := in.Get(t, "/btc/create/", q("callback", r.callback, "address", btcDest), in.KeyA)
			wantStatus(t, got, http.StatusBadRequest)
			msg, _ := got.JSON["error"].(string)
			if !strings.HasPrefix(msg, "callback: ") || !strings.Contains(msg, r.want) {
				t.Fatalf("error %q, want it to name callback and say %q", msg, r.want)
			}
		})
	}
	for _, ok := range []string{"http://127.0.0.1:3000/hook", "http://127.0.0.1:3000/hook?order=1", "https://shop.example/hook"} {
		wantStatus(t, in.Get(t, "/btc/create/", q("callback", ok, "address", btcDest), in.KeyA), http.StatusOK)
	}
}

// TestHealthReportsALostDatabase: the probe that counts a busy pool as load
// still reports a database that is gone. The test's own database is dropped
// (its connections terminated), which leaves the shared server running.
// /healthz then answers 503 to anyone; its details are still served by the
// operator listener, which needs no key to check, while an operator's key
// on the public listener cannot be checked (503, not the details).
func TestHealthReportsALostDatabase(t *testing.T) {
	t.Parallel()
	dsn := storetest.DSN(t, store.Postgres)
	in := servertest.Start(t, store.Postgres, func(c *server.Config) {
		c.Store.DB = dsn
		c.Store.HealthProbeInterval = 10 * time.Millisecond
		c.API.OperatorAddr = "127.0.0.1:0"
	})
	opKey := in.OperatorKey(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := healthpb.NewHealthClient(in.Conn).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before: %v %v", r, err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.SQL.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	if r, err := w.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after the database went: %v %v", r, err)
	}
	if code, _, body := get(t, in.BaseURL+"/healthz"); code != http.StatusServiceUnavailable || body != `{"status":"error","error":"not serving"}`+"\n" {
		t.Errorf("anonymous /healthz without the database: HTTP %d %s", code, body)
	}
	if code, _, body := get(t, "http://"+in.Server.OperatorAddr()+"/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, `"chains":{`) {
		t.Errorf("operator /healthz without the database: HTTP %d %s", code, body)
	}
	if code, _, body := get(t, in.BaseURL+"/healthz", "apikey", opKey); code != http.StatusServiceUnavailable || strings.Contains(body, "chains") {
		t.Errorf("/healthz with an operator's key without the database: HTTP %d %s", code, body)
	}
	// The metrics too: what needs the database counts a scrape error.
	if code, _, body := get(t, "http://"+in.Server.OperatorAddr()+"/metrics"); code != http.StatusOK || !strings.Contains(body, "payhook_metrics_scrape_errors_total") {
		t.Errorf("operator /metrics without the database: HTTP %d", code)
	}
}
