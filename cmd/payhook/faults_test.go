//go:build faults

// Process-level fault tests: the built payhook binary under kill -9, a
// PostgreSQL restart, a failing merchant and a read-only database. Each one
// asserts that no stored notification is lost. They use only the CLI, the
// REST API and the database contents.
//
// They must run alone, one package at a time (TestFaultPostgresRestart
// restarts the shared PostgreSQL cluster under every other test):
//
//	go test -tags faults -p 1 -count=1 -run Fault -v ./cmd/payhook/

package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// deliveryFlags are the delivery settings of every fault test: short
// attempts and retries, so a test waits seconds, not minutes. The lease
// (how long a dead instance's claim blocks a takeover) is attempt timeout +
// 30s unless the binary has a --delivery-lease flag.
func deliveryFlags(extra ...string) []string {
	f := []string{"--attempt-timeout", "2s", "--retry-delays", "1s,2s", "--per-host-concurrency", "4"}
	if faultLeaseFlag {
		f = append(f, "--delivery-lease", "4s")
	}
	return append(f, extra...)
}

// takeoverBound is how long a test waits for work whose claim a dead
// instance (or a lost database connection) still holds.
func takeoverBound() time.Duration {
	if faultLeaseFlag {
		return 40 * time.Second
	}
	return 90 * time.Second
}

// startBurst creates n addresses, pays each, and mines one block in the
// background: 2n notifications (confirmed and completed) are stored while
// deliveries already run. The returned channel yields the mine's outcome.
func startBurst(t *testing.T, p *payhookProc, key string, recv *faultReceiver, n int) <-chan error {
	t.Helper()
	addrs := createAddresses(t, p, key, recv, 0, n)
	payAll(t, p, addrs)
	mined := make(chan error, 1)
	go func() {
		r, err := p.mine(1)
		if err == nil && r.Code != http.StatusOK {
			err = fmt.Errorf("mine: HTTP %d %s", r.Code, r.Body)
		}
		mined <- err
	}()
	return mined
}

// reportMine logs a failed mine request without failing the test: what
// must hold is that every notification gets stored, which the callers check.
// Up to commit a87291a's parent, on PostgreSQL, the poll that POST
// /devnet/btc/mine runs raced the watcher's own periodic poll: both inserted
// the same new payment and the loser answered HTTP 500 (unique violation on
// payments) while the winner stored the payment and its callbacks. 0e4fc0e
// retries such collisions.
func reportMine(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Logf("mine answered an error (the watcher's own poll stores the block; see docs/decisions.md, Fault tests): %v", err)
	}
}

// storingDelay is how long the receiver takes per request while a burst is
// being stored: long, so deliveries (which start as notifications are
// stored) cannot outrun storing however slow this machine is, and still
// below the 2 s attempt timeout, so no attempt fails.
const storingDelay = time.Second

// waitMidBurst waits until all want notifications are stored (the receiver
// answering in storingDelay meanwhile), then lets the receiver answer in
// delay and waits until it has seen between 10% and 80% of them: the
// moment to strike.
func waitMidBurst(t *testing.T, db *sql.DB, recv *faultReceiver, want int, delay time.Duration) {
	t.Helper()
	waitFor(t, 60*time.Second, "burst stored", func() (bool, string) {
		stored, _ := queryInt(db, "SELECT COUNT(*) FROM notifications")
		return stored == want, fmt.Sprintf("stored %d/%d, receiver saw %d", stored, want, recv.total.Load())
	})
	recv.delay.Store(int64(delay))
	lo, hi := want/10, want*8/10
	waitFor(t, 60*time.Second, "burst in progress", func() (bool, string) {
		got := int(recv.total.Load())
		if got > hi {
			t.Fatalf("the receiver saw %d of %d callbacks before the fault could be injected; slow the receiver down", got, want)
		}
		return got >= lo, fmt.Sprintf("receiver saw %d", got)
	})
}

