// Package servertest starts a real payhook server for tests: a migrated,
// isolated database of the requested dialect with two projects, gRPC and
// REST on loopback ports, and their API keys. Import it from _test.go
// files only.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/payment"
	"github.com/payhook/payhook/server/ratelimit"
)

// Seed is the fixed address seed of test servers, so derived addresses are
// reproducible.
var Seed = bytes.Repeat([]byte{0x5e}, 32)

// NoLimits are server.Config's Limits with every limit and quota off.
func NoLimits() ratelimit.Limits {
	return ratelimit.Limits{
		KeyRate: ratelimit.Off, AnonRate: ratelimit.Off, InvoiceAddresses: ratelimit.Off,
		SubscriptionAddresses: ratelimit.Off, TestEvents: ratelimit.Off,
	}
}

// Instance is a running test server.
type Instance struct {
	// Server is the server.
	Server *server.Server
	// BaseURL is the REST gateway's base URL, without a trailing slash.
	BaseURL string
	// Conn is a gRPC client connection to the server.
	Conn *grpc.ClientConn
	// KeyA and KeyB are API keys of two projects, ProjectA and ProjectB;
	// KeyA2 is a second key of ProjectA.
	KeyA, KeyB, KeyA2 string
	// ProjectA and ProjectB are the projects of KeyA and KeyB.
	ProjectA, ProjectB int64
	// Out holds what the server printed for its operator.
	Out *bytes.Buffer
	// DSN is the server's database.
	DSN string

	opKeyMu sync.Mutex
	opKey   string
}

// OperatorKey returns an operator's API key of the server (what /metrics
// and /healthz's details need on the public listener), creating it on
// first use; like every operator key it joins the default project.
func (in *Instance) OperatorKey(t testing.TB) string {
	t.Helper()
	in.opKeyMu.Lock()
	defer in.opKeyMu.Unlock()
	if in.opKey == "" {
		key, _, err := apikey.CreateOperator(context.Background(), in.Server.DB().Client, "test operator", clock.Now())
		if err != nil {
			t.Fatalf("servertest: operator key: %v", err)
		}
		in.opKey = key
	}
	return in.opKey
}

// Project names a project of a test server in AllowPrivate: A or B (the
// projects of KeyA and KeyB) or Default (the default project, which the
// --dev key and keys created without a project join).
type Project string

// The projects AllowPrivate names.
const (
	A       Project = "A"
	B       Project = "B"
	Default Project = ""
)

// AllowPrivate returns the --allow-private-endpoint entries that let the
// callbacks of each project reach the loopback endpoint url (an operator's
// exception is one project's: PROJECT=URL, or URL alone for the default
// project). Projects A and B are created before the server starts, as an
// operator creates a project before naming it in the flag, and Start puts
// their ids in the entries; set the result in Config.Delivery.
func AllowPrivate(url string, projects ...Project) []string {
	out := make([]string, len(projects))
	for i, p := range projects {
		if p == Default {
			out[i] = url
		} else {
			out[i] = string(p) + "=" + url
		}
	}
	return out
}

// Start starts a server on a fresh database of dialect d; it is stopped when
// the test ends. mutate may adjust the configuration.
func Start(t testing.TB, d store.Dialect, mutate ...func(*server.Config)) *Instance {
	t.Helper()
	return StartLogged(t, d, slog.New(slog.NewTextHandler(io.Discard, nil)), mutate...)
}

