package dashboard

import (
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/dashboardsession"
	"github.com/payhook/payhook/ent/db/dashboarduser"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/notifier"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/web"
)

// Prefix is where the dashboard is served.
const Prefix = "/dashboard/"

// Cookie names. Both are scoped to the dashboard's path.
const (
	sessionCookie = "payhook_session"
	// signinCookie holds the sign-in form's double-submit CSRF token, before
	// there is a session to bind a token to.
	signinCookie = "payhook_signin"
)

// dashLayout is what every dashboard page's frame (templates/layout.html)
// needs.
type dashLayout struct {
	// Title is the page's title.
	Title string
	// Email is the signed-in user's ("" on the sign-in page).
	Email string
	// Project is the user's project's name.
	Project string
	// CSRF is the token every form posts back.
	CSRF string
	// Nav names the current section.
	Nav string
	// Endpoints shows the webhook endpoints' nav link; Paused are the
	// project's paused endpoints, each with a banner linking to its page.
	Endpoints bool
	Paused    []pausedEndpoint
	// Role is the signed-in user's role (owner, developer, viewer).
	Role string
}

// Can reports whether the signed-in user's role admits the POST route of
// path (a form's action, below Prefix; a route's {id} segment matches any
// value): a page shows a change's form only to the roles that may make
// it, from the one route table the server enforces. A page of no
// signed-in user (Role "") can nothing.
func (l dashLayout) Can(path string) bool {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return false
	}
	rt, _, _ := lookupRoute(http.MethodPost, rest)
	return rt != nil && admits(dashboarduser.Role(l.Role), rt.role)
}

// Handler serves the dashboard.
type Handler struct {
	cfg   Config
	pages *web.Pages
	// dummyHash is checked when no dashboard user has the email given, so
	// an unknown email costs what a wrong password costs.
	dummyHash string
	// hashSlots bounds concurrent password checks (64 MiB each): a flood
	// of sign-ins is answered 503 instead of exhausting memory.
	hashSlots chan struct{}
	// ips counts failed sign-ins per client network.
	ips *ipLimiter
	// proxyWarning logs once that requests come through an untrusted
	// proxy.
	proxyWarning sync.Once
	// liveStreams counts the dashboard's open live streams.
	liveStreams *streamSlots
}

// templateFS holds the dashboard's frame (layout.html) and its pages.
//
//go:embed templates/*.html
var templateFS embed.FS

// assetFS holds the dashboard's script and stylesheet.
//
//go:embed assets
var assetFS embed.FS

// Assets returns the dashboard's assets, in assets/, for web.NewAssets.
func Assets() fs.FS { return assetFS }

// New returns the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	pages, err := web.NewPages(cfg.Logger, funcs)
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, file := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(file, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		if err := pages.Parse(name, templateFS, "templates/layout.html", file); err != nil {
			return nil, err
		}
	}
	dummy, err := hashPassword("payhook dashboard: no such user")
	if err != nil {
		return nil, err
	}
	return &Handler{
		cfg: cfg, pages: pages, dummyHash: dummy,
		hashSlots:   make(chan struct{}, MaxConcurrentPasswordChecks),
		ips:         newIPLimiter(),
		liveStreams: newStreamSlots(cfg.MaxLiveStreams, MaxLiveStreamsPerSession, MaxLiveStreamsPerProject),
	}, nil
}

// ServeHTTP serves the dashboard: /dashboard is sent to Prefix, and every
// path below Prefix is the dashboard's (a page, a form's target, or its
// 404). Any other path is the 404 page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.route(w, r) {
		web.Secure(w)
		h.pages.NotFound(w)
	}
}

// MaxFormBytes bounds a dashboard form's body: every form is a few short
// fields (the longest, a wallet list, is far below it).
const MaxFormBytes = 64 << 10

// readForm parses the body of a dashboard POST, or answers and reports
// false: a multipart body is refused (net/http would spill a large one to
// temporary files; the uploads, the logo and a signed PSBT, are read by
// readUpload instead), and a body over
// MaxFormBytes is a 413, read no further. parse false checks the type
// only: the handler reads the body itself.
func readForm(w http.ResponseWriter, r *http.Request, parse bool) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/x-www-form-urlencoded" {
			http.Error(w, "a dashboard form is sent URL-encoded (application/x-www-form-urlencoded); only the logo and a signed PSBT are uploaded", http.StatusUnsupportedMediaType)
			return false
		}
	}
	if !parse {
		return true
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		var big *http.MaxBytesError
		if errors.As(err, &big) {
			http.Error(w, fmt.Sprintf("the form is over %d bytes", MaxFormBytes), http.StatusRequestEntityTooLarge)
			return false
		}
		http.Error(w, "the form is not URL-encoded correctly", http.StatusBadRequest)
		return false
	}
	return true
}

