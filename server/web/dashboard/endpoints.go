package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	entdb "github.com/payhook/payhook/ent/db"
	entendpoint "github.com/payhook/payhook/ent/db/endpoint"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/merchant/endpoint"
	"github.com/payhook/payhook/server/ratelimit"
	"github.com/payhook/payhook/server/web"
)

// endpointsPath is the webhook endpoints page; each endpoint's page, and
// the forms that change it, are below it (endpoints/ID/...).
const endpointsPath = Prefix + "endpoints/"

// recentDeliveries is how many of an endpoint's latest deliveries its page
// lists (the notifications page has them all).
const recentDeliveries = 20

// endpointsDone are the notes a redirect after a change shows (?done=):
// fixed texts, so nothing a URL carries is echoed.
var endpointsDone = map[string]string{
	"deleted": "The endpoint is deleted: it receives nothing more. Deliveries already stored to it are still attempted and listed under Notifications.",
	"saved":   "The endpoint is saved: events from now on are sent as it says.",
	"paused":  "The endpoint is paused: its deliveries wait, none expires, until you resume it.",
	"resumed": "The endpoint is resumed: the deliveries that waited are due now, oldest first.",
	"test":    "A test.webhook event is queued to the endpoint: it appears under Recent deliveries with its attempts.",
}

// pausedReasons say why an endpoint was paused, for people.
var pausedReasons = map[entendpoint.PausedReason]string{
	entendpoint.PausedReasonFailing:  "every attempt failed for too long",
	entendpoint.PausedReasonMerchant: "paused from this project",
	entendpoint.PausedReasonOperator: "paused by the operator",
}

// endpointView is an endpoint as its pages show it: never its secret.
type endpointView struct {
	ID, URL, Description string
	EventTypes           []string
	MaxPerSecond         int
	// Status is active, failing or paused; Since is when it began failing
	// or was paused; Reason says why it was paused.
	Status string
	Since  *time.Time
	Reason string
	// LastSuccess is its last acknowledged attempt (nil: none yet).
	LastSuccess *time.Time
	// Waiting counts its deliveries not delivered yet (pending, retrying
	// or paused).
	Waiting   int
	CreatedAt time.Time
	// PreviousSecretUntil is when the secret a rotation replaced stops
	// signing (nil when none does).
	PreviousSecretUntil *time.Time
}

// Name is what the endpoint is called in a sentence: its description, or
// its URL without one.
func (v endpointView) Name() string {
	if v.Description != "" {
		return v.Description
	}
	return v.URL
}

func viewOf(e *entdb.Endpoint, waiting int, now time.Time) endpointView {
	v := endpointView{
		ID: e.PublicID, URL: e.URL, Description: e.Description, EventTypes: e.EventTypes, MaxPerSecond: e.MaxPerSecond,
		Status: "active", LastSuccess: e.LastSuccessAt, Waiting: waiting, CreatedAt: e.CreatedAt,
	}
	switch {
	case e.PausedAt != nil:
		v.Status, v.Since = "paused", e.PausedAt
		if e.PausedReason != nil {
			v.Reason = pausedReasons[*e.PausedReason]
		}
	case e.FailingSince != nil:
		v.Status, v.Since = "failing", e.FailingSince
	}
	if e.PreviousSecretUntil != nil && now.Before(*e.PreviousSecretUntil) {
		v.PreviousSecretUntil = e.PreviousSecretUntil
	}
	return v
}

// endpointForm is what the create and edit forms typed, echoed after a
// refusal.
type endpointForm struct {
	URL, Description, EventTypes, MaxPerSecond string
}

func formOf(v endpointView) endpointForm {
	return endpointForm{URL: v.URL, Description: v.Description, EventTypes: strings.Join(v.EventTypes, ", "),
		MaxPerSecond: strconv.Itoa(v.MaxPerSecond)}
}

// endpointsData is the endpoints page: the project's endpoints and the
// create form.
type endpointsData struct {
	dashLayout
	Rows []endpointView
	// Form echoes a refused create; Error says why it was refused.
	Form  endpointForm
	Error string
	Done  string
	// Max is how many endpoints a project may have.
	Max int
}

// replayForm is what the replay form typed (or, after a replay capped at
// endpoint.MaxReplay, where the rest starts).
type replayForm struct{ Since, Until, EventTypes string }