// StartLogged is Start with the server logging to logger (tests that read
// what the server logs).
func StartLogged(t testing.TB, d store.Dialect, logger *slog.Logger, mutate ...func(*server.Config)) *Instance {
	t.Helper()
	out := &bytes.Buffer{}
	cfg := server.Config{
		Store: server.StoreConfig{DB: storetest.DSN(t, d)},
		API: server.APIConfig{
			HTTPAddr:        "127.0.0.1:0",
			GRPCAddr:        "127.0.0.1:0",
			ShutdownTimeout: 5 * time.Second,
		},
		Keys: server.KeysConfig{Seed: Seed},
		// API tests need tickers without a chain; a test of the chains
		// sets Dev or Nodes (and may turn this off).
		Chains: server.ChainsConfig{OfferWithoutNodes: true},
		// No request limits unless a test sets them (NoLimits): tests make
		// requests faster than any limit, often on a clock that stands
		// still.
		Limits: NoLimits(),
		Out:    &lockedWriter{w: out},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	ctx := context.Background()
	projects := createProjects(ctx, t, cfg)
	for i, e := range cfg.Delivery.AllowPrivateEndpoints {
		if name, url, ok := strings.Cut(e, "="); ok && projects[Project(name)] != 0 {
			cfg.Delivery.AllowPrivateEndpoints[i] = strconv.FormatInt(projects[Project(name)], 10) + "=" + url
		}
	}
	s, err := server.New(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("servertest: new server: %v", err)
	}
	inst := &Instance{Server: s, BaseURL: "http://" + s.HTTPAddr(), Out: out, DSN: cfg.Store.DB, ProjectA: projects[A], ProjectB: projects[B]}
	// Runs after the server stops (cleanups run last first), before the
	// database is dropped.
	t.Cleanup(func() { CheckNotifications(t, inst.DSN) })
	t.Cleanup(func() {
		if inst.Conn != nil {
			_ = inst.Conn.Close()
		}
		if err := s.Stop(); err != nil {
			t.Errorf("servertest: stop: %v", err)
		}
	})
	if err := s.Start(ctx); err != nil {
		t.Fatalf("servertest: start server: %v", err)
	}
	// KeyA and KeyB belong to two projects (what one owns the other never
	// sees); KeyA2 is a second key of KeyA's project. The keys are created
	// once the server runs (a --dev server creates its own key only in a
	// database without any).
	for _, k := range []struct {
		key     *string
		project int64
		name    string
	}{{&inst.KeyA, inst.ProjectA, "A"}, {&inst.KeyB, inst.ProjectB, "B"}} {
		key, _, err := apikey.CreateInProject(ctx, s.DB().Client, "test "+k.name, k.project, clock.Now())
		if err != nil {
			t.Fatalf("servertest: %v", err)
		}
		*k.key = key
	}
	if inst.KeyA2, _, err = apikey.CreateInProject(ctx, s.DB().Client, "test A2", inst.ProjectA, clock.Now()); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	inst.Conn, err = grpc.NewClient(s.GRPCAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("servertest: dial: %v", err)
	}
	return inst
}

// createProjects migrates cfg's database and creates projects A and B in
// it, before the server starts (so --allow-private-endpoint can name
// them), and returns their ids.
func createProjects(ctx context.Context, t testing.TB, cfg server.Config) map[Project]int64 {
	t.Helper()
	if _, err := admin.Migrate(ctx, cfg.Store.DB, cfg.Chains.RegistryFile); err != nil {
		t.Fatalf("servertest: %v", err)
	}
	db, err := admin.Open(ctx, cfg.Store.DB, store.Pool{})
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	defer db.Close()
	// The projects' secrets are sealed with the key the server will use.
	box, err := cfg.Keys.WithDefaults().SecretsKey(nil)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	db.SetSecretsKey(box)
	ids := map[Project]int64{}
	for _, name := range []Project{A, B} {
		p, err := project.Create(ctx, db.Client, project.Params{Name: "project " + string(name)}, clock.Now())
		if err != nil {
			t.Fatalf("servertest: %v", err)
		}
		ids[name] = p.ID
	}
	return ids
}

// WithKey returns ctx carrying key as the apikey metadata.
func WithKey(ctx context.Context, key string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "apikey", key)
}

// Response is a decoded REST response.
type Response struct {
	// Code is the HTTP status.
	Code int
	// Body is the raw body.
	Body []byte
	// JSON is the body decoded into a map (nil when it is not an object).
	JSON map[string]any
}

// Get requests path (with query) from the gateway, sending key in the apikey
// header when it is not empty.
func (in *Instance) Get(t testing.TB, path string, query url.Values, key string) Response {
	t.Helper()
	u := in.BaseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return in.Do(t, http.MethodGet, u, key)
}

// PostJSON POSTs the JSON body to path with key ("" for none).
func (in *Instance) PostJSON(t testing.TB, path, body, key string) Response {
	t.Helper()
	return in.do(t, http.MethodPost, in.BaseURL+path, key, body)
}

// Do makes a request to an absolute URL.
func (in *Instance) Do(t testing.TB, method, u, key string) Response {
	t.Helper()
	return in.do(t, method, u, key, "")
}

