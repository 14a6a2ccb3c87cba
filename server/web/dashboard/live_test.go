package dashboard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/web/dashboard"
	"github.com/payhook/payhook/server/web/webtest"
)

// eachLiveDialect runs fn as a parallel subtest per database dialect; fn
// passes liveDatabase(t, d) to newDash. PostgreSQL is skipped where none is
// reachable (outside CI).
func eachLiveDialect(t *testing.T, fn func(t *testing.T, d store.Dialect)) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

// liveDatabase points a test server at a fresh database of dialect d
// (newDash's is SQLite).
func liveDatabase(t *testing.T, d store.Dialect) func(*server.Config) {
	return func(c *server.Config) {
		if d != store.SQLite {
			c.Store.DB = storetest.DSN(t, d)
		}
	}
}

// sseEvent is one server-sent event.
type sseEvent struct{ ID, Event, Data string }

// delivery is the data of an event "delivery".
type delivery struct {
	UUID           string `json:"uuid"`
	Kind           string `json:"kind"`
	Attempt        int    `json:"attempt"`
	Outcome        string `json:"outcome"`
	HTTPStatus     *int   `json:"http_status"`
	DeliveryStatus string `json:"delivery_status"`
	Error          string `json:"error"`
}

// sseStream is an open /dashboard/events stream, read by a goroutine
// that ends when the stream does or the test does.
type sseStream struct {
	events chan sseEvent
	done   chan struct{}
	cancel context.CancelFunc
}

// streamWait bounds every wait for something on a stream.
const streamWait = 15 * time.Second

// stream opens path as u, with the Last-Event-ID lastID when it is not
// empty. A response that is not an event stream is returned as a page
// (with a nil stream).
func (u *user) stream(path, lastID string) (*sseStream, webtest.Page) {
	u.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := u.c.Do(req)
	if err != nil {
		cancel()
		u.t.Fatal(err)
	}
	p := webtest.Page{Code: resp.StatusCode, Header: resp.Header, URL: path}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		resp.Body.Close()
		cancel()
		p.Body = b.String()
		return nil, p
	}
	s := &sseStream{events: make(chan sseEvent, 64), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(s.done)
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if ev.Event != "" || ev.Data != "" {
					select {
					case s.events <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev = sseEvent{}
				continue
			}
			if strings.HasPrefix(line, ":") {
				continue // a comment: the heartbeat
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.ID = value
			case "event":
				ev.Event = value
			case "data":
				ev.Data += value
			}
		}
	}()
	u.t.Cleanup(s.close)
	return s, p
}

// close ends the stream from the client's side and waits for its reader.
func (s *sseStream) close() {
	s.cancel()
	<-s.done
}

// next returns the next event, failing the test if the stream ends or
// nothing comes in time.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(streamWait):
		t.Fatal("no event in time")
	}
	return sseEvent{}
}

// delivery returns the next event, which must be a delivery event.
func (s *sseStream) delivery(t *testing.T) (string, delivery) {
	t.Helper()
	ev := s.next(t)
	var d delivery
	if ev.Event != "delivery" || json.Unmarshal([]byte(ev.Data), &d) != nil || ev.ID == "" {
		t.Fatalf("event %+v, want a delivery event", ev)
	}
	return ev.ID, d
}

// ended waits for the stream to end and returns the events that came
// before the end.
func (s *sseStream) ended(t *testing.T) []sseEvent {
	t.Helper()
	var seen []sseEvent
	timeout := time.After(streamWait)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return seen
			}
			seen = append(seen, ev)
		case <-timeout:
			t.Fatalf("the stream did not end; it sent %+v", seen)
		}
	}
}

// testWebhook stores a test webhook of the project of key (a created
// event) and returns its uuid.
func (d *dash) testWebhook(t *testing.T, key string) string {
	t.Helper()
	r := d.in.Do(t, http.MethodPost, d.in.BaseURL+"/notification/test/?url="+url.QueryEscape(d.hook), key)
	if r.Code != 200 {
		t.Fatalf("test webhook: %d %s", r.Code, r.Body)
	}
	return r.JSON["uuid"].(string)
}

