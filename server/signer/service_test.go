package signer_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/keysign"
	"github.com/payhook/payhook/chains/utxo"
	signerv1 "github.com/payhook/payhook/gen/payhook/signer/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/signer"
)

var seed = bytes.Repeat([]byte{3}, 32)

// env is a Service over seed, with a policy for project 1's ltc on
// regtest: dest allowed, a cap of 1 ltc a day.
type env struct {
	keys  *chains.Keys
	tk    chains.Ticker
	reg   *chains.Registry
	pol   *signer.Policy
	state string
	now   time.Time
	dest  string
	other string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	keys, _ := chains.NewKeys(seed)
	reg, _ := family.DefaultRegistry().WithNet("ltc", chains.Regtest)
	tk, _ := reg.Lookup("ltc")
	d, _ := chains.NewDeriver(bytes.Repeat([]byte{9}, 32), family.All())
	dest, _ := d.Address(tk, 1)
	other, _ := d.Address(tk, 2)
	pol, err := signer.LoadPolicy(strings.NewReader(fmt.Sprintf(`{"networks": {"ltc": "regtest"},
		"projects": [{"project": 1, "ticker": "ltc", "destinations": [%q], "daily_cap": "1"}]}`, dest)), family.DefaultRegistry())
	if err != nil {
		t.Fatal(err)
	}
	return &env{keys: keys, tk: tk, reg: family.DefaultRegistry(), pol: pol, state: filepath.Join(t.TempDir(), "state.json"),
		now: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), dest: dest, other: other}
}

func (e *env) service(t *testing.T) *signer.Service {
	t.Helper()
	s, err := signer.NewService(signer.Config{Keys: e.keys, Registry: e.reg, Policy: e.pol, StateFile: e.state, Now: func() time.Time { return e.now }},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (e *env) script(t testing.TB, addr string) []byte {
	t.Helper()
	a, err := utxo.DecodeAddress(e.tk, addr)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := txscript.PayToAddrScript(a)
	return s
}

// request pays amount base units to to from the seed's address of index
// 1 (an input of 2 ltc), the rest to the operator's address.
func (e *env) request(t testing.TB, key, to string, amount int64) *signerv1.SignUtxoRequest {
	t.Helper()
	priv, _ := e.keys.Secp256k1(e.tk, 1)
	from, _ := chains.PubKeyAddress(e.tk, priv.PubKey())
	op, _ := e.keys.OperatorAddress(e.tk)
	tx := wire.NewMsgTx(2)
	h, _ := chainhash.NewHashFromStr(strings.Repeat("cd", 32))
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(h, 1), nil, nil))
	tx.AddTxOut(wire.NewTxOut(amount, e.script(t, to)))
	tx.AddTxOut(wire.NewTxOut(200_000_000-amount-10_000, e.script(t, op)))
	var buf bytes.Buffer
	_ = tx.SerializeNoWitness(&buf)
	return &signerv1.SignUtxoRequest{
		Context: &signerv1.SignContext{Ticker: "ltc", Net: "regtest", Purpose: "payout", ProjectId: 1, Key: key},
		Tx:      buf.Bytes(),
		Inputs:  []*signerv1.UtxoInput{{Value: 200_000_000, Script: e.script(t, from), Key: 1}},
		Own:     []*signerv1.UtxoOwnOutput{{Output: 1, Key: &signerv1.KeyRef{Operator: true}}},
	}
}

func code(err error) codes.Code { return status.Code(err) }

