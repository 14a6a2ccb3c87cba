package nodetest

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// InCI reports whether the tests run under CI (.ci/run sets PAYHOOK_CI=1;
// CI services set CI=true), where a missing program is a failure.
func InCI() bool { return os.Getenv("PAYHOOK_CI") != "" || os.Getenv("CI") == "true" }

// Need returns the path of program, found on PATH or at one of the extra
// paths. Where it is absent it skips t with install (how to install it), or
// fails t under CI.
func Need(t testing.TB, program, install string, extra ...string) string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	for _, p := range extra {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if InCI() {
		t.Fatalf("%s is not installed, and CI must not skip this test: %s", program, install)
	}
	t.Skipf("%s is not installed; install it to run this test: %s", program, install)
	return ""
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	return port
}

// addr returns 127.0.0.1:port.
func addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