func (in *Instance) do(t testing.TB, method, u, key, body string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("apikey", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("servertest: %s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("servertest: read body: %v", err)
	}
	r := Response{Code: resp.StatusCode, Body: raw}
	_ = json.Unmarshal(raw, &r.JSON)
	return r
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// EnqueueCallback stores, as the low-level callback reactor does for a
// payment change, the callback of payment p of address a reporting status
// (pending, confirmed or completed; completed carries made-up forwarding
// figures), and returns its row.
func (in *Instance) EnqueueCallback(t testing.TB, a *entdb.Address, p *entdb.Payment, status chains.Status) *entdb.Notification {
	t.Helper()
	tk, ok := family.DefaultRegistry().Lookup(a.Ticker)
	if !ok {
		t.Fatalf("servertest: unknown ticker %s", a.Ticker)
	}
	c := payment.Change{Kind: payment.Confirmed, Ticker: tk, Address: a, Payment: p, Status: status, Confirmations: max(p.Confirmations, 1), ValueCoin: p.ValueCoin}
	if status == chains.StatusCompleted {
		c.Kind = payment.Distributed
		c.Forward = &entdb.Forward{TxidOut: "f0", ValueForwardedCoin: p.ValueCoin, FeeCoin: decimal.Zero, NetworkFee: decimal.Zero}
	}
	m, err := address.NewCallbackReactor(in.Server.Notifier().Queue, price.Default()).Message(c)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	row, err := in.Server.Notifier().Queue.EnqueueNow(context.Background(), m)
	if err != nil {
		t.Fatalf("servertest: enqueue: %v", err)
	}
	return row
}

// CheckNotifications validates every notification stored in the database
// dsn against the schema of its event type in the event catalogue
// (server/merchant/eventtype): a JSON body as it is, a GET or form payload
// field by field. A notification whose event type the catalogue does not
// list fails too, so every payload a test makes a server send is one the
// catalogue describes. Start runs it when the test ends, after the server
// stopped; each failure names the notification, its event and what does
// not match. Rows whose event is a bare payment status (pending,
// confirmed, completed) on a low-level callback are skipped: that is how
// callbacks were stored before event types existed, which tests of old
// rows write by hand; no builder writes one.
func CheckNotifications(t testing.TB, dsn string) {
	t.Helper()
	check, err := eventtypetest.Default()
	if err != nil {
		t.Errorf("servertest: the event catalogue's schemas: %v", err)
		return
	}
	ctx := context.Background()
	ns, err := storedNotifications(ctx, dsn)
	if err != nil {
		if gone(ctx, dsn) {
			// The test removed its database (a test of a lost database):
			// nothing is left to check.
			return
		}
		t.Errorf("servertest: read the notifications to check them: %v", err)
		return
	}
	for _, n := range ns {
		if n.Service == address.ServiceLabel && (n.Event == address.StatusPending || n.Event == address.StatusConfirmed || n.Event == address.StatusCompleted) {
			continue // a row as stored before event types
		}
		req := payload.Request{Method: n.Method, URL: n.URL, ContentType: n.ContentType, Body: n.Body}
		if n.EndpointID != nil {
			// An endpoint's delivery: the Standard Webhooks envelope of
			// its event, whose data is the JSON payload.
			var env struct {
				Type      string          `json:"type"`
				Timestamp time.Time       `json:"timestamp"`
				Data      json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(n.Body, &env); err != nil || env.Type != n.Event || env.Timestamp.IsZero() || len(env.Data) == 0 {
				t.Errorf("servertest: endpoint delivery %s (event %q) is not its event's envelope: %s (%v)", n.UUID, n.Event, n.Body, err)
				continue
			}
			req.Body = env.Data
		}
		if err := check.Check(n.Event, req); err != nil {
			t.Errorf("servertest: notification %s (event %q, %s %s) does not match the event catalogue: %v", n.UUID, n.Event, n.Method, n.ContentType, err)
		}
	}
}

// storedNotifications reads the notifications of the database dsn, on a
// connection of its own.
func storedNotifications(ctx context.Context, dsn string) ([]*entdb.Notification, error) {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Client.Notification.Query().
		Select(notification.FieldUUID, notification.FieldService, notification.FieldEvent, notification.FieldMethod,
			notification.FieldURL, notification.FieldContentType, notification.FieldBody, notification.FieldEndpointID).
		Order(entdb.Asc(notification.FieldID)).All(ctx)
}

// gone reports whether the database dsn no longer exists: its SQLite file
// was removed, or its PostgreSQL server, asked through its maintenance
// database, has none of its name.
func gone(ctx context.Context, dsn string) bool {
	d, name, err := store.ParseDSN(dsn)
	if err != nil {
		return false
	}
	if d == store.SQLite {
		_, err := os.Stat(name)
		return errors.Is(err, fs.ErrNotExist)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return false
	}
	db := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := store.Open(ctx, u.String())
	if err != nil {
		return false
	}
	defer admin.Close()
	var n int
	if err := admin.SQL.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", db).Scan(&n); err != nil {
		return false
	}
	return n == 0
}