// TestSignUtxoPolicy: a transaction to an allowed destination within the
// cap is signed; one to another destination, of another project, on
// another network, or over the day's cap is refused (PERMISSION_DENIED,
// saying why); the same transaction signed again counts once, another one
// under the same outbound key counts anew; the cap's state survives a
// restart of the service, and a new UTC day starts afresh.
func TestSignUtxoPolicy(t *testing.T) {
	e := newEnv(t)
	s := e.service(t)
	ctx := context.Background()
	resp, err := s.SignUtxo(ctx, e.request(t, "p1", e.dest, 60_000_000))
	if err != nil {
		t.Fatal(err)
	}
	var signed wire.MsgTx
	if err := signed.Deserialize(bytes.NewReader(resp.GetTx())); err != nil || len(signed.TxIn[0].Witness) != 2 {
		t.Fatalf("signed transaction: %v, witness %v", err, signed.TxIn)
	}
	// The same transaction again: counted once (0.6 of 1).
	if _, err := s.SignUtxo(ctx, e.request(t, "p1", e.dest, 60_000_000)); err != nil {
		t.Fatalf("the same transaction again: %v", err)
	}
	// Another transaction under the same key counts anew: 0.6 + 0.5 > 1.
	if _, err := s.SignUtxo(ctx, e.request(t, "p1", e.dest, 50_000_000)); code(err) != codes.PermissionDenied {
		t.Errorf("another transaction under a key already counted: %v, want PERMISSION_DENIED", err)
	}

	refused := map[string]struct {
		req  *signerv1.SignUtxoRequest
		want string
	}{
		"destination not allowed": {e.request(t, "p2", e.other, 1000), "which project 1's ltc policy does not allow"},
		"over the cap":            {e.request(t, "p3", e.dest, 50_000_000), "at most 1 ltc a day (UTC); 0.4 left today, and this transaction sends 0.5"},
	}
	other := e.request(t, "p4", e.dest, 1000)
	other.Context.ProjectId = 2
	refused["project without a policy"] = struct {
		req  *signerv1.SignUtxoRequest
		want string
	}{other, "project 2 has no ltc policy"}
	mainnet := e.request(t, "p5", e.dest, 1000)
	mainnet.Context.Net = "mainnet"
	refused["another network"] = struct {
		req  *signerv1.SignUtxoRequest
		want string
	}{mainnet, "the signer's policy has it on regtest"}
	for name, c := range refused {
		_, err := s.SignUtxo(ctx, c.req)
		if code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%s: %v, want PERMISSION_DENIED saying %q", name, err, c.want)
		}
	}
	// Not the seed's own: an output called the operator's that is not.
	lie := e.request(t, "p6", e.dest, 1000)
	lie.Own[0].Output = 0
	if _, err := s.SignUtxo(ctx, lie); code(err) != codes.InvalidArgument {
		t.Errorf("an own output that pays another key: %v, want INVALID_ARGUMENT", err)
	}

	// A restart remembers the day's 0.6; the transaction signed before
	// still counts once.
	s = e.service(t)
	if _, err := s.SignUtxo(ctx, e.request(t, "p7", e.dest, 50_000_000)); code(err) != codes.PermissionDenied {
		t.Errorf("over the cap after a restart: %v", err)
	}
	if _, err := s.SignUtxo(ctx, e.request(t, "p1", e.dest, 60_000_000)); err != nil {
		t.Errorf("the first key again after a restart: %v", err)
	}
	if _, err := s.SignUtxo(ctx, e.request(t, "p8", e.dest, 40_000_000)); err != nil {
		t.Errorf("the rest of the cap: %v", err)
	}
	e.now = e.now.Add(24 * time.Hour)
	if _, err := s.SignUtxo(ctx, e.request(t, "p9", e.dest, 90_000_000)); err != nil {
		t.Errorf("a new day: %v", err)
	}
}

// TestGetPublicKeys: the signer's public keys derive the addresses the seed
// derives, and its operator address is the seed's.
func TestGetPublicKeys(t *testing.T) {
	e := newEnv(t)
	s := e.service(t)
	p, _ := e.tk.Rules().KeyPath(e.tk)
	resp, err := s.GetPublicKeys(context.Background(), &signerv1.GetPublicKeysRequest{Paths: []*signerv1.KeyPath{{Purpose: p.Purpose, CoinType: p.CoinType}}})
	if err != nil || len(resp.GetKeys()) != 1 {
		t.Fatalf("%v, %v", resp, err)
	}
	if _, err := s.GetPublicKeys(context.Background(), &signerv1.GetPublicKeysRequest{}); code(err) != codes.InvalidArgument {
		t.Errorf("no paths: %v", err)
	}
}