// TestFaultKill9MidBurst kills payhook with SIGKILL while ~300 callbacks are
// being delivered, restarts it on the same database and checks that every
// stored notification is delivered and acknowledged, and that callbacks are
// repeated only for attempts that were in flight at the kill.
func TestFaultKill9MidBurst(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		kill9MidBurst(t, sqliteDSN(dir), dir)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn, _ := newPGDatabase(t)
		kill9MidBurst(t, dsn, t.TempDir())
	})
}

func kill9MidBurst(t *testing.T, dsn, dir string) {
	const addresses = 150
	const want = 2 * addresses
	recv := newFaultReceiver(t)
	recv.delay.Store(int64(storingDelay))

	p := startPayhook(t, dsn, dir, recv, deliveryFlags()...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	mined := startBurst(t, p, key, recv, addresses)
	waitMidBurst(t, db, recv, want, 80*time.Millisecond)

	p.kill9(t)
	killedAt := clock.Now()
	<-mined //nolint:errcheck // the mine request ended (answered or cut off) with the process;
	// what was stored before the kill is checked next
	seenAtKill := recv.total.Load()
	seenBeforeKill, _ := recv.counts()
	inFlight := inFlightAtKill(t, db)
	stored, acked, _ := deliveryProgress(db, recv)
	t.Logf("kill -9 with %d notifications stored, %d acknowledged, %d attempts in flight; receiver had %d requests",
		stored, acked, sum(inFlight), seenAtKill)
	if stored != want {
		t.Fatalf("%d notifications stored before the kill, want %d", stored, want)
	}
	if acked == stored {
		t.Fatal("every notification was acknowledged before the kill: it did not land mid-burst")
	}

	// Same database, same seed; the devnet chains start empty, which is
	// fine: the stored notifications are what must survive.
	p2 := startPayhook(t, dsn, dir, recv, deliveryFlags()...)
	if k := apiKeyRE.FindString(p2.stdout.String()); k != "" {
		t.Errorf("restart on a database with a key printed a new key %s", k)
	}
	waitAllAcknowledged(t, db, recv, want, takeoverBound())
	t.Logf("all %d acknowledged %s after the kill", want, time.Since(killedAt).Round(100*time.Millisecond))

	states := assertNothingLost(t, db, recv)
	if len(states) != want {
		t.Errorf("%d notifications stored after the restart, want %d (the restart must not store new ones)", len(states), want)
	}
	seen, _ := recv.counts()
	dups, dupUUIDs := duplicates(seen)
	interrupted := attemptsPerUUID(t, db, "interrupted")
	outcomes := attemptsByOutcome(t, db)
	t.Logf("receiver: %d requests, %d distinct uuids, %d duplicate requests (uuids %v); attempts by outcome %v",
		recv.total.Load(), len(seen), dups, dupUUIDs, outcomes)

	// Every attempt in flight at the kill is recorded as interrupted when
	// its lease is taken over, and no other attempt is.
	for u, n := range inFlight {
		if interrupted[u] != n {
			t.Errorf("notification %s had %d attempts in flight at the kill but %d recorded interrupted", u, n, interrupted[u])
		}
	}
	for u, n := range interrupted {
		if inFlight[u] == 0 {
			t.Errorf("notification %s has %d interrupted attempts but none was in flight at the kill", u, n)
		}
	}
	unsent := 0
	for u := range interrupted {
		if seenBeforeKill[u] == 0 {
			unsent++
		}
	}
	t.Logf("%d of %d interrupted attempts had not reached the receiver before the kill (claimed, not yet sent)", unsent, sum(interrupted))
	// A callback is repeated only if an attempt of it was in flight.
	for _, u := range dupUUIDs {
		if seen[u]-1 > interrupted[u] {
			t.Errorf("notification %s reached the receiver %d times with %d interrupted attempts", u, seen[u], interrupted[u])
		}
	}
	if dups > sum(interrupted) {
		t.Errorf("%d duplicate callbacks for %d interrupted attempts", dups, sum(interrupted))
	}
	if outcomes["failed"]+outcomes["blocked"] > 0 {
		t.Errorf("attempts failed or blocked: %v", outcomes)
	}

	p2.stop(t)
	if p2.err != nil {
		t.Errorf("graceful stop after the restart: %v", p2.err)
	}
}

// inFlightAtKill is, per uuid, the attempts a dead instance left in flight:
// a notification still leased (claimed, its outcome not recorded), or an
// attempt row still marked in_flight (the notifier has stored in-flight
// attempts either way).
func inFlightAtKill(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	m := attemptsPerUUID(t, db, "in_flight")
	rows, err := db.Query("SELECT uuid FROM notifications WHERE lease_until IS NOT NULL")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		m[u] = max(m[u], 1)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// pgCluster names the local cluster to restart ("15", "main"): the one
// whose configured port (/etc/postgresql/VERSION/NAME/postgresql.conf) is
// the port of TEST_DATABASE_URL (5432 when it names none). It skips the
// test when this machine cannot restart that PostgreSQL.
func pgCluster(t *testing.T) (version, name string) {
	t.Helper()
	u, err := url.Parse(pgAdminURL(t))
	if err != nil {
		t.Fatal(err)
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
		t.Skipf("PostgreSQL at %s is not local: cannot restart it", h)
	}
	if _, err := exec.LookPath("pg_ctlcluster"); err != nil {
		t.Skip("pg_ctlcluster not found: cannot restart PostgreSQL")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	confs, err := filepath.Glob("/etc/postgresql/*/*/postgresql.conf")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, conf := range confs {
		if p, err := confPort(conf); err != nil {
			t.Logf("%s: %v", conf, err)
		} else if p == port {
			dir := filepath.Dir(conf)
			version, name = filepath.Base(filepath.Dir(dir)), filepath.Base(dir)
			found = append(found, version+"/"+name)
		}
	}
	if len(found) != 1 {
		t.Skipf("want exactly one local cluster on port %s: %v (of %v)", port, found, confs)
	}
	return version, name
}

// confPort is the port a postgresql.conf sets ("5432" when it sets none,
// PostgreSQL's default).
func confPort(conf string) (string, error) {
	b, err := os.ReadFile(conf)
	if err != nil {
		return "", err
	}
	port := "5432"
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		key, value, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(key) == "port" {
			port = strings.Trim(strings.TrimSpace(value), "'")
		}
	}
	return port, nil
}

// pgctl runs pg_ctlcluster ACTION on the local cluster.
func pgctl(version, name, action string) error {
	cmd := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", version, name, action)
	out, err := runWithTimeout(cmd, 90*time.Second)
	if err != nil {
		return fmt.Errorf("pg_ctlcluster %s %s %s: %v: %s", version, name, action, err, out)
	}
	return nil
}

func runWithTimeout(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return []byte(out.String()), err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done //nolint:errcheck // waits for the kill: its exit error says killed
		return []byte(out.String()), fmt.Errorf("timed out after %s", d)
	}
}

// TestFaultPostgresRestart restarts the PostgreSQL cluster under a delivery
// burst: payhook must stay up, say so in its log, and deliver everything.
// It restarts the shared cluster: run the fault tests alone with -p 1.
func TestFaultPostgresRestart(t *testing.T) {
	version, cluster := pgCluster(t)
	const addresses = 100
	const want = 2 * addresses
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	recv := newFaultReceiver(t)
	recv.delay.Store(int64(storingDelay))
	p := startPayhook(t, dsn, dir, recv, deliveryFlags()...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	mined := startBurst(t, p, key, recv, addresses)
	waitMidBurst(t, db, recv, want, 100*time.Millisecond)
	reportMine(t, <-mined)

	mark := p.stderr.Len()
	t.Cleanup(func() {
		// Never leave the shared cluster down.
		if _, err := queryInt(db, "SELECT 1"); err != nil {
			if err := pgctl(version, cluster, "start"); err != nil {
				t.Errorf("PostgreSQL left down: %v", err)
			}
		}
	})
	began := clock.Now()
	if err := pgctl(version, cluster, "restart"); err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL restarted in %s with the receiver at %d requests", time.Since(began).Round(10*time.Millisecond), recv.total.Load())

	waitFor(t, 30*time.Second, "payhook healthy after the restart", func() (bool, string) {
		if !p.alive() {
			t.Fatalf("payhook exited during the PostgreSQL restart: %v\n%s", p.err, tail(p.stderr.String(), 4096))
		}
		return p.healthy(), "healthz not OK"
	})
	waitAllAcknowledged(t, db, recv, want, takeoverBound())
	t.Logf("all %d acknowledged %s after the restart began", want, time.Since(began).Round(100*time.Millisecond))
	if !p.alive() {
		t.Fatalf("payhook exited: %v", p.err)
	}
	states := assertNothingLost(t, db, recv)
	if len(states) != want {
		t.Errorf("%d notifications stored, want %d", len(states), want)
	}

	after := p.stderr.String()[mark:]
	var errLines []string
	for _, l := range strings.Split(after, "\n") {
		if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
			errLines = append(errLines, l)
		}
	}
	if len(errLines) == 0 {
		t.Errorf("payhook logged no error or warning for the database outage; log since the restart:\n%s", tail(after, 4096))
	} else {
		t.Logf("payhook logged %d error/warning lines during the outage, first ones:\n%s", len(errLines), strings.Join(errLines[:min(len(errLines), 6)], "\n"))
	}
	seen, _ := recv.counts()
	dups, dupUUIDs := duplicates(seen)
	interrupted := attemptsPerUUID(t, db, "interrupted")
	t.Logf("receiver: %d requests, %d duplicates (%v); attempts by outcome %v", recv.total.Load(), dups, dupUUIDs, attemptsByOutcome(t, db))
	notAcked := attemptsNotAcknowledged(t, db)
	for _, u := range dupUUIDs {
		if seen[u]-1 > notAcked[u] {
			t.Errorf("notification %s reached the receiver %d times but only %d of its attempts were not acknowledged (interrupted %d)", u, seen[u], notAcked[u], interrupted[u])
		}
	}
	if !p.healthy() {
		t.Error("healthz not OK at the end")
	}
}

// attemptsNotAcknowledged counts, per uuid, attempts that did not end
// acknowledged.
func attemptsNotAcknowledged(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, o := range []string{"failed", "interrupted", "blocked", "in_flight"} {
		for u, n := range attemptsPerUUID(t, db, o) {
			m[u] += n
		}
	}
	return m
}

// TestFaultReceiverOutage: the merchant answers 500 until every callback
// has failed twice, then recovers; every notification is acknowledged, once,
// and the attempt log (database and REST) shows the failures.
func TestFaultReceiverOutage(t *testing.T) {
	const addresses = 20
	const want = 2 * addresses
	dir := t.TempDir()
	dsn := sqliteDSN(dir)
	recv := newFaultReceiver(t)
	recv.fail.Store(true)
	p := startPayhook(t, dsn, dir, recv, deliveryFlags()...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	mined := startBurst(t, p, key, recv, addresses)
	reportMine(t, <-mined)
	waitFor(t, 30*time.Second, "every notification failed twice", func() (bool, string) {
		stored, _ := queryInt(db, "SELECT COUNT(*) FROM notifications")
		twice, _ := queryInt(db, `SELECT COUNT(*) FROM (SELECT notification_id FROM delivery_attempts
			WHERE outcome = 'failed' GROUP BY notification_id HAVING COUNT(*) >= 2) AS f`)
		return stored == want && twice == want, fmt.Sprintf("stored %d, failed twice %d, receiver answered 500 %d times", stored, twice, recv.failures.Load())
	})
	recv.fail.Store(false)
	recovered := clock.Now()
	waitAllAcknowledged(t, db, recv, want, 30*time.Second)
	t.Logf("all %d acknowledged %s after the receiver recovered; it answered 500 %d times", want, time.Since(recovered).Round(10*time.Millisecond), recv.failures.Load())
	assertNothingLost(t, db, recv)

	_, oks := recv.counts()
	for u, n := range oks {
		if n != 1 {
			t.Errorf("notification %s acknowledged by the receiver %d times", u, n)
		}
	}
	outcomes := attemptsByOutcome(t, db)
	t.Logf("attempts by outcome %v", outcomes)
	if outcomes["acknowledged"] != want {
		t.Errorf("%d acknowledged attempts, want %d", outcomes["acknowledged"], want)
	}
	if int64(outcomes["failed"]) != recv.failures.Load() {
		t.Errorf("%d failed attempts logged, the receiver answered 500 %d times", outcomes["failed"], recv.failures.Load())
	}
	bad, err := queryInt(db, `SELECT COUNT(*) FROM delivery_attempts WHERE outcome = 'failed'
		AND (response_status IS NULL OR response_status <> 500 OR response_body NOT LIKE '%merchant down%')`)
	if err != nil || bad != 0 {
		t.Errorf("%d failed attempts without the receiver's 500 and body stored (%v)", bad, err)
	}
	checkRetrySpacing(t, db)

	// The merchant reads the same history over REST.
	r := p.do(t, http.MethodGet, "/btc/logs/", url.Values{"callback": {callbackFor(recv, 0)}}, key, "")
	if r.Code != http.StatusOK {
		t.Fatalf("logs: HTTP %d %s", r.Code, r.Body)
	}
	var failed, acked int
	cbs, _ := r.JSON["callbacks"].([]any)
	for _, cb := range cbs {
		logs, _ := cb.(map[string]any)["logs"].([]any)
		for _, l := range logs {
			a, _ := l.(map[string]any)
			switch a["outcome"] {
			case "failed":
				if st, _ := a["response_status"].(float64); st == 500 {
					failed++
				}
			case "acknowledged":
				acked++
			}
		}
	}
	if failed < 4 || acked != 2 {
		t.Errorf("REST logs of address 0 show %d failed (HTTP 500) and %d acknowledged attempts, want >= 4 and 2: %s", failed, acked, r.Body)
	}
}

// checkRetrySpacing checks from the attempt log that each retry started no
// earlier than the policy (1s after the first failure, 2s after later ones,
// counted from the end of the failed attempt).
func checkRetrySpacing(t *testing.T, db *sql.DB) {
	t.Helper()
	rows, err := db.Query(`SELECT a.notification_id, a.number, a.started_at, a.finished_at, a.outcome
		FROM delivery_attempts a ORDER BY a.notification_id, a.number`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type att struct {
		id, number        int
		started, finished time.Time
		outcome           string
	}
	var all []att
	for rows.Next() {
		var a att
		var fin *time.Time
		if err := rows.Scan(&a.id, &a.number, &a.started, &fin, &a.outcome); err != nil {
			t.Fatalf("scan attempt: %v", err)
		}
		if fin != nil {
			a.finished = *fin
		}
		all = append(all, a)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].id != all[j].id {
			return all[i].id < all[j].id
		}
		return all[i].number < all[j].number
	})
	for i := 1; i < len(all); i++ {
		prev, cur := all[i-1], all[i]
		if prev.id != cur.id || prev.outcome != "failed" {
			continue
		}
		want := 2 * time.Second
		if prev.number == 1 {
			want = time.Second
		}
		// Timestamps round-trip the database; allow 10ms of rounding.
		if gap := cur.started.Sub(prev.finished); gap < want-10*time.Millisecond {
			t.Errorf("notification %d: attempt %d started %s after attempt %d failed, want >= %s", cur.id, cur.number, gap, prev.number, want)
		}
	}
}

// TestFaultReadOnlyDatabase makes payhook's database read-only: creating
// an address must fail with a JSON error (HTTP 5xx), the cause must be in
// payhook's log, and nothing stored may change.
func TestFaultReadOnlyDatabase(t *testing.T) {
	t.Run("postgres", readOnlyPostgres)
	t.Run("sqlite", readOnlySQLite)
}

// readOnlyPostgres makes the database refuse every write under a running
// payhook, and back: payhook recovers without a restart. lib/pq begins
// transactions with an explicit READ WRITE, which overrides
// default_transaction_read_only, so the database's refusal is simulated
// with statement triggers on every table that raise SQLSTATE 25006, which
// is what a read-only (standby, or read-only by setting) database answers.
func readOnlyPostgres(t *testing.T) {
	const addresses = 3
	const want = 2 * addresses
	dsn, _ := newPGDatabase(t)
	dir := t.TempDir()
	recv := newFaultReceiver(t)
	p := startPayhook(t, dsn, dir, recv, deliveryFlags()...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	reportMine(t, <-startBurst(t, p, key, recv, addresses))
	waitAllAcknowledged(t, db, recv, want, 30*time.Second)
	before := snapshot(t, db)

	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const readOnly = `CREATE OR REPLACE FUNCTION payhook_fault_read_only() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'cannot execute % in a read-only transaction', TG_OP USING ERRCODE = '25006'; END $$;
		DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' LOOP
				EXECUTE format('CREATE TRIGGER fault_read_only BEFORE INSERT OR UPDATE OR DELETE ON %I FOR EACH STATEMENT EXECUTE FUNCTION payhook_fault_read_only()', r.tablename);
			END LOOP; END $$`
	const writable = `DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT tablename FROM pg_tables WHERE schemaname = 'public' LOOP
				EXECUTE format('DROP TRIGGER IF EXISTS fault_read_only ON %I', r.tablename);
			END LOOP; END $$`
	t.Cleanup(func() { _, _ = db.Exec(writable) })
	exec(readOnly)

	createFailsReadOnly(t, p, key, recv, "read-only")
	compareSnapshots(t, before, snapshot(t, db))

	// Writable again: payhook recovers without a restart.
	exec(writable)
	waitFor(t, 15*time.Second, "create works again", func() (bool, string) {
		q := url.Values{"callback": {callbackFor(recv, 2000)}, "address": {faultPayee}}
		r, err := p.try(http.MethodGet, "/btc/create/", q, key, "")
		if err != nil {
			return false, err.Error()
		}
		return r.Code == http.StatusOK, fmt.Sprintf("HTTP %d %s", r.Code, r.Body)
	})
}

// createFailsReadOnly asks a payhook whose database is read-only for new
// addresses: every answer must be a JSON error with HTTP 5xx, reads must
// still work, and the log must name the cause (logWord).
func createFailsReadOnly(t *testing.T, p *payhookProc, key string, recv *faultReceiver, logWord string) {
	t.Helper()
	mark := p.stderr.Len()
	// The first requests may meet pooled connections that were just ended:
	// ask a few times.
	var answers []string
	for i := range 4 {
		q := url.Values{"callback": {callbackFor(recv, 1000+i)}, "address": {faultPayee}}
		r := p.do(t, http.MethodGet, "/btc/create/", q, key, "")
		answers = append(answers, fmt.Sprintf("HTTP %d %s", r.Code, strings.TrimSpace(r.Body)))
		if r.Code != http.StatusServiceUnavailable || r.JSON["status"] != "error" {
			t.Errorf("create on a read-only database answered HTTP %d %s; want 503 with {\"status\":\"error\",...}", r.Code, r.Body)
		}
		if msg, _ := r.JSON["error"].(string); !strings.Contains(msg, "read-only") {
			t.Errorf("create on a read-only database: the error does not say the database is read-only: %s", r.Body)
		}
	}
	t.Logf("create on a read-only database answered:\n%s", strings.Join(answers, "\n"))
	if !p.alive() || !p.healthy() {
		t.Errorf("payhook not alive and healthy with a read-only database (alive %v)", p.alive())
	}
	// Reads still work.
	r := p.do(t, http.MethodGet, "/btc/logs/", url.Values{"callback": {callbackFor(recv, 0)}}, key, "")
	if r.Code != http.StatusOK {
		t.Errorf("logs on a read-only database: HTTP %d %s", r.Code, r.Body)
	}
	// The operator learns the cause from the log (the merchant is not told).
	log := p.stderr.String()[mark:]
	if !strings.Contains(log, logWord) {
		t.Errorf("payhook did not log the read-only database (%q); log since:\n%s", logWord, tail(log, 4096))
	}
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CreateAddress") && strings.Contains(l, "level=ERROR") {
			t.Logf("payhook logged: %s", l)
			break
		}
	}
}