// replayDone is what a replay did.
type replayDone struct {
	Count int
	// Next is where a replay capped at endpoint.MaxReplay stopped (nil when
	// it sent the whole range).
	Next *time.Time
}

// endpointData is one endpoint's page.
type endpointData struct {
	dashLayout
	E endpointView
	// Form is the edit form (the endpoint, or what a refused change typed);
	// FormError says why a change was refused.
	Form      endpointForm
	FormError string
	// Done is the note of a change just made (endpointsDone); ActionError
	// says why a pause, resume or test was refused.
	Done        string
	ActionError string
	// NewSecret is a secret just made (by the create or a rotation), shown
	// on this response only; GraceUntil is when the one it replaced stops
	// signing (zero after a create).
	NewSecret  string
	GraceUntil time.Time
	// Grace is how long a rotated-out secret keeps signing, for people.
	Grace string
	// Replay is the replay form; ReplayError says why a replay was
	// refused; Replayed what one did.
	Replay      replayForm
	ReplayError string
	Replayed    *replayDone
	MaxReplay   int
	// Deliveries are the endpoint's latest deliveries, newest first.
	Deliveries []*entdb.Notification
}

// endpointRoutes serves the endpoints' pages and forms when rest (the path
// below /dashboard/) is one of theirs, and reports whether it did:
// endpoints/ (GET the list, POST a new endpoint) and endpoints/ID/ (GET
// its page; POST ID/update, ID/rotate-secret, ID/pause, ID/resume,
// ID/test, ID/replay, ID/delete).
func (h *Handler) endpointRoutes(w http.ResponseWriter, r *http.Request, s *session, rest string, get, post bool) bool {
	sub, ok := strings.CutPrefix(rest, "endpoints/")
	if !ok {
		if rest == "endpoints" && get && h.cfg.Endpoints != nil {
			http.Redirect(w, r, endpointsPath, http.StatusMovedPermanently)
			return true
		}
		return false
	}
	if h.cfg.Endpoints == nil {
		return false
	}
	if sub == "" {
		switch {
		case get:
			h.endpointsPage(w, r, s, http.StatusOK, func(d *endpointsData) { d.Done = endpointsDone[r.URL.Query().Get("done")] })
		case post:
			h.createEndpoint(w, r, s)
		default:
			web.MethodNotAllowed(w, "GET, HEAD, POST")
		}
		return true
	}
	id, action, slash := strings.Cut(sub, "/")
	if !slash {
		if get {
			http.Redirect(w, r, endpointsPath+url.PathEscape(id)+"/", http.StatusMovedPermanently)
		} else {
			h.pages.NotFound(w)
		}
		return true
	}
	if action == "" {
		if !get {
			web.MethodNotAllowed(w, "GET, HEAD")
			return true
		}
		h.showEndpoint(w, r, s, http.StatusOK, id, func(d *endpointData) { d.Done = endpointsDone[r.URL.Query().Get("done")] })
		return true
	}
	var do func()
	switch action {
	case "update":
		do = func() { h.updateEndpoint(w, r, s, id) }
	case "rotate-secret":
		do = func() { h.rotateEndpointSecret(w, r, s, id) }
	case "pause", "resume", "test", "delete":
		do = func() { h.endpointAction(w, r, s, id, action) }
	case "replay":
		do = func() { h.replayEndpoint(w, r, s, id) }
	default:
		h.pages.NotFound(w)
		return true
	}
	if !post {
		web.MethodNotAllowed(w, "POST")
		return true
	}
	do()
	return true
}