// TestLoadPolicy: a policy names its faults.
func TestLoadPolicy(t *testing.T) {
	for name, tt := range map[string]struct{ policy, want string }{
		"unknown ticker":   {`{"projects": [{"project": 1, "ticker": "xyz", "destinations": [], "daily_cap": "1"}]}`, `unknown ticker "xyz"`},
		"no chain id":      {`{"networks": {"eth": "regtest"}, "projects": [{"project": 1, "ticker": "eth", "destinations": [], "daily_cap": "1"}]}`, "chain_ids: eth on regtest needs its chain id"},
		"no contract":      {`{"networks": {"trc20/usdt": "testnet"}, "projects": [{"project": 1, "ticker": "trc20/usdt", "destinations": [], "daily_cap": "1"}]}`, "contracts: trc20/usdt on testnet needs its contract"},
		"chain id of utxo": {`{"chain_ids": {"ltc": 1}}`, "want a positive chain id of an EVM ticker"},
		"contract of coin": {`{"contracts": {"eth": "0x5FbDB2315678afecb367f032d93F642f64180aa3"}}`, "eth is not a token"},
		"bad eth dest":     {`{"projects": [{"project": 1, "ticker": "eth", "destinations": ["0x12"], "daily_cap": "1"}]}`, "destination \"0x12\""},
		"bad cap":          {`{"projects": [{"project": 1, "ticker": "ltc", "destinations": [], "daily_cap": "-1"}]}`, "daily_cap"},
		"wrong network":    {`{"projects": [{"project": 1, "ticker": "ltc", "destinations": ["rltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kzp5p5y"], "daily_cap": "1"}]}`, "destination"},
		"unknown field":    {`{"project": []}`, "unknown field"},
		"twice":            {`{"projects": [{"project": 1, "ticker": "ltc", "daily_cap": "1"}, {"project": 1, "ticker": "ltc", "daily_cap": "2"}]}`, "a second entry"},
		"unknown network":  {`{"networks": {"ltc": "moon"}}`, "want mainnet, testnet or regtest"},
	} {
		_, err := signer.LoadPolicy(strings.NewReader(tt.policy), family.DefaultRegistry())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
	}
}

