package egress_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/egress"
)

// hits counts requests per path.
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) add(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[path]++
}

func (h *hits) get(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[path]
}

func (h *hits) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, v := range h.n {
		n += v
	}
	return n
}

// newServer starts a loopback server that counts requests and answers
// with handler.
func newServer(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *hits) {
	t.Helper()
	h := &hits{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.add(r.URL.Path)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, h
}

func okHandler(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"status":"ok"}`) }

func newClient(t *testing.T, cfg egress.Config) *egress.Client {
	t.Helper()
	c, err := egress.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func wantBlocked(t *testing.T, err error, reason string) {
	t.Helper()
	var be *egress.BlockedError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v (%T); want *egress.BlockedError", err, err)
	}
	if !strings.Contains(be.Reason, reason) || !strings.HasPrefix(be.Error(), "destination ") {
		t.Fatalf("blocked: %q; want a reason containing %q", be.Error(), reason)
	}
}

func TestDoBlocksLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	srv, h := newServer(t, okHandler)
	c := newClient(t, egress.Config{})
	_, err := c.Do(t.Context(), egress.Request{Method: http.MethodGet, URL: srv.URL + "/hook"})
	wantBlocked(t, err, "127.0.0.1 is a loopback address")
	// Refused by the host rule before any dial, with the dialer's reason.
	if err.Error() != "destination URL host 127.0.0.1 is a loopback address (RFC 1122)" {
		t.Errorf("Error() = %q", err)
	}
	if h.total() != 0 {
		t.Errorf("server got %d requests", h.total())
	}
}

func TestDoAllowedEndpoint(t *testing.T) {
	t.Parallel()
	var got struct {
		method, query, ua, ct, sig string
		body                       []byte
	}
	srv, h := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got.method, got.query = r.Method, r.URL.RawQuery
		got.ua, got.ct, got.sig = r.UserAgent(), r.Header.Get("Content-Type"), r.Header.Get("X-Ca-Signature")
		got.body, _ = io.ReadAll(r.Body)
		okHandler(w, r)
	})
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/hook"}})
	body := []byte(`{"uuid":"u1","value_coin":0.10}`)
	resp, err := c.Do(t.Context(), egress.Request{
		Method: http.MethodPost, URL: srv.URL + "/hook?cb=a%2Fb&x=1", ContentType: "application/json",
		Body: body, Header: http.Header{"X-Ca-Signature": {"c2ln"}, "User-Agent": {"spoofed"}},
	})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if resp.Status != 200 || string(resp.Body) != `{"status":"ok"}` || resp.Truncated || resp.Duration <= 0 {
		t.Errorf("resp = %+v", resp)
	}
	if ok, why := egress.Acknowledged(resp.Status, resp.Body); !ok {
		t.Errorf("not acknowledged: %s", why)
	}
	if got.method != http.MethodPost || got.query != "cb=a%2Fb&x=1" || got.ua != egress.DefaultUserAgent ||
		got.ct != "application/json" || got.sig != "c2ln" || !bytes.Equal(got.body, body) {
		t.Errorf("server saw %+v", got)
	}
	if h.get("/hook") != 1 {
		t.Errorf("hits = %d", h.get("/hook"))
	}
}

func TestDoAllowedEndpointMismatchStillBlocked(t *testing.T) {
	t.Parallel()
	srv, h := newServer(t, okHandler)
	other, oh := newServer(t, okHandler)
	u, _ := url.Parse(srv.URL)
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/hook"}})
	tests := []struct{ name, url, reason string }{
		{"other path", srv.URL + "/other", "loopback"},
		{"trailing slash", srv.URL + "/hook/", "loopback"},
		{"other port", other.URL + "/hook", "loopback"},
		{"other host name for the same address", "http://localhost:" + u.Port() + "/hook", "loopback"},
		{"https scheme", "https://" + u.Host + "/hook", "loopback"},
		{"credentials", "http://user@" + u.Host + "/hook", "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Do(t.Context(), egress.Request{Method: http.MethodGet, URL: tt.url})
			wantBlocked(t, err, tt.reason)
		})
	}
	t.Cleanup(func() {
		if h.total()+oh.total() != 0 {
			t.Errorf("servers got %d requests", h.total()+oh.total())
		}
	})
}

// TestDoAllowedEndpointOfAnotherOwner: an operator's exception is bound to
// its owner; another owner's request to exactly that endpoint is refused
// before anything is sent, while the owner's own request goes through.
func TestDoAllowedEndpointOfAnotherOwner(t *testing.T) {
	t.Parallel()
	srv, h := newServer(t, okHandler)
	c := newClient(t, egress.Config{AllowPrivate: []string{"7=" + srv.URL + "/hook", srv.URL + "/default"}, DefaultOwner: 1})
	for _, owner := range []int64{0, 1, 8} {
		_, err := c.Do(t.Context(), egress.Request{Owner: owner, Method: http.MethodGet, URL: srv.URL + "/hook"})
		wantBlocked(t, err, "loopback")
	}
	_, err := c.Do(t.Context(), egress.Request{Owner: 7, Method: http.MethodGet, URL: srv.URL + "/default"})
	wantBlocked(t, err, "loopback")
	if h.total() != 0 {
		t.Fatalf("server got %d requests from other owners", h.total())
	}
	for owner, path := range map[int64]string{7: "/hook", 1: "/default"} {
		resp, err := c.Do(t.Context(), egress.Request{Owner: owner, Method: http.MethodGet, URL: srv.URL + path})
		if err != nil || resp.Status != http.StatusOK {
			t.Fatalf("owner %d: %v %v", owner, resp.Status, err)
		}
	}
}

func TestDoDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	srv, h := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hook" {
			http.Redirect(w, r, "/target", http.StatusFound)
			return
		}
		okHandler(w, r)
	})
	// Even an allowed target is not followed.
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/hook", srv.URL + "/target"}})
	resp, err := c.Do(t.Context(), egress.Request{Method: http.MethodPost, URL: srv.URL + "/hook", Body: []byte("x")})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if resp.Status != http.StatusFound {
		t.Errorf("status = %d, want 302", resp.Status)
	}
	if h.get("/target") != 0 {
		t.Error("redirect followed")
	}
	if ok, _ := egress.Acknowledged(resp.Status, resp.Body); ok {
		t.Error("302 acknowledged")
	}
}

func TestDoTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	c := newClient(t, egress.Config{Timeout: 200 * time.Millisecond, AllowPrivate: []string{srv.URL + "/slow"}})
	start := clock.Now()
	resp, err := c.Do(t.Context(), egress.Request{Method: http.MethodGet, URL: srv.URL + "/slow"})
	if !errors.Is(err, egress.ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("took %s", elapsed)
	}
	if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "/slow") {
		t.Errorf("error %q repeats the URL", err)
	}
	if resp.Duration < 200*time.Millisecond {
		t.Errorf("Duration = %s", resp.Duration)
	}
}

func TestDoTimeoutWhileReadingBody(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"status":`)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := newClient(t, egress.Config{Timeout: 200 * time.Millisecond, AllowPrivate: []string{srv.URL + "/"}})
	_, err := c.Do(t.Context(), egress.Request{URL: srv.URL})
	if !errors.Is(err, egress.ErrTimeout) {
		t.Fatalf("err = %v; want ErrTimeout", err)
	}
}

func TestDoCallerCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{})
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/"}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-started; cancel() }()
	_, err := c.Do(ctx, egress.Request{URL: srv.URL + "/"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, egress.ErrTimeout) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
}

func TestDoTruncatesBody(t *testing.T) {
	t.Parallel()
	srv, _ := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := 1 << 20
		if r.URL.Path == "/exact" {
			n = 1000
		}
		_, _ = w.Write(bytes.Repeat([]byte("a"), n))
	})
	c := newClient(t, egress.Config{MaxBody: 1000, AllowPrivate: []string{srv.URL + "/huge", srv.URL + "/exact"}})
	resp, err := c.Do(t.Context(), egress.Request{URL: srv.URL + "/huge"})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if len(resp.Body) != 1000 || !resp.Truncated || resp.Status != 200 {
		t.Errorf("huge: %d bytes, truncated=%v, status %d; want 1000, true, 200", len(resp.Body), resp.Truncated, resp.Status)
	}
	resp, err = c.Do(t.Context(), egress.Request{URL: srv.URL + "/exact"})
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if len(resp.Body) != 1000 || resp.Truncated {
		t.Errorf("exact: %d bytes, truncated=%v; want 1000, false", len(resp.Body), resp.Truncated)
	}
}

func TestDoReusesConnections(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okHandler))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/"}})
	for range 3 {
		if _, err := c.Do(t.Context(), egress.Request{URL: srv.URL + "/"}); err != nil {
			t.Fatalf("Do: %v", err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential attempts, want 1", n)
	}
}

func TestDoRefusesLoopbackHosts(t *testing.T) {
	t.Parallel()
	srv, h := newServer(t, okHandler)
	u, _ := url.Parse(srv.URL)
	c := newClient(t, egress.Config{})
	for _, tt := range []struct{ host, reason string }{
		// Refused by name, whatever DNS would say.
		{"localhost", "loopback name"},
		{"localhost.", "loopback name"},
		{"api.localhost", "loopback name"},
		// The forms a resolver reads as 127.0.0.1.
		{"2130706433", "the IPv4 address 127.0.0.1, a loopback address"},
		{"0x7f000001", "the IPv4 address 127.0.0.1, a loopback address"},
		{"0177.0.0.1", "the IPv4 address 127.0.0.1, a loopback address"},
		{"127.1", "the IPv4 address 127.0.0.1, a loopback address"},
	} {
		_, err := c.Do(t.Context(), egress.Request{URL: "http://" + tt.host + ":" + u.Port() + "/hook"})
		wantBlocked(t, err, tt.reason)
	}
	if h.total() != 0 {
		t.Errorf("server got %d requests", h.total())
	}
}

func TestDoRefusesBadURL(t *testing.T) {
	t.Parallel()
	c := newClient(t, egress.Config{})
	for _, tt := range []struct{ url, reason string }{
		{"https://user:s3cret@merchant.example/cb", "credentials"},
		{"https://merchant.example/cb#x", "fragment"},
		{"ftp://merchant.example/cb", "http or https"},
	} {
		_, err := c.Do(t.Context(), egress.Request{URL: tt.url})
		wantBlocked(t, err, tt.reason)
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error %q repeats the credentials", err)
		}
	}
}

func TestDoVerifiesTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(okHandler))
	t.Cleanup(srv.Close)
	c := newClient(t, egress.Config{AllowPrivate: []string{srv.URL + "/"}})
	_, err := c.Do(t.Context(), egress.Request{URL: srv.URL + "/"})
	var be *egress.BlockedError
	if err == nil || errors.As(err, &be) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err = %v; want a certificate verification error", err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     egress.Config
		wantErr string
	}{
		{"zero value", egress.Config{}, ""},
		{"allowed endpoints", egress.Config{AllowPrivate: []string{"http://127.0.0.1:9999/hook", "https://[::1]/"}}, ""},
		{"bad endpoint named", egress.Config{AllowPrivate: []string{"http://127.0.0.1:9999/hook", "127.0.0.1:9999"}}, `AllowPrivate[1]: invalid private endpoint "127.0.0.1:9999"`},
		{"endpoint with query", egress.Config{AllowPrivate: []string{"http://127.0.0.1/hook?x=1"}}, "query"},
		{"endpoints of owners", egress.Config{AllowPrivate: []string{"3=http://127.0.0.1:9999/hook", "http://127.0.0.1:9999/hook"}, DefaultOwner: 1}, ""},
		{"bad owner named", egress.Config{AllowPrivate: []string{"shop=http://127.0.0.1:9999/hook"}}, `AllowPrivate[0]: invalid private endpoint "shop=http://127.0.0.1:9999/hook": "shop" before "=" is not an owner id`},
		{"negative timeout", egress.Config{Timeout: -time.Second}, "Timeout -1s is negative"},
		{"negative max body", egress.Config{MaxBody: -1}, "MaxBody -1 is negative"},
		{"user agent with newline", egress.Config{UserAgent: "a\r\nX-Evil: 1"}, "UserAgent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := egress.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil || c == nil {
					t.Fatalf("New = %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, egress.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New = %v; want ErrInvalidConfig containing %q", err, tt.wantErr)
			}
		})
	}
	d := egress.Config{}.WithDefaults()
	if d.Timeout != 30*time.Second || d.MaxBody != 64<<10 || d.UserAgent != "payhook/1 (+webhook)" {
		t.Errorf("defaults = %+v", d)
	}
}