// endpointsPage renders the endpoints page with status after set has
// filled in what the request adds (a refusal, a note).
func (h *Handler) endpointsPage(w http.ResponseWriter, r *http.Request, s *session, status int, set func(*endpointsData)) {
	ctx := r.Context()
	es, err := h.cfg.Endpoints.List(ctx, s.user.ProjectID)
	if err != nil {
		h.pages.Fail(w, "list endpoints", err)
		return
	}
	ids := make([]int64, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	waiting, err := h.waitingDeliveries(ctx, ids)
	if err != nil {
		h.pages.Fail(w, "count endpoint deliveries", err)
		return
	}
	d := endpointsData{dashLayout: h.layoutOf(r, s, "Webhook endpoints", "endpoints"), Max: endpoint.MaxPerProject,
		Form: endpointForm{EventTypes: "*", MaxPerSecond: "0"}}
	now := h.cfg.Now()
	for _, e := range es {
		d.Rows = append(d.Rows, viewOf(e, waiting[e.ID], now))
	}
	set(&d)
	h.pages.Render(w, status, "endpoints", d)
}

// showEndpoint renders endpoint id's page with status after set has filled
// in what the request adds; an endpoint the project does not have is a
// 404.
func (h *Handler) showEndpoint(w http.ResponseWriter, r *http.Request, s *session, status int, id string, set func(*endpointData)) {
	ctx := r.Context()
	e, err := h.cfg.Endpoints.Get(ctx, s.user.ProjectID, id)
	if errors.Is(err, endpoint.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "get endpoint", err)
		return
	}
	waiting, err := h.waitingDeliveries(ctx, []int64{e.ID})
	if err != nil {
		h.pages.Fail(w, "count endpoint deliveries", err)
		return
	}
	deliveries, err := h.cfg.DB.Notification.Query().
		Where(notification.EndpointID(e.ID), notification.OwnerID(s.user.ProjectID)).
		Order(entdb.Desc(notification.FieldID)).Limit(recentDeliveries).All(ctx)
	if err != nil {
		h.pages.Fail(w, "list endpoint deliveries", err)
		return
	}
	v := viewOf(e, waiting[e.ID], h.cfg.Now())
	d := endpointData{
		dashLayout: h.layoutOf(r, s, "Endpoint "+v.Name(), "endpoints"),
		E:          v, Form: formOf(v), Grace: hours(endpoint.DefaultGrace), MaxReplay: endpoint.MaxReplay,
		Deliveries: deliveries,
	}
	set(&d)
	h.pages.Render(w, status, "endpoint", d)
}

// waitingDeliveries counts the deliveries not delivered yet of each of the
// endpoints ids (one grouped query on the notifications' endpoint index).
func (h *Handler) waitingDeliveries(ctx context.Context, ids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		EndpointID int64 `json:"endpoint_id"`
		Count      int   `json:"count"`
	}
	err := h.cfg.DB.Notification.Query().
		Where(notification.EndpointIDIn(ids...),
			notification.StatusIn(notification.StatusPending, notification.StatusRetrying, notification.StatusPaused)).
		GroupBy(notification.FieldEndpointID).Aggregate(entdb.Count()).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.EndpointID] = r.Count
	}
	return out, nil
}

// pausedEndpoint is one paused endpoint of the banner every page shows.
type pausedEndpoint struct {
	ID, Name string
	Since    time.Time
	Waiting  int
}

// pausedEndpoints returns the project's paused endpoints for the banner:
// one query on the live endpoints' index per page view, and a count of
// their waiting deliveries only while one is paused.
func (h *Handler) pausedEndpoints(ctx context.Context, projectID int64) ([]pausedEndpoint, error) {
	es, err := h.cfg.DB.Endpoint.Query().
		Where(entendpoint.ProjectID(projectID), entendpoint.DeletedAtIsNil(), entendpoint.PausedAtNotNil()).
		Order(entdb.Asc(entendpoint.FieldID)).
		Select(entendpoint.FieldID, entendpoint.FieldPublicID, entendpoint.FieldURL, entendpoint.FieldDescription, entendpoint.FieldPausedAt).
		All(ctx)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	ids := make([]int64, len(es))
	for i, e := range es {
		ids[i] = e.ID
	}
	waiting, err := h.waitingDeliveries(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]pausedEndpoint, len(es))
	for i, e := range es {
		out[i] = pausedEndpoint{ID: e.PublicID, Name: viewOf(e, 0, time.Time{}).Name(), Since: *e.PausedAt, Waiting: waiting[e.ID]}
	}
	return out, nil
}

// readEndpointForm reads the create and edit forms: the filter is split at
// commas and white space; max_per_second must be a whole number (empty is
// 0). The service checks everything else.
func readEndpointForm(r *http.Request) (endpointForm, []string, int, string) {
	f := endpointForm{
		URL:          strings.TrimSpace(r.PostFormValue("url")),
		Description:  strings.TrimSpace(r.PostFormValue("description")),
		EventTypes:   strings.TrimSpace(r.PostFormValue("event_types")),
		MaxPerSecond: strings.TrimSpace(r.PostFormValue("max_per_second")),
	}
	types := splitTypes(f.EventTypes)
	if types == nil {
		types = []string{} // replaces the filter: the service asks for at least one
	}
	rate := 0
	if f.MaxPerSecond != "" {
		n, err := strconv.Atoi(f.MaxPerSecond)
		if err != nil {
			return f, types, 0, "max_per_second: must be a whole number of deliveries a second (0 for no limit)"
		}
		rate = n
	}
	return f, types, rate, ""
}