// TestClientServer: over mutual TLS, the client derives the seed's
// addresses from the signer's public keys, finds the operator's address,
// gets UTXO transactions signed, and turns a refusal into
// ErrSignerRefused and ErrInvalidForward; Solana addresses come from the
// signer; a client whose certificate the signer's CA did not issue is
// refused.
func TestClientServer(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	serverCert, serverKey := ca.issue(t, dir, "signer", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	tc, err := signer.ServerTLS(serverCert, serverKey, ca.file)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := signer.NewGRPCServer(e.service(t), tc)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})

	url := "https://" + lis.Addr().String()
	c, err := signer.Dial(signer.ClientConfig{URL: url, Cert: clientCert, Key: clientKey, CA: ca.file})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	ctx := context.Background()
	d, err := c.PublicDeriver(ctx, family.All())
	if err != nil {
		t.Fatal(err)
	}
	local, _ := chains.NewDeriver(seed, family.All())
	got, err := d.Address(e.tk, 7)
	want, _ := local.Address(e.tk, 7)
	if err != nil || got != want {
		t.Errorf("address 7 from the signer's public keys: %s, %v; the seed's: %s", got, err, want)
	}
	// Solana's keys derive only from the seed: the signer answers them,
	// a batch at a time (indexes 0 and 70 are in two batches).
	sol, _ := family.DefaultRegistry().Lookup("sol")
	for _, i := range []uint32{0, 1, 70} {
		got, err := d.Address(sol, i)
		want, _ := local.Address(sol, i)
		if err != nil || got != want {
			t.Errorf("Solana address %d from the signer: %s, %v; the seed's: %s", i, got, err, want)
		}
	}
	if op, err := c.OperatorAddress(ctx, sol); err != nil || op != must(e.keys.OperatorAddress(sol)) {
		t.Errorf("Solana operator address from the signer: %s, %v", op, err)
	}
	op, err := c.OperatorAddress(ctx, e.tk)
	if wantOp, _ := e.keys.OperatorAddress(e.tk); err != nil || op != wantOp {
		t.Errorf("operator address %s, %v; want %s", op, err, wantOp)
	}

	req := func(key, to string, amount int64) chains.UTXOSignRequest {
		r := e.request(t, key, to, amount)
		return chains.UTXOSignRequest{Context: chains.SignContext{Ticker: e.tk, Purpose: "payout", ProjectID: 1, Key: key}, Tx: r.GetTx(),
			Inputs: []chains.UTXOInput{{Value: r.Inputs[0].GetValue(), Script: r.Inputs[0].GetScript(), Key: 1}},
			Own:    []chains.UTXOOwnOutput{{Output: 1, Key: chains.KeyRef{Operator: true}}}}
	}
	raw, err := c.SignUTXO(ctx, req("k1", e.dest, 1000))
	if err != nil {
		t.Fatalf("SignUTXO: %v", err)
	}
	// The same bytes as the process's own signer (RFC 6979 signatures are
	// deterministic): the remote signer is a drop-in chains.Signer.
	if local, err := keysign.New(e.keys).SignUTXO(ctx, req("k1", e.dest, 1000)); err != nil || !bytes.Equal(local, raw) {
		t.Errorf("the remote signer's transaction differs from keysign.Local's (%v)", err)
	}
	_, err = c.SignUTXO(ctx, req("k2", e.other, 1000))
	if !errors.Is(err, chains.ErrSignerRefused) || !errors.Is(err, chains.ErrInvalidForward) || !strings.Contains(err.Error(), "does not allow") {
		t.Errorf("a refused destination: %v", err)
	}

	// A client certificate of another CA is refused at the handshake.
	rogue := newCA(t, dir, "rogue")
	rc, rk := rogue.issue(t, dir, "rogue-client", x509.ExtKeyUsageClientAuth)
	bad, err := signer.Dial(signer.ClientConfig{URL: url, Cert: rc, Key: rk, CA: ca.file})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bad.Close() }()
	if _, err := bad.SignUTXO(ctx, req("k3", e.dest, 1000)); !errors.Is(err, chains.ErrSignerUnavailable) {
		t.Errorf("a client the signer's CA did not certify: %v, want ErrSignerUnavailable", err)
	}
	if _, err := signer.Dial(signer.ClientConfig{URL: "http://127.0.0.1:1", Cert: rc, Key: rk, CA: ca.file}); err == nil || !strings.Contains(err.Error(), "https://HOST:PORT") {
		t.Errorf("an http URL: %v", err)
	}
}

// serveSigner serves svc over mutual TLS on a local port and returns a
// Client of it.
func serveSigner(t *testing.T, svc *signer.Service) *signer.Client {
	t.Helper()
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	serverCert, serverKey := ca.issue(t, dir, "signer", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	tc, err := signer.ServerTLS(serverCert, serverKey, ca.file)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := signer.NewGRPCServer(svc, tc)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(lis) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	c, err := signer.Dial(signer.ClientConfig{URL: "https://" + lis.Addr().String(), Cert: clientCert, Key: clientKey, CA: ca.file})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testCA issues certificates for 127.0.0.1.
type testCA struct {
	file string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, dir, name string) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: clock.Now().Add(-time.Hour),
		NotAfter: clock.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(dir, name+".pem")
	write(t, file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return testCA{file: file, cert: cert, key: key}
}

func (ca testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name}, NotBefore: clock.Now().Add(-time.Hour),
		NotAfter: clock.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	write(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	write(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