// route serves r when its path is the dashboard's and reports whether it
// did.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) bool {
	path := r.URL.Path
	if path == "/dashboard" {
		web.Secure(w)
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return true
	}
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return false
	}
	web.Secure(w)
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	post := r.Method == http.MethodPost
	// The sign-in form reads its own, smaller body (signinPost); the logo
	// and a signed PSBT are the multipart bodies (readUpload).
	if u, isUpload := uploadOf(rest); post && isUpload {
		var ok bool
		if r, ok = readUpload(w, r, u); !ok {
			return true
		}
	} else if post && !readForm(w, r, rest != "signin") {
		return true
	}
	if rest == "signin" {
		switch {
		case get:
			h.signinPage(w, r, "", http.StatusOK)
		case post:
			h.signinPost(w, r)
		default:
			web.MethodNotAllowed(w, "GET, HEAD, POST")
		}
		return true
	}
	if token, ok := strings.CutPrefix(rest, "invite/"); ok {
		h.inviteRoute(w, r, token, get, post)
		return true
	}
	c, _ := r.Cookie(sessionCookie)
	var token string
	if c != nil {
		token = c.Value
	}
	s, err := h.lookup(r.Context(), token)
	if err != nil {
		h.pages.Fail(w, "dashboard session", err)
		return true
	}
	if s == nil {
		if post {
			h.forbidden(w)
			return true
		}
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
		return true
	}
	if post && subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.row.CsrfToken)) != 1 {
		h.forbidden(w)
		return true
	}
	// A session owing its TOTP code or its enrolment reaches only those.
	if s.row.Pending != dashboardsession.PendingNone {
		h.pendingRoute(w, r, s, rest, get, post)
		return true
	}
	// One check for every route (roles.go): a route not declared there is
	// refused before any handler runs.
	w, ok = h.authorize(w, r, s, rest)
	if !ok {
		return true
	}
	switch {
	case rest == "" && get:
		http.Redirect(w, r, Prefix+"notifications/", http.StatusSeeOther)
	case rest == "signout" && post:
		if err := h.signOut(r.Context(), s); err != nil {
			h.pages.Fail(w, "dashboard sign-out", err)
			return true
		}
		h.setCookie(w, r, sessionCookie, "", -1)
		http.Redirect(w, r, Prefix+"signin", http.StatusSeeOther)
	case rest == "notifications/" && get:
		h.notificationsPage(w, r, s)
	case strings.HasPrefix(rest, "notifications/"):
		id, action, _ := strings.Cut(strings.TrimPrefix(rest, "notifications/"), "/")
		switch {
		case action == "" && get:
			h.notificationPage(w, r, s, id)
		case action == "resend" && post:
			h.resend(w, r, s, id)
		default:
			h.pages.NotFound(w)
		}
	case rest == "settings/" && get:
		h.settingsPage(w, r, s, "")
	case rest == "settings/rotate-secret" && post:
		h.rotateSecret(w, r, s)
	case rest == "settings/rotate-callback-key" && post && h.cfg.CallbackKeys != nil:
		h.rotateCallbackKey(w, r, s)
	case h.invoiceRoutes(w, r, s, rest, get, post),
		h.settingsRoutes(w, r, s, rest, get, post),
		h.payoutRoutes(w, r, s, rest, get, post),
		h.endpointRoutes(w, r, s, rest, get, post),
		h.liveRoutes(w, r, s, rest, get, post),
		h.exportRoutes(w, r, s, rest, get),
		h.teamRoutes(w, r, s, rest, get, post),
		h.accountRoutes(w, r, s, rest, get, post),
		h.auditRoutes(w, r, s, rest, get, post):
	default:
		h.pages.NotFound(w)
	}
	return true
}

// secureCookies reports whether cookies of r must be Secure: it came over
// TLS, or the configured public URL is https (TLS ends in a proxy).
func (h *Handler) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(strings.ToLower(h.cfg.PublicURL), "https://")
}

