//go:build faults

// Helpers of the process-level fault tests (faults_test.go). They drive the
// built payhook binary through its CLI, REST API and database only, so they
// keep working while the notifier's internals change.
//
// Run them alone and one package at a time: TestFaultPostgresRestart
// restarts the shared PostgreSQL cluster.
//
//	go test -tags faults -p 1 -count=1 -run Fault -v ./cmd/payhook/

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // PostgreSQL driver for the tests' own queries
	"go.uber.org/goleak"
	_ "modernc.org/sqlite" // SQLite driver for the tests' own queries

	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/receiver"
)

// faultBin is the payhook binary built once by TestMain, with the faults
// tag.
var faultBin string

// faultLeaseFlag is set when the binary has a --delivery-lease flag (not
// there when these tests were written): the takeover after kill -9 then
// takes seconds instead of attempt timeout + 30s.
var faultLeaseFlag bool

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "payhook-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Readable by all: one test runs the binary as another user.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	faultBin = filepath.Join(dir, "payhook")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	// With the faults tag: faults_kill.go's PAYHOOK_FAULT points.
	out, err := exec.CommandContext(ctx, "go", "build", "-tags", "faults", "-o", faultBin, ".").CombinedOutput()
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		removeBinDir(dir)
		os.Exit(1)
	}
	help, _ := exec.Command(faultBin, "serve", "-h").CombinedOutput()
	faultLeaseFlag = bytes.Contains(help, []byte("-delivery-lease"))
	// goleak.Find, not VerifyTestMain: the binary's directory must go
	// whatever the verdict.
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	removeBinDir(dir)
	os.Exit(code)
}

// removeBinDir removes the fault binary's directory, saying so when it
// cannot (a temporary directory is left behind; the run's verdict stands).
func removeBinDir(dir string) {
	if err := os.RemoveAll(dir); err != nil {
		fmt.Fprintln(os.Stderr, "remove the fault binary:", err)
	}
}

// ---------------------------------------------------------------- waiting

// waitFor polls cond every 10ms until it holds or timeout passes; on timeout
// the test fails with what and cond's last description of the state.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := clock.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		if clock.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last state: %s", what, timeout, state)
		}
		<-tick.C
	}
}

// ---------------------------------------------------------------- receiver

// faultReceiver is a merchant's callback endpoint on loopback. It records
// every request by the notification uuid (query for GET, JSON body for POST)
// and acknowledges with {"status":"ok"} unless told to fail.
type faultReceiver struct {
	srv   *httptest.Server
	delay atomic.Int64 // nanoseconds each request takes
	fail  atomic.Bool  // answer 500 instead of acknowledging

	total    atomic.Int64 // every request
	failures atomic.Int64 // requests answered 500
	bad      atomic.Int64 // requests without a uuid

	// verifier, when set (verifyWith), checks every request's webhook
	// signature; unverified counts the requests it refused (answered as
	// any other) and lastUnverified says why the last one was.
	verifier       atomic.Pointer[receiver.WebhookVerifier]
	unverified     atomic.Int64
	lastUnverified atomic.Value // string

	mu   sync.Mutex
	seen map[string]int // requests per uuid (acknowledged or not)
	oks  map[string]int // acknowledged requests per uuid
}

