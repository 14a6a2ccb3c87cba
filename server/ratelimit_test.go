package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/ratelimit"
	"github.com/payhook/payhook/server/servertest"
)

// limitsT0 is when the limits' tests start; their clock moves only when
// they move it.
var limitsT0 = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// startLimited starts a server on d with the limits set (every other one
// off) on the manual clock clk; 127.0.0.1 is a trusted proxy, so a test
// names its client's address in X-Forwarded-For. dsn, when not empty, is
// the database of another instance to share.
func startLimited(t *testing.T, d store.Dialect, clk *clock.Manual, dsn string, set func(*ratelimit.Limits)) *servertest.Instance {
	t.Helper()
	return servertest.Start(t, d, func(c *server.Config) {
		c.Limits = servertest.NoLimits()
		set(&c.Limits)
		c.Now = clk.Now
		c.ManualDelivery = true
		c.API.TrustedProxies = []string{"127.0.0.1"}
		if dsn != "" {
			c.Store.DB = dsn
		}
	})
}

// limitedResponse is an answer with its headers.
type limitedResponse struct {
	code   int
	header http.Header
	body   string
}

// header returns the value of the response's header name.
func (r limitedResponse) get(name string) string { return r.header.Get(name) }

// call makes a request to in as client (an address, named in
// X-Forwarded-For; "" for none) with key ("" for none) and a form body
// (nil for none); redirects are not followed.
func call(t *testing.T, method, u, key, client string, form url.Values) limitedResponse {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if key != "" {
		req.Header.Set("apikey", key)
	}
	if client != "" {
		req.Header.Set("X-Forwarded-For", client)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return limitedResponse{code: resp.StatusCode, header: resp.Header, body: string(b)}
}

// wantLimited checks an answer's status and its RateLimit headers
// (remaining, and retry-after: "" for none).
func wantLimited(t *testing.T, what string, r limitedResponse, code int, limit, remaining, reset, retryAfter string) {
	t.Helper()
	got := []string{r.get("RateLimit-Limit"), r.get("RateLimit-Remaining"), r.get("RateLimit-Reset"), r.get("Retry-After")}
	want := []string{limit, remaining, reset, retryAfter}
	if r.code != code || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%s: %d with limit/remaining/reset/retry-after %q, want %d with %q; body %s", what, r.code, got, code, want, r.body)
	}
}

// TestKeyRateLimit: every call of a key takes a token of its bucket, over
// REST and gRPC alike; past the burst the key is refused 429 (gRPC
// ResourceExhausted) with Retry-After, until the injected clock refills a
// token; another key of the project has its own bucket; and a second
// instance on the same database draws from the same buckets.
func TestKeyRateLimit(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(limitsT0)
			in := startLimited(t, d, clk, "", func(l *ratelimit.Limits) { l.KeyRate, l.KeyBurst = 2, 3 })
			list := in.BaseURL + "/notification/list/"
			for i, rest := range []string{"2", "1", "0"} {
				reset := []string{"1", "1", "2"}[i] // 0.5 s, 1 s, 1.5 s to full, rounded up
				wantLimited(t, "call "+rest, call(t, http.MethodGet, list, in.KeyA, "", nil), 200, "3", rest, reset, "")
			}
			r := call(t, http.MethodGet, list, in.KeyA, "", nil)
			wantLimited(t, "past the burst", r, http.StatusTooManyRequests, "3", "0", "2", "1")
			var body struct{ Status, Error string }
			if json.Unmarshal([]byte(r.body), &body) != nil || body.Status != "error" || !strings.Contains(body.Error, "too many requests: this API key may make 3 at once and 2 a second") {
				t.Fatalf("refusal body: %s", r.body)
			}
			// The project's other key has its own bucket.
			wantLimited(t, "another key", call(t, http.MethodGet, list, in.KeyA2, "", nil), 200, "3", "2", "1", "")

			// gRPC: the same bucket, ResourceExhausted with the wait in
			// the trailer and a RetryInfo detail.
			var trailer metadata.MD
			_, err := payhookv1.NewNotificationServiceClient(in.Conn).ListNotifications(servertest.WithKey(context.Background(), in.KeyA),
				&payhookv1.ListNotificationsRequest{}, grpc.Trailer(&trailer))
			st := status.Convert(err)
			if st.Code() != codes.ResourceExhausted || len(trailer.Get("retry-after")) == 0 || trailer.Get("retry-after")[0] != "1" {
				t.Fatalf("gRPC past the burst: %v, trailer %v", err, trailer)
			}
			if ds := st.Details(); len(ds) != 1 || ds[0].(*errdetails.RetryInfo).GetRetryDelay().AsDuration() != time.Second {
				t.Fatalf("gRPC refusal details: %v", ds)
			}

			// Half a second refills one token.
			clk.Advance(500 * time.Millisecond)
			wantLimited(t, "a token later", call(t, http.MethodGet, list, in.KeyA, "", nil), 200, "3", "0", "2", "")
			wantLimited(t, "and no more", call(t, http.MethodGet, list, in.KeyA, "", nil), 429, "3", "0", "2", "1")

			// A second instance on the same database shares the bucket.
			in2 := startLimited(t, d, clk, in.DSN, func(l *ratelimit.Limits) { l.KeyRate, l.KeyBurst = 2, 3 })
			list2 := in2.BaseURL + "/notification/list/"
			wantLimited(t, "second instance", call(t, http.MethodGet, list2, in.KeyA, "", nil), 429, "3", "0", "2", "1")
			clk.Advance(500 * time.Millisecond)
			wantLimited(t, "second instance, a token later", call(t, http.MethodGet, list2, in.KeyA, "", nil), 200, "3", "0", "2", "")
			wantLimited(t, "first instance after the second took it", call(t, http.MethodGet, list, in.KeyA, "", nil), 429, "3", "0", "2", "1")
		})
	}
}