// splitTypes splits a filter typed in a form at commas and white space
// (which no event type or pattern contains); nil when there is none.
func splitTypes(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// refusal returns what the user is told of err when it is a refusal of
// the request (a bad field, a state that does not allow it), and false for
// a failure of ours.
func refusal(err error) (string, bool) {
	switch kind.Of(err) {
	case kind.Invalid, kind.FailedPrecondition, kind.Aborted:
		return kind.Message(err), true
	}
	var limited *ratelimit.Denied
	if errors.As(err, &limited) {
		return limited.Reason, true
	}
	return "", false
}

// createEndpoint adds an endpoint to the project and shows its page with
// its signing secret, on this response only (no-store; never in a URL or
// a log). A refused form is the endpoints page again, with the service's
// reason and what was typed.
func (h *Handler) createEndpoint(w http.ResponseWriter, r *http.Request, s *session) {
	f, types, rate, problem := readEndpointForm(r)
	refuse := func(reason string) {
		h.endpointsPage(w, r, s, http.StatusBadRequest, func(d *endpointsData) {
			d.Form, d.Error = f, "The endpoint was not created: "+reason
		})
	}
	if problem != "" {
		refuse(problem)
		return
	}
	e, err := h.cfg.Endpoints.Create(r.Context(), s.user.ProjectID, endpoint.Spec{
		URL: f.URL, EventTypes: types, Description: f.Description, MaxPerSecond: rate,
	})
	if reason, ok := refusal(err); ok {
		refuse(reason)
		return
	}
	if err != nil {
		h.pages.Fail(w, "create endpoint", err)
		return
	}
	h.showEndpoint(w, r, s, http.StatusOK, e.PublicID, func(d *endpointData) { d.NewSecret = e.Secret })
}

// updateEndpoint sets every field of the edit form on endpoint id.
func (h *Handler) updateEndpoint(w http.ResponseWriter, r *http.Request, s *session, id string) {
	f, types, rate, problem := readEndpointForm(r)
	refuse := func(reason string) {
		h.showEndpoint(w, r, s, http.StatusBadRequest, id, func(d *endpointData) {
			d.Form, d.FormError = f, "The endpoint was not saved: "+reason
		})
	}
	if problem != "" {
		refuse(problem)
		return
	}
	_, err := h.cfg.Endpoints.Update(r.Context(), s.user.ProjectID, id, endpoint.Update{
		URL: &f.URL, EventTypes: types, Description: &f.Description, MaxPerSecond: &rate,
	})
	if h.endpointFailed(w, r, s, id, err, refuse) {
		return
	}
	http.Redirect(w, r, endpointsPath+url.PathEscape(id)+"/?done=saved", http.StatusSeeOther)
}

// endpointFailed answers err of a change of endpoint id, when it is not
// nil, and reports whether it did: not found is a 404, a refusal goes to
// refuse, anything else is our failure.
func (h *Handler) endpointFailed(w http.ResponseWriter, r *http.Request, s *session, id string, err error, refuse func(string)) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, endpoint.ErrNotFound) {
		h.pages.NotFound(w)
		return true
	}
	if reason, ok := refusal(err); ok {
		refuse(reason)
		return true
	}
	h.pages.Fail(w, "change endpoint", err)
	return true
}

// rotateEndpointSecret gives endpoint id a new secret and shows it on this
// response only; the old one keeps signing for endpoint.DefaultGrace.
func (h *Handler) rotateEndpointSecret(w http.ResponseWriter, r *http.Request, s *session, id string) {
	e, err := h.cfg.Endpoints.RotateSecret(r.Context(), s.user.ProjectID, id, 0)
	refuse := func(reason string) {
		h.showEndpoint(w, r, s, http.StatusConflict, id, func(d *endpointData) { d.ActionError = reason })
	}
	if h.endpointFailed(w, r, s, id, err, refuse) {
		return
	}
	h.showEndpoint(w, r, s, http.StatusOK, id, func(d *endpointData) {
		d.NewSecret = e.Secret
		if e.PreviousSecretUntil != nil {
			d.GraceUntil = *e.PreviousSecretUntil
		}
	})
}