// TestDoResendsPOSTOnStaleConnection: a server that closes a kept-alive
// connection just as a request arrives on it (an idle timeout racing the
// reuse, as Node's 5 s default does) costs a POST with an idempotency key
// nothing: it is sent again on a new connection within the same attempt.
// Without the key net/http may not resend a POST, and the attempt fails.
func TestDoResendsPOSTOnStaleConnection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		key     string
		wantErr bool
	}{
		{name: "with idempotency key", key: "8f14e45f-ceea-467e-a6b8-3f1c6c0b0b1a"},
		{name: "without", wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { l.Close() })
			type seen struct {
				conn int
				body string
				key  string
			}
			got := make(chan seen, 10)
			go func() {
				for conn := 1; ; conn++ {
					nc, err := l.Accept()
					if err != nil {
						return
					}
					go func() {
						defer nc.Close()
						br := bufio.NewReader(nc)
						for served := 0; ; served++ {
							req, err := http.ReadRequest(br)
							if err != nil {
								return
							}
							b, _ := io.ReadAll(req.Body)
							got <- seen{conn: conn, body: string(b), key: req.Header.Get("Idempotency-Key")}
							if conn == 1 && served == 1 {
								return // the second request on the first connection: hang up unanswered
							}
							_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
						}
					}()
				}
			}()
			hook := "http://" + l.Addr().String() + "/hook"
			cl := newClient(t, egress.Config{AllowPrivate: []string{hook}})
			post := func(body string) (egress.Response, error) {
				return cl.Do(t.Context(), egress.Request{Method: http.MethodPost, URL: hook, ContentType: "application/json",
					Body: []byte(body), IdempotencyKey: c.key})
			}
			if r, err := post(`{"n":1}`); err != nil || r.Status != 200 {
				t.Fatalf("first POST: %v %v", r.Status, err)
			}
			if s := <-got; s.conn != 1 || s.body != `{"n":1}` || s.key != c.key {
				t.Fatalf("first request %+v", s)
			}
			r, err := post(`{"n":2}`)
			if s := <-got; s.conn != 1 || s.body != `{"n":2}` {
				t.Fatalf("second request %+v, want it on the kept-alive connection", s)
			}
			if c.wantErr {
				if err == nil {
					t.Fatal("a POST without an idempotency key was resent")
				}
				return
			}
			if err != nil || r.Status != 200 {
				t.Fatalf("second POST: %v %v; want it resent and answered", r.Status, err)
			}
			if s := <-got; s.conn != 2 || s.body != `{"n":2}` || s.key != c.key {
				t.Fatalf("resent request %+v, want the same body and key on a new connection", s)
			}
		})
	}
}