// TestProjectRateLimit: the operator sets a project's own limit through
// the operator API; its keys follow it (within ratelimit.ProjectTTL) while
// other projects keep the server's, and a negative rate lifts the limit.
func TestProjectRateLimit(t *testing.T) {
	t.Parallel()
	d := store.SQLite
	clk := clock.NewManual(limitsT0)
	in := startLimited(t, d, clk, "", func(l *ratelimit.Limits) { l.KeyRate, l.KeyBurst = 100, 100 })
	op, _, err := apikey.CreateOperator(context.Background(), in.Server.DB().Client, "operator", clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := in.PostJSON(t, "/operator/project/rate-limit/", `{"project_id": `+itoa(in.ProjectB)+`, "rate_limit": 1, "rate_burst": 2}`, op)
	wantStatus(t, r, 200)
	if r.JSON["rate_limit"] != 1.0 || r.JSON["rate_burst"] != "2" {
		t.Fatalf("set rate limit: %s", r.Body)
	}
	bad := in.PostJSON(t, "/operator/project/rate-limit/", `{"project_id": `+itoa(in.ProjectB)+`, "rate_burst": -1}`, op)
	wantStatus(t, bad, 400)
	list := in.BaseURL + "/notification/list/"
	wantLimited(t, "project B's first", call(t, http.MethodGet, list, in.KeyB, "", nil), 200, "2", "1", "1", "")
	wantLimited(t, "project B's second", call(t, http.MethodGet, list, in.KeyB, "", nil), 200, "2", "0", "2", "")
	wantLimited(t, "project B's third", call(t, http.MethodGet, list, in.KeyB, "", nil), 429, "2", "0", "2", "1")
	wantLimited(t, "project A keeps the server's", call(t, http.MethodGet, list, in.KeyA, "", nil), 200, "100", "99", "1", "")

	r = in.PostJSON(t, "/operator/project/rate-limit/", `{"project_id": `+itoa(in.ProjectB)+`, "rate_limit": -5}`, op)
	wantStatus(t, r, 200)
	if r.JSON["rate_limit"] != -1.0 {
		t.Fatalf("no limit: %s", r.Body)
	}
	var listed struct {
		Projects []struct {
			ProjectID string  `json:"project_id"`
			RateLimit float64 `json:"rate_limit"`
			RateBurst string  `json:"rate_burst"`
		}
	}
	projects := in.Get(t, "/operator/project/list/", nil, op)
	if err := json.Unmarshal(projects.Body, &listed); err != nil {
		t.Fatal(err)
	}
	shown := false
	for _, p := range listed.Projects {
		shown = shown || (p.ProjectID == itoa(in.ProjectB) && p.RateLimit == -1 && p.RateBurst == "2")
	}
	if !shown {
		t.Fatalf("the project list does not show the limit: %s", projects.Body)
	}
	clk.Advance(ratelimit.ProjectTTL)
	for i := range 5 {
		if r := call(t, http.MethodGet, list, in.KeyB, "", nil); r.code != 200 || r.get("RateLimit-Limit") != "" {
			t.Fatalf("call %d without a limit: %d %v", i, r.code, r.header)
		}
	}
}

// TestAnonymousRateLimit: hosted pages, their status.json and the methods
// without a key (REST and direct gRPC) take tokens of the client's network
// (an IPv4 /24), named by a trusted proxy; another network is not
// affected; the injected clock refills.
func TestAnonymousRateLimit(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(limitsT0)
			in := startLimited(t, d, clk, "", func(l *ratelimit.Limits) { l.AnonRate, l.AnonBurst = 1, 3 })
			c := in.Get(t, "/checkout/request/", q("notify_url", "https://example.com/hook", "value", "25", "currency", "USD"), in.KeyA)
			wantStatus(t, c, 200)
			page := c.JSON["payment_url"].(string)
			const client, neighbour, other = "203.0.113.5", "203.0.113.200", "198.51.100.7"
			wantLimited(t, "page", call(t, http.MethodGet, page, "", client, nil), 200, "3", "2", "1", "")
			wantLimited(t, "status", call(t, http.MethodGet, page+"status.json", "", client, nil), 200, "3", "1", "2", "")
			wantLimited(t, "info", call(t, http.MethodGet, in.BaseURL+"/info/", "", client, nil), 200, "3", "0", "3", "")
			r := call(t, http.MethodGet, page, "", neighbour, nil)
			wantLimited(t, "page from the same /24", r, 429, "3", "0", "3", "1")
			if !strings.Contains(r.body, "Too many requests from your network. Wait 1 second and") || r.get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("page refusal: %s", r.body)
			}
			// In the visitor's language.
			r = call(t, http.MethodGet, page+"?lang=de", "", neighbour, nil)
			if r.code != 429 || !strings.Contains(r.body, `<html lang="de">`) || !strings.Contains(r.body, "Zu viele Anfragen aus Ihrem Netzwerk") {
				t.Fatalf("page refusal in German: %d %s", r.code, r.body)
			}
			r = call(t, http.MethodGet, page+"status.json", "", client, nil)
			wantLimited(t, "status refused", r, 429, "3", "0", "3", "1")
			if !strings.Contains(r.body, `"status":"error"`) || r.get("Content-Type") != "application/json" {
				t.Fatalf("status.json refusal: %s %v", r.body, r.header)
			}
			r = call(t, http.MethodGet, in.BaseURL+"/pubkey/", "", client, nil)
			wantLimited(t, "pubkey refused", r, 429, "3", "0", "3", "1")
			// An API key sent to a method that needs none does not escape
			// the network's limit.
			wantLimited(t, "info with a key", call(t, http.MethodGet, in.BaseURL+"/info/", in.KeyA, client, nil), 429, "3", "0", "3", "1")
			// Another network has its own bucket.
			wantLimited(t, "another network", call(t, http.MethodGet, page, "", other, nil), 200, "3", "2", "1", "")
			// A direct gRPC client is limited by its peer's network
			// (127.0.0.0/24 here).
			info := payhookv1.NewAddressServiceClient(in.Conn)
			for range 3 {
				if _, err := info.GetInfo(context.Background(), &payhookv1.GetInfoRequest{}); err != nil {
					t.Fatalf("gRPC GetInfo within the burst: %v", err)
				}
			}
			if _, err := info.GetInfo(context.Background(), &payhookv1.GetInfoRequest{}); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("gRPC GetInfo past the burst: %v", err)
			}
			// Naming another network in metadata escapes nothing: only the
			// server's own connection's is read, and the gateway's replaces
			// a client's.
			forged := metadata.AppendToOutgoingContext(context.Background(),
				"payhook-limiter-token", "guess", "payhook-client-network", "192.0.2.0/24")
			if _, err := info.GetInfo(forged, &payhookv1.GetInfoRequest{}); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("gRPC GetInfo naming another network: %v", err)
			}
			req, _ := http.NewRequest(http.MethodGet, in.BaseURL+"/info/", nil)
			req.Header.Set("X-Forwarded-For", client)
			req.Header.Set("Grpc-Metadata-Payhook-Client-Network", "192.0.2.0/24")
			req.Header.Set("Grpc-Metadata-Payhook-Limiter-Token", "guess")
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 429 {
				t.Fatalf("REST naming another network: %v %v", resp, err)
			} else {
				resp.Body.Close()
			}
			// A second refills one token.
			clk.Advance(time.Second)
			wantLimited(t, "a second later", call(t, http.MethodGet, page, "", neighbour, nil), 200, "3", "0", "3", "")
		})
	}
}

