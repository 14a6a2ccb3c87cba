package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier"
)

// MaxLiveStreamsPerSession bounds one session's open live streams: a
// browser keeps about six connections per host over HTTP/1.1, so more tabs
// streaming than this would leave none for loading pages.
const MaxLiveStreamsPerSession = 4

// MaxLiveStreamsPerProject bounds one project's open live streams, all its
// users and sessions together: one project cannot take every slot of the
// server (sign-ins are not limited when they succeed, and each opens a
// session).
const MaxLiveStreamsPerProject = 16

// liveWriteTimeout is how long a client may take to accept one write of a
// live stream; the server's WriteTimeout does not apply to a stream, but a
// client that stops reading must not hold it for ever.
const liveWriteTimeout = 30 * time.Second

// liveRetry is the reconnection delay the stream asks EventSource for.
const liveRetry = 3 * time.Second

// livePage is how many events one read of the event log returns.
const livePage = 200

// liveRoutes serves the dashboard's pages of live delivery events (server-sent events) and the activity plots when rest (the path below
// /dashboard/) is one of theirs, and reports whether it did.
func (h *Handler) liveRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	switch {
	case rest == "events" && get:
		h.liveEvents(w, r, s)
	case rest == "activity/" && get:
		h.activityPage(w, r, s)
	case rest == "activity" && get:
		http.Redirect(w, r, Prefix+"activity/", http.StatusMovedPermanently)
	default:
		return false
	}
	return true
}

// liveEvent is one delivery event as the dashboard's script receives it:
// only what the project's own event log says.
type liveEvent struct {
	UUID           string     `json:"uuid"`
	Kind           string     `json:"kind"`
	Attempt        int        `json:"attempt"`
	Outcome        string     `json:"outcome,omitempty"`
	HTTPStatus     *int       `json:"http_status,omitempty"`
	DeliveryStatus string     `json:"delivery_status"`
	NextAttemptAt  *time.Time `json:"next_attempt_at,omitempty"`
	Error          string     `json:"error,omitempty"`
	Time           time.Time  `json:"time"`
}

// maxUUIDFilter bounds the uuid a stream may be filtered by.
const maxUUIDFilter = 128

// liveEvents streams the session's project's delivery events as
// server-sent events (event "delivery", id the event cursor), after the
// Last-Event-ID header when given (an EventSource reconnecting misses
// nothing), else from now. The event log in the database is the truth; a
// signal from the notifier, a poll (events of other instances) or a
// heartbeat wakes the stream to read it. The stream ends when the client
// goes, when the session ends (checked at each wake; an "end" event tells
// the script not to reconnect) and at shutdown (the notifier closes its
// watchers before the HTTP server drains).
func (h *Handler) liveEvents(w http.ResponseWriter, r *http.Request, s *session) {
	ctx := r.Context()
	f := notifier.EventFilter{Owner: s.user.ProjectID, UUID: r.URL.Query().Get("uuid")}
	if len(f.UUID) > maxUUIDFilter {
		http.Error(w, fmt.Sprintf("uuid: longer than %d characters", maxUUIDFilter), http.StatusBadRequest)
		return
	}
	var cursor int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		c, err := strconv.ParseInt(v, 10, 64)
		if err != nil || c < 0 {
			http.Error(w, "Last-Event-ID: not an event cursor", http.StatusBadRequest)
			return
		}
		cursor = c
	}
	release, ok := h.liveStreams.acquire(s.row.ID, s.user.ProjectID)
	if !ok {
		// EventSource does not retry after an error status: the page stays
		// as it is, like a page without script.
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many live streams are open; close other dashboard tabs", http.StatusTooManyRequests)
		return
	}
	defer release()
	// Subscribe before reading the cursor: an event committed in between
	// is newer than the cursor, so the first read sends it.
	signal, unsubscribe := h.cfg.Events.Subscribe(s.user.ProjectID)
	defer unsubscribe()
	if r.Header.Get("Last-Event-ID") == "" {
		c, err := h.cfg.Events.LastCursor(ctx, s.user.ProjectID)
		if err != nil {
			h.pages.Fail(w, "live events", err)
			return
		}
		cursor = c
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	rc := http.NewResponseController(w)
	// The server's read deadline would cancel the request (its background
	// read times out) and its write deadline would cut the stream: lift
	// the first, and give each write its own deadline instead.
	_ = rc.SetReadDeadline(time.Time{})
	st := &sseWriter{w: w, rc: rc}
	st.printf("retry: %d\n\n", liveRetry.Milliseconds())
	if st.flush() != nil {
		return
	}
	heartbeat := time.NewTicker(h.cfg.StreamHeartbeat)
	defer heartbeat.Stop()
	poll := time.NewTicker(notifier.WatchPollInterval)
	defer poll.Stop()
	for {
		for {
			evs, err := h.cfg.Events.Read(ctx, f, cursor, livePage, false)
			if err != nil {
				if ctx.Err() == nil {
					h.cfg.Logger.Warn("dashboard live events: read", "error", err)
				}
				return // the script reconnects with the last cursor it saw
			}
			for _, e := range evs {
				st.event(e)
				cursor = e.ID
			}
			if len(evs) < livePage {
				break
			}
		}
		if st.flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case _, ok := <-signal:
			if !ok {
				return // shutting down: the script reconnects elsewhere or later
			}
		case <-poll.C:
			continue // a read, no session check: signals and heartbeats check
		case <-heartbeat.C:
			st.printf(": heartbeat\n\n")
		}
		open, err := h.sessionOpen(ctx, s)
		if err != nil {
			if ctx.Err() == nil {
				h.cfg.Logger.Warn("dashboard live events: session", "error", err)
			}
			return
		}
		if !open {
			st.printf("event: end\ndata: {\"reason\":\"signed out\"}\n\n")
			_ = st.flush()
			return
		}
	}
}