// setCookie sets (maxAge > 0 or 0 for a browser session) or deletes
// (maxAge < 0) a dashboard cookie: HttpOnly, SameSite=Lax, Secure over TLS.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, Secure: h.secureCookies(r), SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) forbidden(w http.ResponseWriter) {
	h.pages.Render(w, http.StatusForbidden, "forbidden", dashLayout{Title: "Refused"})
}

// layoutOf returns the frame of a signed-in page.
func (h *Handler) layoutOf(r *http.Request, s *session, title, nav string) dashLayout {
	l := dashLayout{Title: title, Email: s.user.Email, CSRF: s.row.CsrfToken, Nav: nav, Role: string(s.user.Role)}
	if p, err := project.Get(r.Context(), h.cfg.DB, s.user.ProjectID); err == nil {
		l.Project = p.Name
	}
	if h.cfg.Endpoints != nil {
		l.Endpoints = true
		var err error
		// Without the banner the page is still worth showing.
		if l.Paused, err = h.pausedEndpoints(r.Context(), s.user.ProjectID); err != nil {
			h.cfg.Logger.Warn("dashboard: paused endpoints", "error", err)
		}
	}
	return l
}

// signinData is the sign-in page.
type signinData struct {
	dashLayout
	// Entered is the email typed, shown again after a failure.
	Entered string
	Error   string
}

func (h *Handler) signinPage(w http.ResponseWriter, r *http.Request, errText string, status int) {
	token, err := randomToken()
	if err != nil {
		h.pages.Fail(w, "sign-in token", err)
		return
	}
	h.setCookie(w, r, signinCookie, token, 0)
	h.pages.Render(w, status, "signin", signinData{
		dashLayout: dashLayout{Title: "Sign in", CSRF: token},
		Entered:    r.PostFormValue("email"),
		Error:      errText,
	})
}

// maxSigninBody bounds a sign-in form (an email and a password).
const maxSigninBody = 8 << 10

// signinFailed is the one answer to every failed sign-in.
const signinFailed = "The email or password is wrong, or the account is locked for a while after too many failed attempts."

