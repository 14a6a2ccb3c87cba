package nodetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/payhook/payhook/internal/clock"
)

// LitecoindInstall says how to install litecoind.
const LitecoindInstall = "apt-get install litecoind (Debian), or put Litecoin Core's litecoind on PATH"

// Litecoind is a litecoind in regtest, with a wallet, for one test.
type Litecoind struct {
	// URL is the JSON-RPC endpoint with its credentials.
	URL string
	// Dir is the data directory.
	Dir string

	rpcURL string
	t      testing.TB
	bin    string   // the litecoind binary
	args   []string // its command line (restart.go adds -reindex)
	proc   *ltcProc // the running process; nil once killed or stopped
}

// ltcProc is one run of litecoind.
type ltcProc struct {
	cmd    *exec.Cmd
	exited chan error // Wait's result
	stderr *bytes.Buffer
}

// launch starts litecoind with n.args plus extra and waits until it answers
// RPC (after its warm-up: loading the block index, the wallets named in its
// settings).
func (n *Litecoind) launch(t testing.TB, extra ...string) {
	t.Helper()
	cmd := exec.Command(n.bin, append(append([]string(nil), n.args...), extra...)...)
	cmd.Env = append(os.Environ(), "HOME="+n.Dir)
	p := &ltcProc{cmd: cmd, exited: make(chan error, 1), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start litecoind: %v", err)
	}
	go func() { p.exited <- cmd.Wait() }()
	n.proc = p
	deadline := clock.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := n.call(ctx, nil, "getblockchaininfo")
		cancel()
		if err == nil {
			return
		}
		select {
		case e := <-p.exited:
			n.proc = nil
			t.Fatalf("litecoind exited (%v): %s", e, p.stderr.String())
		case <-time.After(50 * time.Millisecond): // polling a starting process: no signal to wait on
		}
		if clock.Now().After(deadline) {
			t.Fatalf("litecoind did not answer within 30s: %v", err)
		}
	}
}

// stop stops the running litecoind, if any: RPC stop, SIGKILL after 20s.
func (n *Litecoind) stop(t testing.TB) {
	p := n.proc
	if p == nil {
		return
	}
	n.proc = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = n.call(ctx, nil, "stop")
	select {
	case err := <-p.exited:
		if err != nil {
			t.Logf("litecoind exited after stop: %v", err)
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited //nolint:errcheck // waits for the kill: its exit error says killed
	}
}

// StartLitecoind starts litecoind in regtest in a temporary directory (HOME
// too: Debian's wrapper writes ~/.litecoin on every start), creates a
// wallet and mines blocks blocks to it (101 make its first coinbase
// spendable), and stops it when the test ends. Without litecoind the test
// is skipped (failed under CI).
func StartLitecoind(t testing.TB, blocks int) *Litecoind {
	t.Helper()
	bin := Need(t, "litecoind", LitecoindInstall, "/usr/lib/litecoin/litecoind")
	if real := "/usr/lib/litecoin/litecoind"; bin == "/usr/bin/litecoind" {
		if _, err := os.Stat(real); err == nil {
			bin = real // the wrapper only writes ~/.litecoin
		}
	}
	dir := t.TempDir()
	rpcPort, p2pPort := FreePort(t), FreePort(t)
	n := &Litecoind{Dir: dir, t: t, bin: bin,
		rpcURL: "http://" + addr(rpcPort) + "/",
		URL:    fmt.Sprintf("http://payhook:regtest-secret@%s/", addr(rpcPort)),
		args: []string{"-regtest", "-datadir=" + dir,
			"-rpcuser=payhook", "-rpcpassword=regtest-secret", fmt.Sprintf("-rpcport=%d", rpcPort), fmt.Sprintf("-port=%d", p2pPort),
			"-rpcbind=127.0.0.1", "-rpcallowip=127.0.0.1", "-listen=0", "-connect=0", "-dnsseed=0", "-server=1",
			"-txindex=1", "-fallbackfee=0.0002", "-spendzeroconfchange=0", "-printtoconsole=0", "-rpcworkqueue=64",
			// A legacy wallet fills its keypool when it is created: 100 keys
			// rather than 1,000 each way keeps createwallet well within its
			// timeout on a loaded 2-core machine (it refills as tests use it).
			"-keypool=100"}}
	t.Cleanup(func() { n.stop(t) })
	n.launch(t)
	n.Must(nil, "createwallet", "payhook")
	if blocks > 0 {
		var a string
		n.Must(&a, "getnewaddress")
		n.Must(nil, "generatetoaddress", blocks, a)
	}
	return n
}

// Must calls method on the node (wallet calls go to the wallet) and fails
// the test on an error.
func (n *Litecoind) Must(out any, method string, params ...any) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.call(ctx, out, method, params...); err != nil {
		n.t.Fatalf("litecoind %s: %v", method, err)
	}
}

// Call calls method, returning the node's error.
func (n *Litecoind) Call(out any, method string, params ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.call(ctx, out, method, params...)
}

// CallWallet calls method on the node's wallet named wallet (one the test
// made with createwallet: another party's wallet beside payhook's).
func (n *Litecoind) CallWallet(wallet string, out any, method string, params ...any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return n.callAt(ctx, n.rpcURL+"wallet/"+url.PathEscape(wallet), out, method, params...)
}

func (n *Litecoind) call(ctx context.Context, out any, method string, params ...any) error {
	u := n.rpcURL
	if method != "createwallet" && method != "stop" && isWalletCall(method) {
		u += "wallet/payhook"
	}
	return n.callAt(ctx, u, out, method, params...)
}

// callAt calls method at the node's RPC URL u.
func (n *Litecoind) callAt(ctx context.Context, u string, out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "1.0", "id": 1, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.SetBasicAuth("payhook", "regtest-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	if err := d.Decode(&r); err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if r.Error != nil {
		return fmt.Errorf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if out != nil {
		d := json.NewDecoder(bytes.NewReader(r.Result))
		d.UseNumber()
		return d.Decode(out)
	}
	return nil
}

func isWalletCall(method string) bool {
	switch method {
	case "getnewaddress", "sendtoaddress", "getbalance", "listunspent", "gettransaction", "sendmany", "getaddressinfo", "importprivkey", "importaddress", "listtransactions":
		return true
	}
	return false
}
