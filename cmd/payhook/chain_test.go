package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

func TestChainStatus(t *testing.T) {
	const opKey = "ph_operator"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/healthz":
			http.NotFound(w, r)
		case r.Header.Get("apikey") == "":
			w.Write([]byte(`{"status":"success","health":"serving"}`))
		case r.Header.Get("apikey") != opKey:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"status":"error","error":"unknown api key"}`))
		default:
			w.Write([]byte(`{"status":"success","health":"serving","chains":{"ltc":{"healthy":true,"node":"http://127.0.0.1:19443/","network":"regtest","head":120,"cursor":119},"doge":{"healthy":false,"error":"node unavailable: connection refused","node":"http://127.0.0.1:1/","network":"regtest"}}}`))
		}
	}))
	defer srv.Close()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"chain", "status", "--server", srv.URL, "--apikey", opKey}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "doge") || !strings.Contains(lines[1], "DOWN: node unavailable") ||
		!strings.Contains(lines[2], "ltc") || !strings.Contains(lines[2], "120") || !strings.Contains(lines[2], "119") {
		t.Errorf("chain status:\n%s", out.String())
	}
	// Every error names the address tried.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--server", srv.URL}, "operator's key"},
		{[]string{"--server", srv.URL, "--apikey", "ph_merchant"}, "HTTP 401: unknown api key"},
		{[]string{"--server", "http://127.0.0.1:1"}, "reach payhook at http://127.0.0.1:1/healthz"},
	} {
		err := run(context.Background(), append([]string{"chain", "status"}, c.args...), &out, &errb)
		u := c.args[1]
		if err == nil || !strings.Contains(err.Error(), u+"/healthz") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("chain status %v: %v; want an error naming %s/healthz and %q", c.args, err, u, c.want)
		}
	}
}

// TestChainStatusOfServer: chain status reads a running server's chain
// details from its operator listener without a key, and from its public
// listener with an operator's key only.
func TestChainStatusOfServer(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.API.OperatorAddr = "127.0.0.1:0"
	})
	status := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"chain", "status"}, args...), &out, &errb)
		return out.String(), err
	}
	for _, args := range [][]string{
		{"--server", "http://" + in.Server.OperatorAddr()},
		{"--server", in.BaseURL, "--apikey", in.OperatorKey(t)},
	} {
		out, err := status(args...)
		if err != nil || !strings.Contains(out, "btc") || !strings.Contains(out, "devnet") {
			t.Errorf("chain status %v: %v\n%s", args, err, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--server", in.BaseURL}, "answered its status only"},
		{[]string{"--server", in.BaseURL, "--apikey", in.KeyA}, "HTTP 403"},
	} {
		if _, err := status(c.args...); err == nil || !strings.Contains(err.Error(), in.BaseURL+"/healthz") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("chain status %v: %v; want %q naming the address", c.args, err, c.want)
		}
	}
}

func TestSeedInit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.seed")
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"seed", "init", "--seed-file", path}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 || st.Size() < 32 {
		t.Fatalf("seed file: %v %v", st, err)
	}
	if strings.Contains(out.String(), mustRead(t, path)) {
		t.Error("seed init printed the seed")
	}
	if err := run(context.Background(), []string{"seed", "init", "--seed-file", path}, &out, &errb); err == nil {
		t.Error("seed init overwrote an existing seed")
	}
}

func TestNodeFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "nodes")
	if err := os.WriteFile(file, []byte("# nodes\nltc=http://u:p@127.0.0.1:19443/?network=regtest\n\neth=http://127.0.0.1:8545/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PAYHOOK_NODE_ERC20_USDT", "http://127.0.0.1:8545/?contract=0xabc")
	t.Setenv("PAYHOOK_NODE_LTC", "http://ignored/")
	cfg, err := serveConfig([]string{"--node-file", file, "--node", "doge=http://127.0.0.1:22555/", "--fallback-fee", "ltc=0.0002"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ltc": "http://u:p@127.0.0.1:19443/?network=regtest", "eth": "http://127.0.0.1:8545/", "doge": "http://127.0.0.1:22555/", "erc20/usdt": "http://127.0.0.1:8545/?contract=0xabc"}
	if len(cfg.Chains.Nodes) != len(want) {
		t.Errorf("nodes %v, want %v", cfg.Chains.Nodes, want)
	}
	for k, v := range want {
		if cfg.Chains.Nodes[k] != v {
			t.Errorf("node %s = %q, want %q", k, cfg.Chains.Nodes[k], v)
		}
	}
	if r := cfg.Chains.FallbackFees["ltc"]; r.String() != "0.0002" {
		t.Errorf("fallback fee %s", r)
	}
	if _, err := serveConfig([]string{"--node", "ltc"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("--node without a URL accepted")
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