// sessionOpen reports whether s is still open: not signed out, not expired.
func (h *Handler) sessionOpen(ctx context.Context, s *session) (bool, error) {
	ok, err := h.cfg.DB.DashboardSession.Query().
		Where(dashboardsession.ID(s.row.ID), dashboardsession.ExpiresAtGT(h.cfg.Now())).Exist(ctx)
	if err != nil {
		return false, fmt.Errorf("check session: %w", err)
	}
	return ok, nil
}

// sseWriter writes a server-sent event stream; the first failed write is
// kept and ends the stream at the next flush.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

func (s *sseWriter) printf(format string, args ...any) {
	if s.err != nil {
		return
	}
	_ = s.rc.SetWriteDeadline(clock.Now().Add(liveWriteTimeout))
	_, s.err = fmt.Fprintf(s.w, format, args...)
}

// event writes e as an event "delivery" whose id is its cursor.
func (s *sseWriter) event(e *entdb.DeliveryEvent) {
	data, err := json.Marshal(liveEvent{
		UUID: e.UUID, Kind: e.Kind.String(), Attempt: e.Attempt, Outcome: e.Outcome, HTTPStatus: e.HTTPStatus,
		DeliveryStatus: e.DeliveryStatus, NextAttemptAt: e.NextAttemptAt, Error: e.Error, Time: e.CreatedAt.UTC(),
	})
	if err != nil { // cannot happen: strings, numbers and times
		s.err = err
		return
	}
	// JSON has no raw newline, so one data line holds it.
	s.printf("id: %d\nevent: delivery\ndata: %s\n\n", e.ID, data)
}

func (s *sseWriter) flush() error {
	if s.err == nil {
		_ = s.rc.SetWriteDeadline(clock.Now().Add(liveWriteTimeout))
		s.err = s.rc.Flush()
	}
	return s.err
}

// streamSlots counts open live streams, in all, per session and per
// project.
type streamSlots struct {
	mu                sync.Mutex
	max, per, project int
	open              int
	perSession        map[int64]int
	perProject        map[int64]int
}

func newStreamSlots(max, per, project int) *streamSlots {
	return &streamSlots{max: max, per: per, project: project, perSession: map[int64]int{}, perProject: map[int64]int{}}
}

// acquire takes a slot for a stream of session of project; release gives
// it back (once, however often it is called).
func (s *streamSlots) acquire(session, project int64) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open >= s.max || s.perSession[session] >= s.per || s.perProject[project] >= s.project {
		return nil, false
	}
	s.open++
	s.perSession[session]++
	s.perProject[project]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.open--
			if s.perSession[session]--; s.perSession[session] <= 0 {
				delete(s.perSession, session)
			}
			if s.perProject[project]--; s.perProject[project] <= 0 {
				delete(s.perProject, project)
			}
		})
	}, true
}