// TestHostedAddressCaps: a hosted checkout page hands out at most
// InvoiceAddresses addresses (the merchant's key is not held to it); a
// subscription's page at most SubscriptionAddresses open ones, until its
// renewals expire. A refusal is a 409 page that says what to do.
func TestHostedAddressCaps(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(limitsT0)
			in := startLimited(t, d, clk, "", func(l *ratelimit.Limits) { l.InvoiceAddresses, l.SubscriptionAddresses = 2, 3 })
			c := in.Get(t, "/checkout/request/", q("notify_url", "https://example.com/hook", "value", "25", "currency", "USD"), in.KeyA)
			wantStatus(t, c, 200)
			page := c.JSON["payment_url"].(string)
			choose := func(page, coin string, extra ...string) limitedResponse {
				t.Helper()
				form := url.Values{"coin": {coin}}
				for i := 0; i+1 < len(extra); i += 2 {
					form.Set(extra[i], extra[i+1])
				}
				return call(t, http.MethodPost, page, "", "", form)
			}
			for _, coin := range []string{"btc", "ltc", "btc"} {
				if r := choose(page, coin); r.code != http.StatusSeeOther {
					t.Fatalf("choose %s: %d %s", coin, r.code, r.body)
				}
			}
			r := choose(page, "doge")
			if r.code != http.StatusConflict || !strings.Contains(r.body, "already has 2 addresses") || !strings.Contains(r.body, "BTC, LTC") {
				t.Fatalf("a third coin on the page: %d %s", r.code, r.body)
			}
			// The merchant's key is not held to the page's cap.
			a := in.Get(t, "/checkout/address/", q("payment_id", c.JSON["payment_id"].(string), "coin", "doge"), in.KeyA)
			wantStatus(t, a, 200)

			s := in.Get(t, "/subscription/create/", q("notify_url", "https://example.com/hook", "currency", "USD",
				"option", "1m:50", "option", "12m:500"), in.KeyA)
			wantStatus(t, s, 200)
			sub := s.JSON["subscription_url"].(string)
			for _, oc := range [][2]string{{"1m", "btc"}, {"1m", "ltc"}, {"12m", "btc"}, {"1m", "btc"}} {
				if r := choose(sub, oc[1], "option", oc[0]); r.code != http.StatusSeeOther {
					t.Fatalf("subscription %s %s: %d %s", oc[0], oc[1], r.code, r.body)
				}
			}
			r = choose(sub, "ltc", "option", "12m")
			if r.code != http.StatusConflict || !strings.Contains(r.body, "has 3 payment addresses open") || !strings.Contains(r.body, "in 60 min") {
				t.Fatalf("a fourth open address on the subscription's page: %d %s", r.code, r.body)
			}
			// Once the renewals expire, the page hands out addresses again.
			clk.Advance(time.Hour)
			if r := choose(sub, "ltc", "option", "12m"); r.code != http.StatusSeeOther {
				t.Fatalf("after the renewals expired: %d %s", r.code, r.body)
			}
		})
	}
}