// TestDashboardLiveEvents: a signed-in user's stream of one notification
// carries the attempt a resend makes, with its uuid and outcome, and not
// the notification's past events; another project's stream never sees
// it; a reconnect with Last-Event-ID resumes right after the last event
// seen; a visitor without a session gets no stream.
func TestDashboardLiveEvents(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		id := d.failedNotification(t)
		a := d.user(t)
		_, token := a.signIn(d.emailA, password)
		b := d.user(t)
		b.signIn(d.emailB, password)

		s, p := a.stream("/dashboard/events?uuid="+url.QueryEscape(id), "")
		if s == nil {
			t.Fatalf("no stream: %d %s", p.Code, p.Body)
		}
		if cc := p.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q", cc)
		}
		sb, _ := b.stream("/dashboard/events", "")
		if sb == nil {
			t.Fatal("project B: no stream")
		}
		a.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", url.Values{"csrf": {token}}).Want(t, http.StatusSeeOther)
		d.runDue(t)
		cursor, ev := s.delivery(t)
		if ev.UUID != id || ev.Kind != "attempt" || ev.Attempt != 2 || ev.Outcome != "failed" ||
			ev.HTTPStatus == nil || *ev.HTTPStatus != 500 || ev.DeliveryStatus != "failed" {
			t.Fatalf("resend's event: %+v", ev)
		}

		// Project B's stream: its own next event comes first, so A's never
		// came before it.
		mine := d.testWebhook(t, d.in.KeyB)
		if _, ev := sb.delivery(t); ev.UUID != mine || ev.Kind != "created" {
			t.Fatalf("project B's stream sent %+v, want its own notification %s", ev, mine)
		}

		// A reconnect from the start replays every event of the notification
		// in cursor order; one from the cursor before the resend's event
		// starts with it.
		all, _ := a.stream("/dashboard/events?uuid="+url.QueryEscape(id), "0")
		var ids []int64
		var kinds []string
		for {
			c, ev := all.delivery(t)
			if ev.UUID != id {
				t.Fatalf("replay sent %+v", ev)
			}
			n, _ := strconv.ParseInt(c, 10, 64)
			if len(ids) > 0 && n <= ids[len(ids)-1] {
				t.Fatalf("cursors out of order: %v then %d", ids, n)
			}
			ids, kinds = append(ids, n), append(kinds, ev.Kind)
			if c == cursor {
				break
			}
		}
		if kinds[0] != "created" || kinds[1] != "attempt" || len(ids) < 3 {
			t.Fatalf("replay: %v %v", ids, kinds)
		}
		resumed, _ := a.stream("/dashboard/events?uuid="+url.QueryEscape(id), strconv.FormatInt(ids[len(ids)-2], 10))
		if c, ev := resumed.delivery(t); c != cursor || ev.Attempt != 2 {
			t.Fatalf("resumed at %s with %+v, want %s", c, ev, cursor)
		}

		// No session, no stream; a bad cursor is a 400.
		anon := d.user(t)
		if s, p := anon.stream("/dashboard/events", ""); s != nil || p.Code != http.StatusSeeOther || p.Header.Get("Location") != "/dashboard/signin" {
			t.Fatalf("signed out: %d %v", p.Code, p.Header)
		}
		if s, p := a.stream("/dashboard/events", "yesterday"); s != nil || p.Code != http.StatusBadRequest || !strings.Contains(p.Body, "Last-Event-ID") {
			t.Fatalf("bad Last-Event-ID: %d %s", p.Code, p.Body)
		}
	})
}

// TestDashboardLiveOutlivesTimeouts: a stream stays open past the
// server's read and write timeouts (set short here; they are set when a
// request starts) and still carries events afterwards.
func TestDashboardLiveOutlivesTimeouts(t *testing.T) {
	t.Parallel()
	// Long enough for a sign-in's password hash on a busy machine.
	const timeout = 3 * time.Second
	d := newDash(t, func(c *server.Config) { c.API.ReadTimeout, c.API.WriteTimeout = timeout, timeout })
	a := d.user(t)
	a.signIn(d.emailA, password)
	s, p := a.stream("/dashboard/events", "")
	if s == nil {
		t.Fatalf("no stream: %d", p.Code)
	}
	// Waiting is the point here: nothing may arrive, and the stream must
	// not end, until both deadlines have passed.
	select {
	case ev, ok := <-s.events:
		t.Fatalf("before any change: %+v (open %v)", ev, ok)
	case <-time.After(timeout + timeout/2):
	}
	id := d.testWebhook(t, d.in.KeyA)
	if _, ev := s.delivery(t); ev.UUID != id || ev.Kind != "created" || ev.DeliveryStatus != "pending" {
		t.Fatalf("after the timeouts: %+v", ev)
	}
}

// TestDashboardLiveSessionEnds: a stream ends, with an "end" event, once
// its session is signed out or expires (noticed at its next wake), while
// another session's stream goes on.
func TestDashboardLiveSessionEnds(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		a1, a2 := d.user(t), d.user(t)
		_, token := a1.signIn(d.emailA, password)
		a2.signIn(d.emailA, password)
		s1, _ := a1.stream("/dashboard/events", "")
		s2, _ := a2.stream("/dashboard/events", "")
		if s1 == nil || s2 == nil {
			t.Fatal("no stream")
		}
		if p := a1.do(http.MethodPost, "/dashboard/signout", url.Values{"csrf": {token}}); p.Code != http.StatusSeeOther {
			t.Fatalf("sign out: %d", p.Code)
		}
		id := d.testWebhook(t, d.in.KeyA) // wakes both streams
		if seen := s1.ended(t); len(seen) == 0 || seen[len(seen)-1].Event != "end" {
			t.Fatalf("signed-out stream sent %+v before it ended, want an end event last", seen)
		}
		if _, ev := s2.delivery(t); ev.UUID != id {
			t.Fatalf("the other session's stream sent %+v", ev)
		}
		d.clock.Advance(dashboard.DefaultSessionTTL + time.Minute)
		d.testWebhook(t, d.in.KeyA)
		if seen := s2.ended(t); len(seen) == 0 || seen[len(seen)-1].Event != "end" {
			t.Fatalf("expired session's stream sent %+v, want an end event last", seen)
		}
	})
}

