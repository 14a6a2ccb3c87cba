// Package python_test runs the Python client's own tests
// (clients/python/tests, standard library unittest) against a real --dev
// payhook server, and checks that the committed generated modules are what
// clients/python/generate.sh produces. Both need Debian's Python tooling:
//
//	apt-get install -y python3 python3-grpcio python3-protobuf python3-cryptography protobuf-compiler libprotobuf-dev protobuf-compiler-grpc
//
// The tests use /usr/bin/python3, Debian's interpreter, where those packages
// install their modules: a python3 earlier on PATH (pyenv, a virtualenv) may
// lack them.
package python_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// python is Debian's interpreter, where python3-grpcio installs grpc.
const python = "/usr/bin/python3"

// install says how to get what these tests need on Debian.
const install = "apt-get install -y python3 python3-grpcio python3-protobuf python3-cryptography protobuf-compiler libprotobuf-dev protobuf-compiler-grpc"

// missing skips t with why and how to install, or fails it under CI.
func missing(t *testing.T, why string) {
	t.Helper()
	if nodetest.InCI() {
		t.Fatalf("%s, and CI must not skip this test: %s", why, install)
	}
	t.Skipf("%s; install it to run this test: %s", why, install)
}

// needPython skips (fails under CI) unless Debian's python3 can import the
// client's dependencies.
func needPython(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(python); err != nil {
		missing(t, python+" is not installed")
	}
	out, err := exec.Command(python, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err != nil {
		missing(t, python+" cannot import grpc, google.protobuf and cryptography: "+strings.TrimSpace(lastLine(out)))
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestPythonClient starts a --dev server with its delivery and chain loops
// running and a receiver it may deliver to, then runs the client's unittest
// suite: the live test (create an address, pay and mine, WatchDeliveries
// until the callback is acknowledged, verify its signature, read the logs;
// read the payout wallet and balance, stream the accounting export) and
// every cross-language webhook vector. A skipped Python test fails this
// one: CI must run them all.
func TestPythonClient(t *testing.T) {
	t.Parallel()
	needPython(t)

	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(hook.Close)
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(hook.URL+"/hook", servertest.A)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-v", "-s", "tests")
	cmd.Env = append(os.Environ(),
		"PAYHOOK_GRPC_ADDR="+in.Server.GRPCAddr(),
		"PAYHOOK_API_KEY="+in.KeyA,
		"PAYHOOK_CALLBACK_URL="+hook.URL+"/hook",
		"PYTHONPATH=src",
		"PYTHONDONTWRITEBYTECODE=1", // no __pycache__ in the source tree
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest: %v\n%s", err, out)
	}
	ran := regexp.MustCompile(`(?m)^Ran (\d+) tests?`).FindSubmatch(out)
	switch {
	case ran == nil:
		t.Fatalf("no unittest summary:\n%s", out)
	case bytes.Contains(out, []byte("skipped")):
		t.Fatalf("a Python test was skipped:\n%s", out)
	case !bytes.Contains(out, []byte("test_pay_watch_and_read_logs (")) || !bytes.Contains(out, []byte("test_payout_wallet_and_export (")) ||
		!bytes.Contains(out, []byte("test_every_vector (")):
		t.Fatalf("the live tests or the vectors did not run:\n%s", out)
	}
	t.Logf("python3 -m unittest: ran %s tests\n%s", ran[1], out)
}

// generated are the directories of src/ that generate.sh writes entirely.
var generated = []string{"payhook/v1", "google/api", "buf/validate"}

// TestGeneratedIsCurrent regenerates the client's modules into a temporary
// directory with generate.sh and fails when they differ from the committed
// ones (or a file is missing or extra).
func TestGeneratedIsCurrent(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, tool+" is not installed")
		}
	}
	tmp := t.TempDir()
	out, err := exec.Command("./generate.sh", tmp).CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
			missing(t, strings.TrimSpace(string(out)))
		}
		t.Fatalf("generate.sh: %v\n%s", err, out)
	}
	for _, dir := range generated {
		want := listFiles(t, filepath.Join(tmp, dir))
		got := listFiles(t, filepath.Join("src", dir))
		for name, w := range want {
			g, ok := got[name]
			switch {
			case !ok:
				t.Errorf("src/%s/%s is missing: run clients/python/generate.sh and commit the result", dir, name)
			case !bytes.Equal(g, w):
				t.Errorf("src/%s/%s is stale: run clients/python/generate.sh and commit the result", dir, name)
			}
		}
		for name := range got {
			if _, ok := want[name]; !ok {
				t.Errorf("src/%s/%s is not generated any more: run clients/python/generate.sh and commit the result", dir, name)
			}
		}
	}
}

// listFiles reads every regular file under dir, by path relative to it;
// __pycache__ directories are left out.
func listFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