func newFaultReceiver(t *testing.T) *faultReceiver {
	r := &faultReceiver{seen: map[string]int{}, oks: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

// endpoint is the exact endpoint payhook is allowed to call on loopback.
func (r *faultReceiver) endpoint() string { return r.srv.URL + "/hook" }

// verifyWith makes the receiver check every request's webhook signature
// (x-service-signature) against the project's IPN secret.
func (r *faultReceiver) verifyWith(secret string) {
	r.verifier.Store(receiver.NewWebhookVerifier([]string{secret}))
}

func (r *faultReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if v := r.verifier.Load(); v != nil {
		// Verify puts a POST's body back for the reads below.
		if _, err := v.Verify(req); err != nil {
			r.unverified.Add(1)
			r.lastUnverified.Store(err.Error())
		}
	}
	uuid := ""
	if req.Method == http.MethodGet {
		uuid = req.URL.Query().Get("uuid")
	} else {
		body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var v struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(body, &v) == nil {
			uuid = v.UUID
		}
	}
	r.total.Add(1)
	if uuid == "" {
		r.bad.Add(1)
		http.Error(w, "no uuid", http.StatusBadRequest)
		return
	}
	failing := r.fail.Load()
	r.mu.Lock()
	r.seen[uuid]++
	if !failing {
		r.oks[uuid]++
	}
	r.mu.Unlock()
	if d := time.Duration(r.delay.Load()); d > 0 {
		// A slow merchant; the request ends early if payhook goes away.
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-req.Context().Done():
			timer.Stop()
		}
	}
	if failing {
		r.failures.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"status":"error","error":"merchant down"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`)
}

// counts returns copies of the per-uuid request and acknowledgement counts.
func (r *faultReceiver) counts() (seen, oks map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen, oks = make(map[string]int, len(r.seen)), make(map[string]int, len(r.oks))
	for k, v := range r.seen {
		seen[k] = v
	}
	for k, v := range r.oks {
		oks[k] = v
	}
	return seen, oks
}

// distinct is how many uuids the receiver has seen.
func (r *faultReceiver) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// duplicates is the number of requests beyond the first per uuid.
func duplicates(m map[string]int) (extra int, uuids []string) {
	for k, v := range m {
		if v > 1 {
			extra += v - 1
			uuids = append(uuids, k)
		}
	}
	sort.Strings(uuids)
	return extra, uuids
}

// ---------------------------------------------------------------- process

// lockedBuffer collects a process's output for concurrent readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// payhookProc is one running `payhook serve --dev`.
type payhookProc struct {
	cmd    *exec.Cmd
	stdout *lockedBuffer
	stderr *lockedBuffer
	http   string // host:port of the REST gateway
	// operator is the operator listener's host:port (--operator-listen);
	// "" without it.
	operator string
	done     chan struct{}
	err      error // Wait's result, once done is closed
}

var (
	servingRE  = regexp.MustCompile(`msg="payhook serving".* http=(\S+)`)
	operatorRE = regexp.MustCompile(`msg="payhook serving".* operator=(\S+)`)
	apiKeyRE   = regexp.MustCompile(`ph_[a-z0-9]+`)
)

// startPayhook runs `payhook serve --dev` on dsn with its seed in dir,
// listening on free loopback ports, allowed to call recv, plus extra flags.
// It returns once the server logs that it serves. The process is killed at
// cleanup if it still runs.
func startPayhook(t *testing.T, dsn, dir string, recv *faultReceiver, extra ...string) *payhookProc {
	t.Helper()
	return startPayhookAs(t, nil, dsn, dir, recv, extra...)
}

// startPayhookAs is startPayhook as another user (cred), when not nil.
func startPayhookAs(t *testing.T, cred *syscall.Credential, dsn, dir string, recv *faultReceiver, extra ...string) *payhookProc {
	t.Helper()
	return startPayhookWith(t, cred, nil, dsn, dir, recv, extra...)
}

// startPayhookWith is startPayhookAs with env (KEY=VALUE) added to the
// process's environment, which otherwise has no PAYHOOK_* variable.
func startPayhookWith(t *testing.T, cred *syscall.Credential, env []string, dsn, dir string, recv *faultReceiver, extra ...string) *payhookProc {
	t.Helper()
	args := []string{"serve", "--dev",
		"--db", dsn,
		"--http-addr", "127.0.0.1:0",
		"--grpc-addr", "127.0.0.1:0",
		"--seed-file", filepath.Join(dir, "payhook.seed"),
		"--allow-private-endpoint", recv.endpoint(),
		"--shutdown-timeout", "5s",
		// The bursts are faster than any request limit.
		"--key-rate", "0", "--anon-rate", "0",
	}
	args = append(args, extra...)
	p := &payhookProc{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(faultBin, args...)
	p.cmd.Dir = dir
	if cred != nil {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PAYHOOK_") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Env = append(p.cmd.Env, env...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start payhook: %v", err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if p.alive() {
			_ = p.cmd.Process.Kill()
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				t.Errorf("payhook pid %d did not exit after SIGKILL", p.cmd.Process.Pid)
			}
		}
		if d := os.Getenv("PAYHOOK_FAULT_LOG_DIR"); d != "" {
			// Keep every server log for a post-mortem.
			_ = os.WriteFile(filepath.Join(d, fmt.Sprintf("payhook-%d.log", p.cmd.Process.Pid)), []byte(p.stderr.String()), 0o644)
		}
		if t.Failed() {
			t.Logf("payhook pid %d stderr (last 4 KiB):\n%s", p.cmd.Process.Pid, tail(p.stderr.String(), 4096))
		}
	})
	waitFor(t, 60*time.Second, "payhook serving", func() (bool, string) {
		if !p.alive() {
			t.Fatalf("payhook exited at start: %v\nstdout: %s\nstderr: %s", p.err, p.stdout, p.stderr)
		}
		m := servingRE.FindStringSubmatch(p.stderr.String())
		if m == nil {
			return false, tail(p.stderr.String(), 500)
		}
		p.http = m[1]
		if m := operatorRE.FindStringSubmatch(p.stderr.String()); m != nil {
			p.operator = m[1]
		}
		return true, ""
	})
	return p
}

// apiKey is the key `serve --dev` printed on first start.
func (p *payhookProc) apiKey(t *testing.T) string {
	t.Helper()
	k := apiKeyRE.FindString(p.stdout.String())
	if k == "" {
		t.Fatalf("serve --dev printed no API key: %q", p.stdout.String())
	}
	return k
}

func (p *payhookProc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill9 sends SIGKILL and waits for the process to be gone.
func (p *payhookProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("payhook still running 10s after SIGKILL")
	}
}

// stop sends SIGTERM and waits for a graceful exit.
func (p *payhookProc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("payhook did not stop within 30s of SIGTERM")
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// ---------------------------------------------------------------- REST

var restClient = &http.Client{Timeout: 30 * time.Second}

// apiResult is one REST answer.
type apiResult struct {
	Code int
	Body string
	JSON map[string]any
}

func (p *payhookProc) do(t *testing.T, method, path string, query url.Values, key, body string) apiResult {
	t.Helper()
	r, err := p.try(method, path, query, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// try is do without failing the test, for goroutines and for requests that
// are expected to fail.
func (p *payhookProc) try(method, path string, query url.Values, key, body string) (apiResult, error) {
	u := "http://" + p.http + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return apiResult{}, err
	}
	if key != "" {
		req.Header.Set("apikey", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := restClient.Do(req)
	if err != nil {
		return apiResult{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := apiResult{Code: resp.StatusCode, Body: string(b)}
	_ = json.Unmarshal(b, &r.JSON)
	return r, nil
}

// faultPayee is where every test address forwards to.
const faultPayee = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"

// callbackFor is the callback URL of the i-th test address: one endpoint,
// a query that makes each address's callback distinct.
func callbackFor(recv *faultReceiver, i int) string {
	return fmt.Sprintf("%s?n=%d", recv.endpoint(), i)
}

// createAddresses creates n btc addresses requiring one confirmation (so a
// single mined block causes both the confirmed and the completed callback);
// every other one sends JSON POST callbacks, the rest GET.
//
// Addresses are created one at a time: on PostgreSQL, four concurrent
// creates already fail now and then with HTTP 500 "internal error" (the
// derivation index is taken as max+1 with 8 retries on a unique-index
// conflict, logged as "too much contention for derivation indexes"). That
// is not the fault under test here.
func createAddresses(t *testing.T, p *payhookProc, key string, recv *faultReceiver, from, n int) []string {
	t.Helper()
	out := make([]string, n)
	parallel(t, n, 1, func(i int) error {
		q := url.Values{
			"callback":      {callbackFor(recv, from+i)},
			"address":       {faultPayee},
			"confirmations": {"1"},
		}
		if (from+i)%2 == 0 {
			q.Set("json", "1")
		}
		r, err := p.try(http.MethodGet, "/btc/create/", q, key, "")
		if err != nil {
			return err
		}
		a, _ := r.JSON["address_in"].(string)
		if r.Code != http.StatusOK || a == "" {
			return fmt.Errorf("create %d: HTTP %d %s", from+i, r.Code, r.Body)
		}
		out[i] = a
		return nil
	})
	return out
}

// payAll sends 0.01 BTC to each address on the devnet.
func payAll(t *testing.T, p *payhookProc, addrs []string) {
	t.Helper()
	parallel(t, len(addrs), 4, func(i int) error {
		r, err := p.try(http.MethodPost, "/devnet/btc/pay/", nil, "", fmt.Sprintf(`{"address_in":%q,"value_coin":"0.01"}`, addrs[i]))
		if err != nil {
			return err
		}
		if r.Code != http.StatusOK {
			return fmt.Errorf("pay %s: HTTP %d %s", addrs[i], r.Code, r.Body)
		}
		return nil
	})
}

// mine mines blocks on the btc devnet; payhook answers once the blocks exist
// and its watcher applies them in the background (callers wait for what is
// stored, not for the answer).
func (p *payhookProc) mine(blocks int) (apiResult, error) {
	return p.try(http.MethodPost, "/devnet/btc/mine/", nil, "", fmt.Sprintf(`{"blocks":%d}`, blocks))
}

func (p *payhookProc) healthy() bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + p.http + "/healthz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// parallel runs fn(0..n-1) on `workers` goroutines and fails on the first
// error.
func parallel(t *testing.T, n, workers int, fn func(i int) error) {
	t.Helper()
	var next atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// ---------------------------------------------------------------- databases

// sqliteDSN is a fresh SQLite database in dir.
func sqliteDSN(dir string) string { return "sqlite:" + filepath.Join(dir, "payhook.db") }

// openTestDB opens the tests' own pool on a payhook DSN.
func openTestDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	var db *sql.DB
	var err error
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		db, err = sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	} else {
		db, err = sql.Open("postgres", dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(2)
	t.Cleanup(func() { db.Close() })
	return db
}

// pgAdminURL is the server the PostgreSQL fault tests create databases on.
func pgAdminURL(t *testing.T) string {
	t.Helper()
	u, set := os.LookupEnv("TEST_DATABASE_URL")
	if !set || u == "" {
		u = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	db, err := sql.Open("postgres", u)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		db.Close()
	}
	if err != nil {
		if set {
			t.Fatalf("TEST_DATABASE_URL does not answer: %v", err)
		}
		t.Skipf("no PostgreSQL at %s: %v", u, err)
	}
	return u
}

// newPGDatabase creates payhook_fault_<random> on the test server and
// returns its URL; it is dropped at cleanup.
func newPGDatabase(t *testing.T) (dsn, name string) {
	t.Helper()
	admin := pgAdminURL(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name = "payhook_fault_" + hex.EncodeToString(b)
	db, err := sql.Open("postgres", admin)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("postgres", admin)
		if err != nil {
			t.Errorf("drop %s: %v", name, err)
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String(), name
}

// queryInt runs a query returning one integer; errors are returned, so
// polling survives a database that is briefly away.
func queryInt(db *sql.DB, query string, args ...any) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	err := db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// notificationStates maps each stored notification's uuid to its delivery
// status.
func notificationStates(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SELECT uuid, status FROM notifications")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var u, s string
		if err := rows.Scan(&u, &s); err != nil {
			t.Fatal(err)
		}
		m[u] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// attemptsByOutcome counts delivery attempts per outcome.
func attemptsByOutcome(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	rows, err := db.Query("SELECT outcome, COUNT(*) FROM delivery_attempts GROUP BY outcome")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var o string
		var n int
		if err := rows.Scan(&o, &n); err != nil {
			t.Fatal(err)
		}
		m[o] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// attemptsPerUUID counts, per notification uuid, the attempts with outcome.
func attemptsPerUUID(t *testing.T, db *sql.DB, outcome string) map[string]int {
	t.Helper()
	rows, err := db.Query(`SELECT n.uuid, COUNT(*) FROM delivery_attempts a
		JOIN notifications n ON n.id = a.notification_id
		WHERE a.outcome = '` + outcome + `' GROUP BY n.uuid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			t.Fatal(err)
		}
		m[u] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// deliveryProgress describes stored versus acknowledged notifications and
// what the receiver saw, for wait messages.
func deliveryProgress(db *sql.DB, recv *faultReceiver) (stored, acked int, state string) {
	stored, err1 := queryInt(db, "SELECT COUNT(*) FROM notifications")
	acked, err2 := queryInt(db, "SELECT COUNT(*) FROM notifications WHERE status = 'acknowledged'")
	state = fmt.Sprintf("stored %d, acknowledged %d, receiver requests %d (distinct %d)", stored, acked, recv.total.Load(), recv.distinct())
	if err1 != nil || err2 != nil {
		state += fmt.Sprintf("; query errors: %v %v", err1, err2)
		return -1, -1, state
	}
	return stored, acked, state
}

// waitAllAcknowledged waits until want notifications are stored and every
// one is acknowledged.
func waitAllAcknowledged(t *testing.T, db *sql.DB, recv *faultReceiver, want int, timeout time.Duration) {
	t.Helper()
	waitFor(t, timeout, "every notification acknowledged", func() (bool, string) {
		stored, acked, state := deliveryProgress(db, recv)
		return stored >= want && acked == stored, state
	})
}

// assertNothingLost checks that every stored notification is acknowledged,
// reached the receiver and was acknowledged by it, and that the receiver saw
// nothing payhook did not store. It returns the stored uuids.
func assertNothingLost(t *testing.T, db *sql.DB, recv *faultReceiver) map[string]string {
	t.Helper()
	states := notificationStates(t, db)
	seen, oks := recv.counts()
	for u, s := range states {
		if s != "acknowledged" {
			t.Errorf("notification %s ends %s, want acknowledged", u, s)
		}
		if seen[u] == 0 {
			t.Errorf("notification %s never reached the receiver", u)
		} else if oks[u] == 0 {
			t.Errorf("notification %s was never acknowledged by the receiver", u)
		}
	}
	for u := range seen {
		if _, ok := states[u]; !ok {
			t.Errorf("receiver got uuid %s that is not stored", u)
		}
	}
	if n := recv.bad.Load(); n > 0 {
		t.Errorf("receiver got %d requests without a uuid", n)
	}
	if n := recv.unverified.Load(); n > 0 {
		t.Errorf("receiver got %d requests whose webhook signature does not verify, the last: %v", n, recv.lastUnverified.Load())
	}
	if o := attemptsByOutcome(t, db); o["in_flight"] > 0 {
		t.Errorf("%d attempts still in flight after every notification was acknowledged", o["in_flight"])
	}
	return states
}