// TestDashboardLiveBound: one session holds at most
// MaxLiveStreamsPerSession streams; the next is refused with 429 until one
// closes.
func TestDashboardLiveBound(t *testing.T) {
	t.Parallel()
	d := newDash(t)
	a := d.user(t)
	a.signIn(d.emailA, password)
	var open []*sseStream
	for range dashboard.MaxLiveStreamsPerSession {
		s, p := a.stream("/dashboard/events", "")
		if s == nil {
			t.Fatalf("stream %d refused: %d", len(open)+1, p.Code)
		}
		open = append(open, s)
	}
	if s, p := a.stream("/dashboard/events", ""); s != nil || p.Code != http.StatusTooManyRequests {
		t.Fatalf("one stream too many: %d", p.Code)
	}
	// Another session has its own share.
	other := d.user(t)
	other.signIn(d.emailA, password)
	if s, p := other.stream("/dashboard/events", ""); s == nil {
		t.Fatalf("another session refused: %d", p.Code)
	}
	// Closing one frees its slot once the server notices.
	open[0].close()
	deadline := clock.Now().Add(streamWait)
	for {
		s, p := a.stream("/dashboard/events", "")
		if s != nil {
			break
		}
		if p.Code != http.StatusTooManyRequests || clock.Now().After(deadline) {
			t.Fatalf("after closing one: %d", p.Code)
		}
	}
}

// TestDashboardLiveShutdown: a server with an open stream shuts down
// promptly (the stream ends when the notifier closes its watchers, before
// the HTTP server drains), and the stream ends.
func TestDashboardLiveShutdown(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		a := d.user(t)
		a.signIn(d.emailA, password)
		s, _ := a.stream("/dashboard/events", "")
		if s == nil {
			t.Fatal("no stream")
		}
		start := clock.Now()
		if err := d.in.Server.Stop(); err != nil {
			t.Fatal(err)
		}
		// The drain's deadline in tests is 5s: a stream holding the server
		// open would take all of it.
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("shutdown took %s with a stream open", took)
		}
		if seen := s.ended(t); len(seen) != 0 {
			t.Fatalf("stream sent %+v", seen)
		}
	})
}

// TestDashboardActivity: the activity page plots the project's attempts
// as two SVGs with a legend and a table of totals, styled without inline
// style; a project without attempts gets a message instead of a plot.
func TestDashboardActivity(t *testing.T) {
	t.Parallel()
	eachLiveDialect(t, func(t *testing.T, dialect store.Dialect) {
		d := newDash(t, liveDatabase(t, dialect))
		id := d.failedNotification(t) // one failed attempt at 12:00, now 14:00
		a := d.user(t)
		_, token := a.signIn(d.emailA, password)
		a.do(http.MethodPost, "/dashboard/notifications/"+id+"/resend", url.Values{"csrf": {token}}).Want(t, http.StatusSeeOther)
		d.runDue(t) // a second failed attempt, at 14:00

		p := a.do(http.MethodGet, "/dashboard/activity/", nil)
		p.Want(t, 200, `aria-current="page">Activity`, `id="deliveries-plot"`, `id="latency-plot"`, `role="img"`,
			`<rect class="out-failed"`, "Nov 24 12:00–13:00 UTC: 1 failed", "Nov 24 14:00–15:00 UTC: 1 failed",
			`<span class="swatch out-acknowledged">`, `id="activity-totals"`, "0 acknowledged, 2 failed, 0 blocked, 0 interrupted in all",
			"2026-11-22 15:00:00 UTC to 2026-11-24 15:00:00 UTC")
		p.WantNot(t, "style=", "activity-empty")
		totals := p.Body[strings.Index(p.Body, `id="activity-totals"`):]
		totals = totals[:strings.Index(totals, "</table>")]
		if !strings.Contains(totals, "<tbody><tr><td>0</td><td>2</td><td>0</td><td>0</td><td>0</td>") {
			t.Fatalf("totals table:\n%s", totals)
		}
		if a.do(http.MethodGet, "/dashboard/activity", nil).Code != http.StatusMovedPermanently {
			t.Fatal("/dashboard/activity does not redirect")
		}

		b := d.user(t)
		b.signIn(d.emailB, password)
		q := b.do(http.MethodGet, "/dashboard/activity/", nil)
		q.Want(t, 200, `id="activity-empty"`, "No delivery attempts in the last 48 hours")
		q.WantNot(t, "<svg", id)

		// 49 hours later the attempts are out of the window.
		d.clock.Advance(49 * time.Hour)
		later := d.user(t)
		later.signIn(d.emailA, password)
		later.do(http.MethodGet, "/dashboard/activity/", nil).Want(t, 200, `id="activity-empty"`)
	})
}