func (h *Handler) signinPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxSigninBody)
	if err := r.ParseForm(); err != nil {
		h.signinPage(w, r, "The sign-in form is too large.", http.StatusRequestEntityTooLarge)
		return
	}
	c, _ := r.Cookie(signinCookie)
	field := r.PostFormValue("csrf")
	if c == nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(field)) != 1 {
		h.forbidden(w)
		return
	}
	if len(h.cfg.TrustedProxies) == 0 && r.Header.Get("X-Forwarded-For") != "" {
		h.proxyWarning.Do(func() {
			h.cfg.Logger.Warn("dashboard sign-in: a request carries X-Forwarded-For but no --trusted-proxy is set; " +
				"if payhook is behind a reverse proxy, every client shares its address for the per-network sign-in limit")
		})
	}
	settle := func(bool) {}
	if client, known := clientAddr(r, h.cfg.TrustedProxies); known {
		wait, s := h.ips.claim(client, h.cfg.Now())
		if wait > 0 {
			minutes := int(wait.Round(time.Minute) / time.Minute)
			if minutes < 1 {
				minutes = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
			h.signinPage(w, r, fmt.Sprintf("Too many failed sign-ins from your network; try again in %d minute(s).", minutes), http.StatusTooManyRequests)
			return
		}
		settle = s
	}
	token, ok, err := h.signIn(r.Context(), r.PostFormValue("email"), r.PostFormValue("password"))
	// Only a wrong password spends the network's token; a busy server or
	// a failure of ours gives it back, as a success does.
	settle(err == nil && !ok)
	if errors.Is(err, ErrBusy) {
		w.Header().Set("Retry-After", "1")
		h.signinPage(w, r, "Too many sign-ins at once; try again in a moment.", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		h.pages.Fail(w, "dashboard sign-in", err)
		return
	}
	if !ok {
		h.signinPage(w, r, signinFailed, http.StatusUnauthorized)
		return
	}
	h.setCookie(w, r, signinCookie, "", -1)
	h.setCookie(w, r, sessionCookie, token, int(h.cfg.SessionTTL/time.Second))
	http.Redirect(w, r, Prefix+"notifications/", http.StatusSeeOther)
}

// listData is the notifications page.
type listData struct {
	dashLayout
	Filter   url.Values
	Statuses []string
	Failed   []*entdb.Notification
	Rows     []*entdb.Notification
	Next     string
	Error    string
}

func (h *Handler) notificationsPage(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := listData{
		dashLayout: h.layoutOf(r, s, "Notifications", "notifications"),
		Filter:     q,
		Statuses:   []string{"failed", "retrying", "pending", "acknowledged"},
	}
	f := notifier.ListFilter{Status: q.Get("status"), Service: q.Get("service"), Event: q.Get("event"), Cursor: q.Get("cursor")}
	var bad []string
	f.From, f.Until, bad = dateFilter(q)
	if len(bad) > 0 {
		d.Error = strings.Join(bad, "; ")
		h.pages.Render(w, http.StatusBadRequest, "notifications", d)
		return
	}
	ctx := r.Context()
	rows, next, err := h.cfg.Notifications.List(ctx, s.user.ProjectID, f)
	if errors.Is(err, notifier.ErrInvalidFilter) {
		d.Error = "This filter cannot be used: " + err.Error()
		h.pages.Render(w, http.StatusBadRequest, "notifications", d)
		return
	}
	if err != nil {
		h.pages.Fail(w, "list notifications", err)
		return
	}
	d.Rows = rows
	d.Next = nextPage(q, next)
	// Failed first: without a status filter, the newest failed
	// notifications (same filter) come above the listing.
	if f.Status == "" && f.Cursor == "" {
		ff := f
		ff.Status = string(notification.StatusFailed)
		ff.Limit = 20
		if d.Failed, _, err = h.cfg.Notifications.List(ctx, s.user.ProjectID, ff); err != nil {
			h.pages.Fail(w, "list failed notifications", err)
			return
		}
	}
	h.pages.Render(w, http.StatusOK, "notifications", d)
}

// header is one request header as sent.
type header struct{ Name, Value string }

// detailData is one notification's page.
type detailData struct {
	dashLayout
	N         *entdb.Notification
	Body      string
	Headers   []header
	HeadersAt time.Time
	// HeadersOf is the attempt whose headers are shown (0: none yet).
	HeadersOf int
	// HeadersExact is set when they are exactly as recorded (otherwise a
	// per-attempt signature was computed again with the current secret).
	HeadersExact bool
	InWindow     bool
	Resent       bool
	Acked        bool
	HeadersErr   string
}

func (h *Handler) notificationPage(w http.ResponseWriter, r *http.Request, s *session, id string) {
	n, err := h.cfg.Notifications.Get(r.Context(), s.user.ProjectID, id)
	if errors.Is(err, notifier.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "get notification", err)
		return
	}
	now := h.cfg.Now()
	d := detailData{
		dashLayout: h.layoutOf(r, s, "Notification "+n.UUID, "notifications"),
		N:          n, Body: string(n.Body),
		InWindow: !now.After(n.ExpiresAt) && n.Status != notification.StatusAcknowledged,
		Acked:    n.Status == notification.StatusAcknowledged,
		Resent:   r.URL.Query().Get("resent") == "1",
	}
	// The headers the latest attempt sent, as recorded; with no attempt
	// yet, those one made now would send (the same function builds them
	// for the dispatcher).
	var hs http.Header
	if k := len(n.Edges.DeliveryAttempts); k > 0 {
		a := n.Edges.DeliveryAttempts[k-1]
		d.HeadersAt, d.HeadersOf = a.StartedAt, a.Number
		hs, d.HeadersExact, err = h.cfg.Notifications.SentHeaders(r.Context(), n, a)
	} else {
		d.HeadersAt = now
		hs, err = h.cfg.Notifications.Headers(r.Context(), n, now)
	}
	if err != nil {
		d.HeadersErr = err.Error()
	}
	for name, vs := range hs {
		for _, v := range vs {
			d.Headers = append(d.Headers, header{name, v})
		}
	}
	sort.Slice(d.Headers, func(i, j int) bool { return d.Headers[i].Name < d.Headers[j].Name })
	h.pages.Render(w, http.StatusOK, "notification", d)
}

func (h *Handler) resend(w http.ResponseWriter, r *http.Request, s *session, id string) {
	_, err := h.cfg.Notifications.Resend(r.Context(), s.user.ProjectID, id)
	if errors.Is(err, notifier.ErrNotFound) {
		h.pages.NotFound(w)
		return
	}
	if err != nil {
		h.pages.Fail(w, "resend notification", err)
		return
	}
	http.Redirect(w, r, Prefix+"notifications/"+url.PathEscape(id)+"/?resent=1", http.StatusSeeOther)
}

// funcs are the dashboard templates' functions besides web.Funcs.
var funcs = template.FuncMap{
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
}