// endpointAction pauses, resumes, tests or deletes endpoint id. A refusal
// (resuming an endpoint that is not paused, the day's test events used up)
// is shown on its page with the reason.
func (h *Handler) endpointAction(w http.ResponseWriter, r *http.Request, s *session, id, action string) {
	ctx, p := r.Context(), s.user.ProjectID
	var err error
	switch action {
	case "pause":
		_, err = h.cfg.Endpoints.Pause(ctx, p, id)
	case "resume":
		_, err = h.cfg.Endpoints.Resume(ctx, p, id)
	case "test":
		_, err = h.cfg.Endpoints.Test(ctx, p, id)
	case "delete":
		err = h.cfg.Endpoints.Delete(ctx, p, id)
	}
	refuse := func(reason string) {
		status := http.StatusConflict
		var limited *ratelimit.Denied
		if errors.As(err, &limited) {
			status = http.StatusTooManyRequests
		}
		h.showEndpoint(w, r, s, status, id, func(d *endpointData) { d.ActionError = reason })
	}
	if h.endpointFailed(w, r, s, id, err, refuse) {
		return
	}
	switch action {
	case "delete":
		http.Redirect(w, r, endpointsPath+"?done=deleted", http.StatusSeeOther)
	case "test":
		http.Redirect(w, r, endpointsPath+url.PathEscape(id)+"/?done=test#deliveries", http.StatusSeeOther)
	default:
		http.Redirect(w, r, endpointsPath+url.PathEscape(id)+"/?done="+action+"d", http.StatusSeeOther)
	}
}

// formTimeLayouts are the times the replay form takes, in UTC: what a
// datetime-local input sends (with or without seconds), or RFC 3339.
var formTimeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", time.RFC3339Nano}

// formTimeLayout is how a time is written into a datetime-local input.
const formTimeLayout = "2006-01-02T15:04:05"

// parseFormTime reads a time of the replay form (zero when empty).
func parseFormTime(name, s string) (time.Time, string) {
	if s == "" {
		return time.Time{}, ""
	}
	for _, l := range formTimeLayouts {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			return t.UTC(), ""
		}
	}
	return time.Time{}, name + ": is not a date and time (YYYY-MM-DDTHH:MM in UTC)"
}

// replayEndpoint sends endpoint id, again, the events of the form's range
// and shows how many were queued; a replay capped at endpoint.MaxReplay
// says where the rest starts, and the form is filled to send it. The page
// is the POST's answer (a reload asks before sending again).
func (h *Handler) replayEndpoint(w http.ResponseWriter, r *http.Request, s *session, id string) {
	f := replayForm{
		Since:      strings.TrimSpace(r.PostFormValue("since")),
		Until:      strings.TrimSpace(r.PostFormValue("until")),
		EventTypes: strings.TrimSpace(r.PostFormValue("event_types")),
	}
	refuse := func(reason string) {
		h.showEndpoint(w, r, s, http.StatusBadRequest, id, func(d *endpointData) {
			d.Replay, d.ReplayError = f, "Nothing was replayed: "+reason
		})
	}
	since, problem := parseFormTime("since", f.Since)
	until, problem2 := parseFormTime("until", f.Until)
	if problem == "" {
		problem = problem2
	}
	if problem != "" {
		refuse(problem)
		return
	}
	done, err := h.cfg.Endpoints.Replay(r.Context(), s.user.ProjectID, id, endpoint.ReplayRange{
		Since: since, Until: until, EventTypes: splitTypes(f.EventTypes),
	})
	if h.endpointFailed(w, r, s, id, err, refuse) {
		return
	}
	h.showEndpoint(w, r, s, http.StatusOK, id, func(d *endpointData) {
		d.Replayed, d.Replay = &replayDone{Count: done.Count}, f
		if !done.Next.IsZero() {
			d.Replayed.Next = &done.Next
			// The rest, from where it stopped (to the second, rounded
			// down: an event of that second may be sent twice, none is
			// missed).
			d.Replay.Since = done.Next.UTC().Format(formTimeLayout)
		}
	})
}
