package nodetest

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// nodeRestartTimeout bounds how long a restarted node may take to be back
// where it was (litecoind: reindexed, its wallets loaded).
const nodeRestartTimeout = 90 * time.Second

// Kill9 kills litecoind with SIGKILL, as kill -9 would, and waits until it
// is gone. Its data directory stays for Restart.
//
// What survives: the block files and the wallet, written through to the
// operating system as they change. What does not: the block index and
// the chain state, which litecoind flushes only every hour (or when its
// cache is full, or when it stops), and its transaction pool (mempool.dat
// is written at a clean stop). Restarted as it was, a node killed within
// the hour comes back at its genesis block (see Restart).
func (n *Litecoind) Kill9(t testing.TB) {
	t.Helper()
	p := n.proc
	if p == nil {
		t.Fatal("litecoind: Kill9 of a node that is not running")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("litecoind: kill -9: %v", err)
	}
	select {
	case <-p.exited: //nolint:errcheck // its exit error says killed
	case <-time.After(10 * time.Second):
		t.Fatal("litecoind still running 10s after SIGKILL")
	}
	n.proc = nil
}

// Restart starts litecoind again on the same data directory and ports
// after Kill9, and returns once it is back where it was: every block it had
// on disk in its chain again, every wallet of its data directory loaded.
//
// It runs with -reindex: a node killed before its hourly flush has blocks
// on disk that its block index does not know yet. A node on a network
// downloads them again from its peers; on regtest there are none, and
// -reindex reads them back from its own block files instead. Either way
// the node answers RPC at once, far behind its old tip (here: from the
// genesis block), and catches up to the same chain, block by block, while
// clients poll it; Restart waits for the end of that (the node no longer
// in initial block download) before it loads the wallets, so that each
// wallet puts its unconfirmed transactions back in the pool, whose inputs
// are then known again.
func (n *Litecoind) Restart(t testing.TB) {
	t.Helper()
	if n.proc != nil {
		t.Fatal("litecoind: Restart of a node that is running")
	}
	n.launch(t, "-reindex")
	deadline := clock.Now().Add(nodeRestartTimeout)
	for {
		var info struct {
			Blocks  int64 `json:"blocks"`
			Headers int64 `json:"headers"`
			IBD     bool  `json:"initialblockdownload"`
		}
		err := n.Call(&info, "getblockchaininfo")
		if err == nil && !info.IBD && info.Blocks == info.Headers {
			break
		}
		if clock.Now().After(deadline) {
			t.Fatalf("litecoind: not reindexed within %s: %+v (%v)", nodeRestartTimeout, info, err)
		}
		select {
		case e := <-n.proc.exited:
			n.proc = nil
			t.Fatalf("litecoind exited while reindexing (%v)", e)
		case <-time.After(50 * time.Millisecond): // polling the node: no signal to wait on
		}
	}
	var dir struct {
		Wallets []struct {
			Name string `json:"name"`
		} `json:"wallets"`
	}
	n.Must(&dir, "listwalletdir")
	var loaded []string
	n.Must(&loaded, "listwallets")
	for _, w := range dir.Wallets {
		if !slices.Contains(loaded, w.Name) {
			n.Must(nil, "loadwallet", w.Name)
		}
	}
}

// Running reports whether the node's process runs (not killed or stopped).
func (n *Litecoind) Running() bool { return n.proc != nil }

// StartAnvilRestartable is StartAnvil for Kill9 and Restart: anvil keeps
// its chain in memory and dumps it (blocks, transactions, accounts) to a
// state file every interval seconds (--state, --state-interval), which
// Restart loads.
func StartAnvilRestartable(t testing.TB, interval int, args ...string) *Anvil {
	t.Helper()
	a := &Anvil{bin: AnvilPath(t), dir: t.TempDir()}
	a.state = filepath.Join(a.dir, "state.json")
	a.args = append(append([]string(nil), args...), "--state", a.state, "--state-interval", strconv.Itoa(interval))
	t.Cleanup(a.stop)
	a.URL = "http://" + a.launch(t, "0")
	return a
}

// DumpedHeight is the newest block of the chain anvil last dumped to its
// state file (StartAnvilRestartable), and when it was written; -1 while
// there is no complete dump.
func (a *Anvil) DumpedHeight(t testing.TB) (int64, time.Time) {
	t.Helper()
	if a.state == "" {
		t.Fatal("anvil: not started by StartAnvilRestartable")
	}
	st, err := os.Stat(a.state)
	if err != nil {
		return -1, time.Time{}
	}
	raw, err := os.ReadFile(a.state)
	if err != nil {
		return -1, time.Time{}
	}
	var dump struct {
		Best *int64 `json:"best_block_number"`
	}
	if json.Unmarshal(raw, &dump) != nil || dump.Best == nil {
		return -1, time.Time{} // being written
	}
	return *dump.Best, st.ModTime()
}

// Kill9 kills anvil with SIGKILL, as kill -9 would, and waits until it is
// gone. What it keeps is its last dump (StartAnvilRestartable): the blocks
// mined since, and every transaction in its pool, are lost.
func (a *Anvil) Kill9(t testing.TB) {
	t.Helper()
	p := a.proc
	if p == nil {
		t.Fatal("anvil: Kill9 of a node that is not running")
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("anvil: kill -9: %v", err)
	}
	select {
	case <-p.drained:
	case <-time.After(10 * time.Second):
		t.Fatal("anvil still running 10s after SIGKILL")
	}
	_ = p.cmd.Wait()
	a.proc = nil
}

// Restart starts anvil again after Kill9, on the same port, from its state
// file: the chain as last dumped, the same blocks with the same hashes, up
// to the dump's tip; an empty pool.
func (a *Anvil) Restart(t testing.TB) {
	t.Helper()
	if a.proc != nil {
		t.Fatal("anvil: Restart of a node that is running")
	}
	if a.state == "" {
		t.Fatal("anvil: not started by StartAnvilRestartable")
	}
	u, err := url.Parse(a.URL)
	if err != nil {
		t.Fatal(err)
	}
	if got := "http://" + a.launch(t, u.Port()); got != a.URL {
		t.Fatalf("anvil restarted at %s, want %s", got, a.URL)
	}
}

// Running reports whether anvil's process runs (not killed or stopped).
func (a *Anvil) Running() bool { return a.proc != nil }
