package nodetest

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// AnvilInstall is how to install anvil for the tests: the npm package
// @foundry-rs/anvil pinned in chains/nodetest/npm, whose platform package
// carries the binary.
const AnvilInstall = "npm ci --prefix chains/nodetest/npm (or install Foundry's anvil on PATH)"

// AnvilChainID is the chain id anvil reports by default (eth_chainId).
const AnvilChainID = 31337

// anvilStartTimeout bounds how long anvil may take to listen.
const anvilStartTimeout = 30 * time.Second

// Anvil is a running anvil node; StartAnvil stops it when the test ends.
type Anvil struct {
	// URL is the node's JSON-RPC endpoint, http://127.0.0.1:port.
	URL string

	bin   string     // the anvil binary
	dir   string     // its working directory
	args  []string   // its command line after --host and --port
	state string     // the state file (StartAnvilRestartable), or ""
	proc  *anvilProc // the running process; nil once killed or stopped
}

// AnvilPath returns the anvil binary: on PATH, or the one npm installed in
// chains/nodetest/npm (the @foundry-rs/anvil platform package for this OS
// and architecture). Where neither exists it skips t, or fails t under CI.
func AnvilPath(t testing.TB) string {
	t.Helper()
	return Need(t, "anvil", AnvilInstall, npmAnvil()...)
}

// npmAnvil returns where npm puts the platform binary of @foundry-rs/anvil
// under chains/nodetest/npm, found from this source file's directory.
func npmAnvil() []string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil
	}
	goos, exe := runtime.GOOS, "anvil"
	if goos == "windows" {
		goos, exe = "win32", "anvil.exe"
	}
	dir := filepath.Join(filepath.Dir(file), "npm", "node_modules", "@foundry-rs", "anvil-"+goos+"-"+runtime.GOARCH, "bin")
	return []string{filepath.Join(dir, exe)}
}

// StartAnvil starts anvil on a free loopback port with args added to its
// command line (e.g. "--no-mining"), waits until it listens, and stops it
// when the test ends. anvil runs with its defaults otherwise: chain id
// 31337, ten unlocked dev accounts of 10000 ether, the latest hardfork.
func StartAnvil(t testing.TB, args ...string) *Anvil {
	t.Helper()
	a := &Anvil{bin: AnvilPath(t), dir: t.TempDir(), args: args}
	t.Cleanup(a.stop)
	// Port 0: anvil binds a free port and says which; no race with another
	// process over a port picked in advance.
	a.URL = "http://" + a.launch(t, "0")
	return a
}

// anvilProc is one run of anvil.
type anvilProc struct {
	cmd     *exec.Cmd
	drained chan struct{} // closed once its output ends
}

// launch starts anvil on port with a.args, waits until it listens and
// returns its address.
func (a *Anvil) launch(t testing.TB, port string) string {
	t.Helper()
	cmd := exec.Command(a.bin, append([]string{"--host", "127.0.0.1", "--port", port}, a.args...)...)
	cmd.Dir = a.dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start anvil: %v", err)
	}
	p := &anvilProc{cmd: cmd, drained: make(chan struct{})}
	listening := make(chan string, 1)
	go func() {
		defer close(p.drained)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "Listening on "); ok {
				listening <- addr
				break
			}
		}
		// anvil logs every request: keep reading so it never blocks on a
		// full pipe, until it exits.
		_, _ = io.Copy(io.Discard, out)
	}()
	timer := time.NewTimer(anvilStartTimeout)
	defer timer.Stop()
	select {
	case addr := <-listening:
		a.proc = p
		return addr
	case <-p.drained:
		err := cmd.Wait()
		if err == nil {
			err = errors.New("exited before listening")
		}
		t.Fatalf("anvil: %v", err)
	case <-timer.C:
		_ = cmd.Process.Kill()
		<-p.drained
		_ = cmd.Wait()
		t.Fatalf("anvil did not listen within %s", anvilStartTimeout)
	}
	return ""
}

// stop kills the running anvil, if any, and waits for it.
func (a *Anvil) stop() {
	p := a.proc
	if p == nil {
		return
	}
	a.proc = nil
	_ = p.cmd.Process.Kill()
	<-p.drained
	_ = p.cmd.Wait()
}
