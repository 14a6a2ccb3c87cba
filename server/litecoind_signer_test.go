package server_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	remotesigner "github.com/payhook/payhook/server/signer"
)

// TestLitecoindRemoteSigner: the server, started without a seed and with
// --signer-url, forwards a litecoind regtest payment signed by `payhook
// signer` running as a separate process (mutual TLS, certificates made
// here) on a seed only it holds; the forward pays the merchant's wallet,
// which the signer's policy allows. A payout to an address the policy does
// not allow, and a payout over the project's daily cap, are refused by the
// signer: each payout is error with the signer's reason, and nothing
// reaches the node; a payout within the policy is sent.
func TestLitecoindRemoteSigner(t *testing.T) {
	t.Parallel()
	bin := buildPayhook(t)
	dir := t.TempDir()
	n := nodetest.StartLitecoind(t, 110)

	var wallet, allowed, stranger string
	n.Must(&wallet, "getnewaddress")
	n.Must(&allowed, "getnewaddress")
	n.Must(&stranger, "getnewaddress")

	// The signer's machine: the seed (only there), its policy, its
	// certificates. The server's: its client certificate and the key that
	// seals its database's secrets.
	seed := bytes.Repeat([]byte{0x4b}, 32)
	writeFile(t, filepath.Join(dir, "signer", "seed"), hex.EncodeToString(seed)+"\n")
	const project = 1 // the first project servertest creates, in a fresh database
	policy := fmt.Sprintf(`{"networks": {"ltc": "regtest"}, "projects": [
		{"project": %d, "ticker": "ltc", "destinations": [%q, %q], "daily_cap": "1.0"}]}`, project, wallet, allowed)
	writeFile(t, filepath.Join(dir, "signer", "policy.json"), policy)
	pki := newTestPKI(t, filepath.Join(dir, "pki"))
	secrets := filepath.Join(dir, "server", "secrets.key")
	writeFile(t, secrets, hex.EncodeToString(bytes.Repeat([]byte{0x11}, 32))+"\n")

	addr := startSigner(t, bin, "signer",
		"--listen", "127.0.0.1:0",
		"--seed-file", filepath.Join(dir, "signer", "seed"),
		"--policy-file", filepath.Join(dir, "signer", "policy.json"),
		"--cert", pki.serverCert, "--key", pki.serverKey, "--client-ca", pki.ca)

	e := newLTCEnvOn(t, n, store.Postgres, func(c *server.Config) {
		c.Keys = server.KeysConfig{SecretsKeyFile: secrets, Signer: remotesigner.ClientConfig{
			URL: "https://" + addr, Cert: pki.clientCert, Key: pki.clientKey, CA: pki.ca}}
	})
	if e.in.ProjectA != project {
		t.Fatalf("project A is %d; the policy was written for %d", e.in.ProjectA, project)
	}
	if _, err := os.Stat(server.DefaultSeedFile); err == nil {
		t.Fatalf("the server wrote a seed file %s", server.DefaultSeedFile)
	}

	// A forward to the merchant's wallet, signed by the signer.
	created := e.in.Get(t, "/ltc/create/", url.Values{"callback": {e.sink.URL + "/hook"}, "address": {wallet}, "confirmations": {"2"}, "json": {"1"}}, e.in.KeyA)
	wantStatus(t, created, 200)
	addrIn := created.JSON["address_in"].(string)
	n.Must(nil, "sendtoaddress", addrIn, json.Number("0.5"))
	for range 3 {
		e.step(t, 1)
	}
	if got := strings.Join(e.sink.statuses(), ","); got != "pending,confirmed,completed" {
		t.Fatalf("callbacks %s, want pending, confirmed, completed", got)
	}
	e.sink.mu.Lock()
	done := e.sink.got[2].fields
	e.sink.mu.Unlock()
	var txidOut string
	_ = json.Unmarshal(done["txid_out"], &txidOut)
	fwd, _ := decimal.NewFromString(strings.Trim(string(done["value_forwarded_coin"]), `"`))
	if paid := paidTo(t, n, txidOut, wallet); !paid.Equal(fwd) || paid.IsZero() {
		t.Fatalf("the forward %s pays the wallet %s, value_forwarded_coin %s", txidOut, paid, fwd)
	}
	e.step(t, 1)

	// The payout wallet, funded directly.
	r := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA)
	wantStatus(t, r, 200)
	payoutWallet := r.JSON["address"].(string)
	n.Must(nil, "sendtoaddress", payoutWallet, json.Number("1.0"))
	for range 3 {
		e.step(t, 1)
	}

	payout := func(to, amount string) map[string]any {
		t.Helper()
		r := e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: %q}}`, to, amount), e.in.KeyA)
		wantStatus(t, r, 200)
		return r.JSON["payout_info"].(map[string]any)
	}
	mempool := func() []string {
		var m []string
		n.Must(&m, "getrawmempool")
		return m
	}

	// Within the policy: sent, its change back to the payout wallet.
	p := payout(allowed, "0.3")
	if p["status"] != "done" || p["txid"] == "" {
		t.Fatalf("payout within the policy: %v", p)
	}
	if paid := paidTo(t, n, p["txid"].(string), allowed); !paid.Equal(decimal.RequireFromString("0.3")) {
		t.Errorf("the payout pays %s, want 0.3", paid)
	}
	for range 3 {
		e.step(t, 1)
	}

	// Refused: a destination the policy does not allow. (The funds a
	// refused payout planned stay held for the operator.)
	p = payout(stranger, "0.1")
	if p["status"] != "error" || !strings.HasPrefix(fmt.Sprint(p["error"]), "the signer refused to sign it: ") || !strings.Contains(fmt.Sprint(p["error"]), stranger+", which project 1's ltc policy does not allow") {
		t.Errorf("payout to a destination the policy does not allow: %v", p)
	}
	if m := mempool(); len(m) != 0 {
		t.Errorf("a refused payout reached the node: mempool %v", m)
	}

	// Refused: over the daily cap (the forward and the first payout left
	// about 0.8 of 1.0 today).
	n.Must(nil, "sendtoaddress", payoutWallet, json.Number("1.0"))
	for range 3 {
		e.step(t, 1)
	}
	p = payout(allowed, "0.3")
	if p["status"] != "error" || !strings.HasPrefix(fmt.Sprint(p["error"]), "the signer refused to sign it: ") || !strings.Contains(fmt.Sprint(p["error"]), "at most 1 ltc a day") {
		t.Errorf("payout over the daily cap: %v", p)
	}
	if m := mempool(); len(m) != 0 {
		t.Errorf("a refused payout reached the node: mempool %v", m)
	}
}

// paidTo sums what transaction txid pays addr.
func paidTo(t *testing.T, n *nodetest.Litecoind, txid, addr string) decimal.Decimal {
	t.Helper()
	var tx struct {
		Vout []struct {
			Value        json.Number `json:"value"`
			ScriptPubKey struct {
				Addresses []string `json:"addresses"`
				Address   string   `json:"address"`
			} `json:"scriptPubKey"`
		} `json:"vout"`
	}
	n.Must(&tx, "getrawtransaction", txid, true)
	paid := decimal.Zero
	for _, o := range tx.Vout {
		if o.ScriptPubKey.Address == addr || (len(o.ScriptPubKey.Addresses) == 1 && o.ScriptPubKey.Addresses[0] == addr) {
			v, _ := decimal.NewFromString(o.Value.String())
			paid = paid.Add(v)
		}
	}
	return paid
}

// newLTCEnvOn is newLTCEnv on the node n, which the test started before
// the server.
func newLTCEnvOn(t *testing.T, n *nodetest.Litecoind, d store.Dialect, mutate ...func(*server.Config)) *ltcEnv {
	t.Helper()
	sink := newSink(t)
	in := servertest.Start(t, d, append([]func(*server.Config){func(c *server.Config) {
		c.ManualDelivery = true
		c.Chains.OfferWithoutNodes = false
		c.Chains.Nodes = map[string]string{"ltc": n.URL + "?network=regtest"}
		c.Chains.Prices = server.PricesTable
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(sink.URL+"/hook", servertest.A, servertest.B)
	}}, mutate...)...)
	pub := in.Get(t, "/pubkey/", nil, in.KeyA).JSON["pubkey"].(string)
	resp, err := http.Post(sink.URL+"/pin", "text/plain", strings.NewReader(pub))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	if err := in.Server.Watcher("ltc").PollOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &ltcEnv{n: n, in: in, sink: sink, tk: tk}
}

// buildPayhook builds the payhook command into a temporary directory.
func buildPayhook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "payhook")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "github.com/payhook/payhook/cmd/payhook").CombinedOutput()
	if err != nil {
		t.Fatalf("go build payhook: %v\n%s", err, out)
	}
	return bin
}

// startSigner runs bin with args as a separate process until the test
// ends, and returns the address it listens on (its first line of
// output).
func startSigner(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("payhook signer: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("payhook signer did not stop on an interrupt\n%s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		first := true
		for sc.Scan() {
			if first {
				lines <- sc.Text()
				first = false
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	select {
	case line, ok := <-lines:
		addr, found := strings.CutPrefix(line, "payhook signer: listening on ")
		if !ok || !found {
			t.Fatalf("payhook signer printed %q\n%s", line, stderr.String())
		}
		return addr
	case <-time.After(60 * time.Second):
		t.Fatalf("payhook signer did not start listening\n%s", stderr.String())
	}
	return ""
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testPKI is a CA and the certificates of mutual TLS between the server
// (client) and the signer, as PEM files.
type testPKI struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

// newTestPKI writes a CA, a signer certificate for 127.0.0.1 and a client
// certificate under dir.
func newTestPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := clock.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "payhook test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := testPKI{ca: filepath.Join(dir, "ca.pem")}
	writeFile(t, p.ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})))
	issue := func(name string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
		certFile, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writeFile(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
		writeFile(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
		return certFile, keyFile
	}
	p.serverCert, p.serverKey = issue("signer", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	p.clientCert, p.clientKey = issue("server", 3, x509.ExtKeyUsageClientAuth, nil)
	return p
}
