package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeSeedOrSigner: a server with a node and no seed refuses to start
// and names both ways (a seed, or a remote signer); with --signer-url it
// reads no seed, refuses one given as well, and needs --secrets-key-file
// and the mutual TLS files.
func TestServeSeedOrSigner(t *testing.T) {
	// The package's seed (TestMain) is not this server's.
	t.Setenv("PAYHOOK_SEED_FILE", "")
	dir := t.TempDir()
	base := []string{"serve", "--db", "sqlite:" + filepath.Join(dir, "p.db"), "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--node", "ltc=http://u:p@127.0.0.1:1/?network=regtest"}
	signer := []string{"--signer-url", "https://127.0.0.1:7443", "--signer-cert", "c.pem", "--signer-key", "k.pem", "--signer-ca", "ca.pem"}
	for name, tt := range map[string]struct {
		args []string
		want []string
	}{
		"no seed, no signer":       {[]string{"--seed-file", filepath.Join(dir, "missing")}, []string{"payhook seed init", "--signer-url"}},
		"signer and a seed file":   {append([]string{"--seed-file", filepath.Join(dir, "seed")}, signer...), []string{"--signer-url", "holds no seed"}},
		"signer without a secrets": {signer, []string{"--secrets-key-file: required with --signer-url"}},
		"signer without TLS files": {[]string{"--signer-url", "https://127.0.0.1:7443", "--secrets-key-file", "x"}, []string{"--signer-cert: required"}},
		"signer over http":         {[]string{"--signer-url", "http://127.0.0.1:7443"}, []string{"want https://HOST:PORT"}},
	} {
		var out, errOut bytes.Buffer
		err := run(context.Background(), append(append([]string{}, base...), tt.args...), &out, &errOut)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want an error saying %q", name, err, w)
			}
		}
	}
}

// TestSignerCommandRefuses: payhook signer needs its policy and its mutual
// TLS files, and says so.
func TestSignerCommandRefuses(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"signer", "--cert", "c", "--key", "k", "--client-ca", "a"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--policy-file: required") {
		t.Errorf("without a policy: %v", err)
	}
	if err := run(context.Background(), []string{"signer", "--policy-file", "p.json"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--cert: required") {
		t.Errorf("without certificates: %v", err)
	}
}
