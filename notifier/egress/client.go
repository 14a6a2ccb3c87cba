package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// Defaults of Config.
const (
	// DefaultTimeout is the spec's limit for one delivery attempt.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBody is how many response body bytes are kept by default.
	DefaultMaxBody = 64 << 10
	// DefaultUserAgent identifies payhook's callbacks.
	DefaultUserAgent = "payhook/1 (+webhook)"
)

// drainLimit bounds how much of an unread response body is discarded so
// the connection can be reused; a longer body closes the connection.
const drainLimit = 64 << 10

// Config configures the egress client. The zero value is usable: unset
// fields take their defaults (WithDefaults).
type Config struct {
	// Timeout bounds one attempt: connect, TLS, request and response body.
	// Default 30s, the spec's limit.
	Timeout time.Duration
	// MaxBody is how many response body bytes are read; the rest is
	// discarded and Response.Truncated is set. Default 64 KiB.
	MaxBody int64
	// AllowPrivate lists exact endpoints (scheme, host, port, path; see
	// ParseEndpoint) that one owner's requests may send to although they
	// reach private, loopback and other blocked addresses: OWNER=URL, or
	// URL alone for DefaultOwner (see ParseAllowance). Only the operator
	// sets these (--allow-private-endpoint); merchants cannot.
	AllowPrivate []string
	// DefaultOwner owns the AllowPrivate entries written without OWNER=.
	DefaultOwner int64
	// UserAgent is sent with every request. Default "payhook/1 (+webhook)".
	UserAgent string
	// IdlePerHost is how many idle keep-alive connections are kept per
	// destination; it should match the caller's per-host concurrency so
	// connections are reused rather than redialled. Default 4.
	IdlePerHost int
}

// WithDefaults returns c with unset (zero) fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.IdlePerHost == 0 {
		c.IdlePerHost = 4
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	return c
}

// Validate reports the first bad field: a negative Timeout or MaxBody, a
// UserAgent with control characters, or an AllowPrivate entry that is not
// an exact endpoint of an owner.
func (c Config) Validate() error {
	if c.Timeout < 0 {
		return fmt.Errorf("%w: Timeout %s is negative", ErrInvalidConfig, c.Timeout)
	}
	if c.MaxBody < 0 {
		return fmt.Errorf("%w: MaxBody %d is negative", ErrInvalidConfig, c.MaxBody)
	}
	if strings.ContainsFunc(c.UserAgent, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: UserAgent %q has control characters", ErrInvalidConfig, c.UserAgent)
	}
	for i, raw := range c.AllowPrivate {
		if _, err := ParseAllowance(raw, c.DefaultOwner); err != nil {
			return fmt.Errorf("%w: AllowPrivate[%d]: %w", ErrInvalidConfig, i, err)
		}
	}
	return nil
}

// Client is the one outbound HTTP client for merchant callbacks. It is safe
// for concurrent use and keeps connections alive between attempts.
type Client struct {
	cfg     Config
	rules   *Rules       // the URL and host rules with cfg.AllowPrivate
	guarded *http.Client // every request not matching an endpoint allowed to its owner
	private *http.Client // only requests whose URL matches an endpoint allowed to their owner
}

// New returns a client for cfg after WithDefaults and Validate; an error
// names the bad field or AllowPrivate entry.
func New(cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rules, err := NewRules(cfg.AllowPrivate, cfg.DefaultOwner)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, rules: rules}
	c.guarded = newHTTPClient(cfg.Timeout, cfg.IdlePerHost, guardedControl)
	c.private = newHTTPClient(cfg.Timeout, cfg.IdlePerHost, networkControl)
	return c, nil
}

// newHTTPClient builds a client that never uses a proxy, never follows
// redirects, verifies TLS and bounds every phase by timeout. control runs
// on every dialled address, after DNS resolution and before connect.
func newHTTPClient(timeout time.Duration, idlePerHost int, control func(network, address string, c syscall.RawConn) error) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: control}
	transport := &http.Transport{
		Proxy:                  nil, // never from the environment: a proxy would dial for us, unchecked
		DialContext:            dialer.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           max(100, 4*idlePerHost),
		MaxIdleConnsPerHost:    idlePerHost,
		IdleConnTimeout:        90 * time.Second,
		ForceAttemptHTTP2:      true,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the answer, and a failure
		},
		Timeout: timeout,
	}
}

// Request is one delivery attempt.
type Request struct {
	// Owner is whose request this is (the notifier's owner: payhook's
	// project id): only the operator's exceptions for this owner apply.
	Owner int64
	// Method is the HTTP method; empty means GET.
	Method string
	// URL is the full destination, query included; it must pass CheckURL.
	URL string
	// ContentType is sent as Content-Type when not empty.
	ContentType string
	// Body is sent byte for byte (signatures cover these exact bytes).
	Body []byte
	// Header holds extra headers (for example the signature). User-Agent
	// and Content-Type are set by the client and override entries here.
	Header http.Header
	// IdempotencyKey, when set, is sent as Idempotency-Key. It also marks a
	// POST as safe to resend: when a kept-alive connection turns out to
	// have been closed by the server as the request went out (a server's
	// idle timeout racing the reuse), the request is sent again on a new
	// connection within the same attempt instead of failing it.
	IdempotencyKey string
}