// TestTestEventQuota: POST /notification/test/ sends TestEvents a day per
// project; the next is 429 with Retry-After until the clock refills one.
func TestTestEventQuota(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(limitsT0)
			in := startLimited(t, d, clk, "", func(l *ratelimit.Limits) { l.TestEvents = 3 })
			test := in.BaseURL + "/notification/test/?url=" + url.QueryEscape("https://example.com/hook")
			for i := range 3 {
				if r := call(t, http.MethodPost, test, in.KeyA, "", nil); r.code != 200 {
					t.Fatalf("test webhook %d: %d %s", i, r.code, r.body)
				}
			}
			r := call(t, http.MethodPost, test, in.KeyA, "", nil)
			// Three a day: one every 8 hours.
			if r.code != 429 || r.get("Retry-After") != "28800" || !strings.Contains(r.body, "this project may send 3 a day") || !strings.Contains(r.body, "retry in 8 h") {
				t.Fatalf("the fourth test webhook: %d %v %s", r.code, r.header, r.body)
			}
			// A refused URL takes nothing.
			bad := call(t, http.MethodPost, in.BaseURL+"/notification/test/?url=ftp://x", in.KeyA, "", nil)
			if bad.code != 400 {
				t.Fatalf("a bad URL: %d %s", bad.code, bad.body)
			}
			if r := call(t, http.MethodPost, test, in.KeyB, "", nil); r.code != 200 {
				t.Fatalf("another project: %d %s", r.code, r.body)
			}
			n, err := in.Server.DB().Client.Notification.Query().Count(context.Background())
			if err != nil || n != 4 {
				t.Fatalf("%d notifications stored (%v), want 4", n, err)
			}
			clk.Advance(8 * time.Hour)
			if r := call(t, http.MethodPost, test, in.KeyA, "", nil); r.code != 200 {
				t.Fatalf("8 hours later: %d %s", r.code, r.body)
			}
		})
	}
}
