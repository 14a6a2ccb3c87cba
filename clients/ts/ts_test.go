// Package ts_test runs the TypeScript client's own tests (npm test in
// clients/ts) against a payhook server started here, and checks that the
// committed generated TypeScript is what generate.sh produces. The npm
// packages are installed by `npm ci --prefix clients/ts` (.ci/run does it),
// not by these tests.
package ts_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// install is how to get what these tests need.
const install = `install Node.js 20 or later with npm (https://nodejs.org/ or "apt-get install nodejs npm"), then run "npm ci --prefix clients/ts"`

// needNPM returns the paths of node and npm, or skips (fails under CI) when
// they or the package's node_modules are missing.
func needNPM(t *testing.T) (node, npm string) {
	t.Helper()
	node = nodetest.Need(t, "node", install)
	npm = nodetest.Need(t, "npm", install)
	for _, f := range []string{
		"node_modules/@connectrpc/connect-node/package.json",
		"node_modules/@bufbuild/protobuf/package.json",
		"node_modules/.bin/protoc-gen-es",
		"node_modules/.bin/tsc",
	} {
		if _, err := os.Stat(f); err != nil {
			msg := "clients/ts/" + f + " is missing: run \"npm ci --prefix clients/ts\""
			if nodetest.InCI() {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, npm
}

// TestClient runs `npm test` in clients/ts against a --dev server: the
// webhook vectors, and the client test that creates an address, pays it on
// the devnet, follows WatchDeliveries until the callback is delivered to a
// receiver here, verifies its signature and reads the logs, and the one
// that reads the payout wallet and balance and streams the accounting
// export. Every node test must pass and none may be skipped.
func TestClient(t *testing.T) {
	t.Parallel()
	_, npm := needNPM(t)

	var hits atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/hook" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	defer hook.Close()

	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true // the devnet: Pay and Mine; watchers and the dispatcher run
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook.URL+"/hook", servertest.A)
	})

	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "test", "--prefix", dir)
	cmd.Env = append(os.Environ(),
		"PAYHOOK_GRPC_ADDR="+in.Server.GRPCAddr(),
		"PAYHOOK_API_KEY="+in.KeyA,
		"PAYHOOK_CALLBACK_URL="+hook.URL+"/hook",
		// Connect and gRPC-Web on the HTTP listener: the same tests run over
		// connect-node's transports and over connect-web's (fetch, as in a
		// browser).
		"PAYHOOK_CONNECT_URL="+in.BaseURL,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	totals := tapTotals(out)
	for name, want := range map[string]int{"fail": 0, "skipped": 0, "cancelled": 0, "todo": 0} {
		if got, ok := totals[name]; !ok || got != want {
			t.Errorf("node tests: %s = %d (reported: %v), want %d", name, got, ok, want)
		}
	}
	// The vectors (15 + 21) and the server tests at least.
	if totals["pass"] < 36+4*len(protocols) {
		t.Errorf("node tests: only %d passed", totals["pass"])
	}
	// A skipped suite is not counted in "# skipped": look for its mark.
	if m := skipped.Find(out); m != nil {
		t.Errorf("node tests: %s", m)
	}
	// Once per protocol: gRPC, Connect and gRPC-Web over connect-node, and
	// Connect and gRPC-Web over connect-web.
	if n := len(serverTestPassed.FindAll(out, -1)); n != len(protocols) {
		t.Errorf("the server test passed over %d protocols, want %d", n, len(protocols))
	}
	if n := len(payoutTestPassed.FindAll(out, -1)); n != len(protocols) {
		t.Errorf("the payout and export test passed over %d protocols, want %d", n, len(protocols))
	}
	for _, p := range protocols {
		if !bytes.Contains(out, []byte("payhook API over "+p)) {
			t.Errorf("no suite ran over %s", p)
		}
	}
	if hits.Load() == 0 {
		t.Errorf("the server delivered no callback to the receiver")
	}
	if t.Failed() {
		t.Logf("npm test output:\n%s", out)
	}
}

// protocols are the suites client.test.ts runs against the server.
var protocols = []string{"gRPC", "Connect", "gRPC-Web", "Connect (connect-web, fetch)", "gRPC-Web (connect-web, fetch)"}

// serverTestPassed matches the TAP line of the client test's main case.
var serverTestPassed = regexp.MustCompile(`(?m)^\s*ok \d+ - create an address, pay it, follow its delivery, read its logs$`)

// payoutTestPassed matches the TAP line of the payout wallet and export
// case.
var payoutTestPassed = regexp.MustCompile(`(?m)^\s*ok \d+ - read the payout wallet and balance, export the ledger$`)

// skipped matches a TAP line of a skipped test or suite.
var skipped = regexp.MustCompile(`(?m)^\s*ok \d+ - .* # SKIP.*$`)

// tapTotals reads the "# name N" summary lines of node's TAP reporter.
func tapTotals(out []byte) map[string]int {
	re := regexp.MustCompile(`^# (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$`)
	totals := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			n, err := strconv.Atoi(m[2])
			if err == nil {
				totals[m[1]] = n
			}
		}
	}
	return totals
}

// TestGeneratedCodeIsCurrent regenerates the TypeScript into a temporary
// directory with generate.sh and fails on any difference from the
// committed src/gen.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	t.Parallel()
	needNPM(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "./generate.sh", tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, out)
	}
	want, got := readTree(t, filepath.Join(tmp, "src", "gen")), readTree(t, filepath.Join("src", "gen"))
	if len(want) == 0 {
		t.Fatal("generate.sh generated nothing")
	}
	for name, b := range want {
		c, ok := got[name]
		switch {
		case !ok:
			t.Errorf("src/gen/%s is missing: run clients/ts/generate.sh and commit the result", name)
		case !bytes.Equal(b, c):
			t.Errorf("src/gen/%s is stale: run clients/ts/generate.sh and commit the result", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("src/gen/%s is not generated any more: run clients/ts/generate.sh and commit the result", name)
		}
	}
}

// readTree returns the files under root by slash-separated relative path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		files[strings.ReplaceAll(rel, string(filepath.Separator), "/")] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