// Response is the merchant's answer to one attempt.
type Response struct {
	// Status is the HTTP status code; 3xx are returned, not followed.
	Status int
	// Body holds at most Config.MaxBody bytes of the response body.
	Body []byte
	// Truncated is set when the body was longer than Config.MaxBody.
	Truncated bool
	// Duration is the time from the start of Do to the end of reading the
	// body.
	Duration time.Duration
}

// Rules returns the destination rules this client applies, with its
// AllowPrivate exceptions, so that a URL can be refused before it is ever
// stored with exactly the reason an attempt would give.
func (c *Client) Rules() *Rules { return c.rules }

// Do makes one attempt. The URL is checked with the client's Rules (CheckURL,
// and CheckHost) and every address dialled is checked with Classify, unless
// the URL exactly matches an AllowPrivate endpoint of the request's Owner; a
// refusal is returned as *BlockedError. Redirects
// are not followed. The whole attempt is bounded by Config.Timeout; running
// out returns an error wrapping ErrTimeout, and cancellation of ctx returns
// ctx's error. Any HTTP status is a Response with a nil error: judge it with
// Acknowledged. Errors never contain the URL.
func (c *Client) Do(ctx context.Context, r Request) (Response, error) {
	start := clock.Now()
	_, _, allowed, err := c.rules.check(r.Owner, r.URL)
	if err != nil {
		return Response{}, &BlockedError{Reason: err.Error()}
	}
	client := c.guarded
	if allowed {
		client = c.private
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	// r.URL, not u.String(): the query is sent exactly as stored (GET
	// signatures cover it).
	req, err := http.NewRequestWithContext(actx, method, r.URL, body)
	if err != nil {
		return Response{}, fmt.Errorf("build %s request: %w", method, unwrapURLError(err))
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	if r.IdempotencyKey != "" {
		// net/http resends a request with this header (and a rewindable
		// body, which bytes.Reader gives) after a stale-connection error.
		req.Header.Set("Idempotency-Key", r.IdempotencyKey)
	}
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{Duration: time.Since(start)}, c.attemptError(ctx, actx, method+" request", err)
	}
	defer func() {
		// Drain a little so the connection can be reused; Close gives up
		// the connection when more remains.
		_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
		_ = resp.Body.Close()
	}()
	out := Response{Status: resp.StatusCode}
	out.Body, err = io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBody+1))
	if int64(len(out.Body)) > c.cfg.MaxBody {
		out.Body, out.Truncated = out.Body[:c.cfg.MaxBody], true
	}
	out.Duration = time.Since(start)
	if err != nil {
		return out, c.attemptError(ctx, actx, "read response body", err)
	}
	return out, nil
}

// attemptError turns a transport error into the error Do returns: the
// *BlockedError of a refused dial, ctx's own error when the caller gave up,
// ErrTimeout when the attempt ran out of time, otherwise the error without
// the URL (which *url.Error repeats).
func (c *Client) attemptError(ctx, actx context.Context, op string, err error) error {
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		return blocked
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", op, ctx.Err())
	}
	var ne net.Error
	if errors.Is(actx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w after %s", ErrTimeout, c.cfg.Timeout)
	}
	return fmt.Errorf("%s: %w", op, unwrapURLError(err))
}

// unwrapURLError drops what an error says about this side rather than the
// merchant's: the URL (*url.Error), payhook's own address (net.OpError's
// Source) and its DNS server (net.DNSError's Server). The result is stored
// in attempt logs that merchants read.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if oe, ok := err.(*net.OpError); ok {
		c := *oe
		c.Source = nil
		c.Err = withoutDNSServer(c.Err)
		return &c
	}
	return withoutDNSServer(err)
}

func withoutDNSServer(err error) error {
	if de, ok := err.(*net.DNSError); ok {
		c := *de
		c.Server = ""
		return &c
	}
	return err
}

// CloseIdleConnections closes kept-alive connections, for shutdown and
// tests.
func (c *Client) CloseIdleConnections() {
	c.guarded.CloseIdleConnections()
	c.private.CloseIdleConnections()
}

// guardedControl refuses any network but tcp4 and tcp6 and any address
// that Classify or code.dny.dev/ssrf blocks. It sees the address actually
// being connected to, after DNS resolution, so a DNS answer (or a rebinding
// one) cannot lead to a blocked address.
func guardedControl(network, address string, c syscall.RawConn) error {
	if err := networkControl(network, address, c); err != nil {
		return err
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &BlockedError{Reason: fmt.Sprintf("address %q is not an IP address and port", address)}
	}
	if blocked, reason := Classify(ap.Addr()); blocked {
		return &BlockedError{Reason: ap.Addr().String() + " is " + reason}
	}
	// Classify already applies the library's lists; this keeps the
	// library's own verdict final should the two ever disagree.
	if err := guard.Safe(network, address, c); err != nil {
		return &BlockedError{Reason: ap.Addr().String() + " is refused by the SSRF guard (" + err.Error() + ")"}
	}
	return nil
}

// networkControl refuses any network but tcp4 and tcp6. It is all the
// checking an operator-allowed endpoint gets.
func networkControl(network, _ string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return &BlockedError{Reason: fmt.Sprintf("network %s is not tcp4 or tcp6", network)}
	}
	return nil
}