func compareSnapshots(t *testing.T, before, after dbSnapshot) {
	t.Helper()
	for table, n := range before.counts {
		if after.counts[table] != n {
			t.Errorf("%s: %d rows before, %d after", table, n, after.counts[table])
		}
	}
	if after.sample != before.sample {
		t.Errorf("sample rows changed:\nbefore %s\nafter  %s", before.sample, after.sample)
	}
}

// readOnlySQLite stops payhook, makes the SQLite file read-only (0444) and
// starts payhook again on it. As root, file modes do not stop writes, so
// payhook then runs as nobody (the tests run as root here).
func readOnlySQLite(t *testing.T) {
	const addresses = 3
	const want = 2 * addresses
	dir, err := os.MkdirTemp("", "payhook-fault-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		if err := os.Chown(dir, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dsn := sqliteDSN(dir)
	dbFile := strings.TrimPrefix(dsn, "sqlite:")
	recv := newFaultReceiver(t)
	p := startPayhookAs(t, cred, dsn, dir, recv, deliveryFlags()...)
	key := p.apiKey(t)
	db := openTestDB(t, dsn)
	reportMine(t, <-startBurst(t, p, key, recv, addresses))
	waitAllAcknowledged(t, db, recv, want, 30*time.Second)
	p.stop(t)
	before := snapshot(t, db)
	db.Close() // the last connection checkpoints and removes the WAL

	for _, f := range []string{dbFile, dbFile + "-wal", dbFile + "-shm"} {
		if err := os.Chmod(f, 0o444); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(dbFile, 0o644) })
	p2 := startPayhookAs(t, cred, dsn, dir, recv, deliveryFlags()...)
	createFailsReadOnly(t, p2, key, recv, "readonly database")
	p2.stop(t)

	if err := os.Chmod(dbFile, 0o644); err != nil {
		t.Fatal(err)
	}
	compareSnapshots(t, before, snapshot(t, openTestDB(t, dsn)))
}

// dbSnapshot is what a fault must not change: row counts of every table and
// a few rows in full.
type dbSnapshot struct {
	counts map[string]int
	sample string
}

func snapshot(t *testing.T, db *sql.DB) dbSnapshot {
	t.Helper()
	s := dbSnapshot{counts: map[string]int{}}
	for _, table := range []string{"api_keys", "addresses", "payments", "notifications", "delivery_attempts", "delivery_events", "signing_keys", "chain_cursors", "forwards"} {
		n, err := queryInt(db, "SELECT COUNT(*) FROM "+table)
		if err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		s.counts[table] = n
	}
	var b strings.Builder
	for _, q := range []string{
		"SELECT uuid, status, attempts, method, url, body, signature FROM notifications ORDER BY id LIMIT 1",
		"SELECT address_in, callback_url, derivation_index FROM addresses ORDER BY id LIMIT 1",
		"SELECT txid_in, value_coin, status, confirmations FROM payments ORDER BY id LIMIT 1",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "%s=%v ", cols[i], v)
			}
			b.WriteString("| ")
		}
		rows.Close()
	}
	s.sample = b.String()
	return s
}
