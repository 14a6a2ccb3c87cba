package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/apikey"
)

func TestEnvironmentFillsFlagsNotGiven(t *testing.T) {
	t.Setenv("PAYHOOK_HTTP_ADDR", "127.0.0.1:1234")
	t.Setenv("PAYHOOK_DEV", "true")
	t.Setenv("PAYHOOK_DB", "sqlite:from-env.db")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", ":8080", "")
	dev := fs.Bool("dev", false, "")
	db := fs.String("db", "sqlite:payhook.db", "")
	if err := parse(fs, []string{"--db", "sqlite:from-flag.db"}); err != nil {
		t.Fatal(err)
	}
	if *httpAddr != "127.0.0.1:1234" || !*dev {
		t.Fatalf("environment not applied: http-addr %q dev %v", *httpAddr, *dev)
	}
	if *db != "sqlite:from-flag.db" {
		t.Fatalf("flag did not win over environment: %q", *db)
	}
}

func TestBadEnvironmentValueIsNamed(t *testing.T) {
	t.Setenv("PAYHOOK_SHUTDOWN_TIMEOUT", "soon")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Duration("shutdown-timeout", time.Second, "")
	err := parse(fs, nil)
	if err == nil || !strings.Contains(err.Error(), "PAYHOOK_SHUTDOWN_TIMEOUT") {
		t.Fatalf("error %v does not name the variable", err)
	}
}

func TestServeRejectsBadSettingsByName(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--db", "mysql://x"}, "--db"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--http-addr", "nope"}, "--http-addr"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--grpc-addr", "localhost"}, "--grpc-addr"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--signing-key-bits", "1024"}, "--signing-key-bits"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		// The benchmark is its own command, cmd/payhook-bench.
		{[]string{"bench"}, `unknown command "bench"`},
		{[]string{"apikey", "create"}, "--name: required"},
		{[]string{"apikey", "delete"}, "usage: payhook apikey create"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := run(context.Background(), c.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}

func TestMigrateAndAPIKeyCreate(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "cli.db")
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "applied migrations") {
		t.Fatalf("first migrate printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "up to date") {
		t.Fatalf("second migrate printed %q", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"apikey", "create", "--name", "shop", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out.String())
	if !regexp.MustCompile(`^ph_[a-z2-7]{32}$`).MatchString(key) {
		t.Fatalf("printed key %q", key)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Client.APIKey.Query().All(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("keys: %v %v", rows, err)
	}
	if rows[0].Hash != apikey.Hash(key) || rows[0].Name != "shop" || strings.Contains(rows[0].Hash, key) || rows[0].Prefix != key[:8] {
		t.Fatalf("stored %+v", rows[0])
	}
	if k, err := (apikey.Resolver{DB: db.Client}).ResolveAPIKey(ctx, key); err != nil || k.Operator {
		t.Fatalf("printed key resolves as %+v, %v; want a merchant's key", k, err)
	}

	// An operator's key, and what it is for: the funds payhook holds
	// (none yet).
	out.Reset()
	if err := run(ctx, []string{"apikey", "create", "--name", "ops", "--operator", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if k, err := (apikey.Resolver{DB: db.Client}).ResolveAPIKey(ctx, strings.TrimSpace(out.String())); err != nil || !k.Operator {
		t.Fatalf("operator key resolves as %+v, %v", k, err)
	}
	out.Reset()
	if err := run(ctx, []string{"funds", "--db", dsn}, &out, &errOut); err != nil || !strings.Contains(out.String(), "holds no funds") {
		t.Fatalf("funds printed %q (%v)", out.String(), err)
	}
	out.Reset()
	out.Reset()
	if err := run(ctx, []string{"payouts", "--db", dsn}, &out, &errOut); err != nil || !strings.Contains(out.String(), "no payout requests") {
		t.Fatalf("payouts printed %q (%v)", out.String(), err)
	}
	out.Reset()
	var listed struct{ Tickers []any }
	if err := run(ctx, []string{"funds", "--db", dsn, "--json"}, &out, &errOut); err != nil || json.Unmarshal(out.Bytes(), &listed) != nil || listed.Tickers == nil || len(listed.Tickers) != 0 {
		t.Fatalf("funds --json printed %q (%v)", out.String(), err)
	}
}

// TestDevListensOnLoopbackByDefault: --dev serves the unauthenticated devnet,
// so without an address it listens on loopback only; an address given by
// flag or environment wins, and without --dev the defaults are every
// interface.
func TestDevListensOnLoopbackByDefault(t *testing.T) {
	rows := []struct {
		name           string
		args           []string
		env            map[string]string
		wantHTTP, want string
	}{
		{"dev", []string{"--dev"}, nil, "127.0.0.1:8080", "127.0.0.1:9090"},
		{"dev from environment", nil, map[string]string{"PAYHOOK_DEV": "true"}, "127.0.0.1:8080", "127.0.0.1:9090"},
		{"dev with flags", []string{"--dev", "--http-addr", ":8081", "--grpc-addr", "0.0.0.0:9091"}, nil, ":8081", "0.0.0.0:9091"},
		{"dev with environment", []string{"--dev"}, map[string]string{"PAYHOOK_HTTP_ADDR": ":8082", "PAYHOOK_GRPC_ADDR": ":9092"}, ":8082", ":9092"},
		// Without --dev a node is needed (ErrNoChains).
		{"production", []string{"--node", "ltc=http://u:p@127.0.0.1:19443/"}, nil, ":8080", ":9090"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, k := range []string{"PAYHOOK_DEV", "PAYHOOK_HTTP_ADDR", "PAYHOOK_GRPC_ADDR"} {
				t.Setenv(k, r.env[k])
				if _, ok := r.env[k]; !ok {
					if err := os.Unsetenv(k); err != nil {
						t.Fatal(err)
					}
				}
			}
			var out, errOut bytes.Buffer
			cfg, err := serveConfig(r.args, &out, &errOut)
			if err != nil {
				t.Fatal(err)
			}
			cfg = cfg.WithDefaults()
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			if cfg.API.HTTPAddr != r.wantHTTP || cfg.API.GRPCAddr != r.want {
				t.Fatalf("listens on http %q grpc %q, want %q %q", cfg.API.HTTPAddr, cfg.API.GRPCAddr, r.wantHTTP, r.want)
			}
		})
	}
}

// TestDBMaxConnsFlag: the pool bound comes from --db-max-conns or
// PAYHOOK_DB_MAX_CONNS, the flag winning, with a documented default.
func TestDBMaxConnsFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := os.Unsetenv("PAYHOOK_DB_MAX_CONNS"); err != nil {
		t.Fatal(err)
	}
	cfg, err := serveConfig(nil, &out, &errOut)
	if err != nil || cfg.Store.MaxConns != 20 {
		t.Fatalf("default: %d %v, want 20", cfg.Store.MaxConns, err)
	}
	t.Setenv("PAYHOOK_DB_MAX_CONNS", "7")
	if cfg, err = serveConfig(nil, &out, &errOut); err != nil || cfg.Store.MaxConns != 7 {
		t.Fatalf("environment: %d %v, want 7", cfg.Store.MaxConns, err)
	}
	if cfg, err = serveConfig([]string{"--db-max-conns", "9"}, &out, &errOut); err != nil || cfg.Store.MaxConns != 9 {
		t.Fatalf("flag: %d %v, want 9", cfg.Store.MaxConns, err)
	}
}

// TestPublicURLFlag: --public-url (or PAYHOOK_PUBLIC_URL) sets the base of
// payment_url and the dashboard's cookie policy; a bad one names the flag.
func TestPublicURLFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	t.Setenv("PAYHOOK_PUBLIC_URL", "https://pay.example.com")
	cfg, err := serveConfig(nil, &out, &errOut)
	if err != nil || cfg.API.PublicURL != "https://pay.example.com" {
		t.Fatalf("from the environment: %q %v", cfg.API.PublicURL, err)
	}
	cfg, err = serveConfig([]string{"--public-url", "https://shop.example/pay"}, &out, &errOut)
	if err != nil || cfg.API.PublicURL != "https://shop.example/pay" {
		t.Fatalf("flag over environment: %q %v", cfg.API.PublicURL, err)
	}
	cfg, err = serveConfig([]string{"--public-url", "pay.example.com"}, &out, &errOut)
	if err == nil {
		err = cfg.WithDefaults().Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Fatalf("a URL without scheme: %v, want an error naming --public-url", err)
	}
}

// TestServeCPUProfile: --cpuprofile is the process's flag, not the
// server's, and the profile it starts is a file go tool pprof reads once
// stopped.
func TestServeCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	var out, errOut bytes.Buffer
	_, profile, err := serveFlags([]string{"--cpuprofile", path}, &out, &errOut)
	if err != nil || profile != path {
		t.Fatalf("serveFlags: profile %q, %v; want %q", profile, err, path)
	}
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b { // a gzipped profile.proto
		t.Fatalf("profile file: %d bytes, %v; want a gzipped profile", len(b), err)
	}
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.pprof")); err == nil || !strings.Contains(err.Error(), "--cpuprofile") {
		t.Fatalf("unwritable path: %v; want an error naming --cpuprofile", err)
	}
}

// TestAPIKeyCreateScopes: `apikey create --scope` takes names, repeated or
// comma-separated, and the key has exactly those (all four without the
// flag, operator keys too); an unknown name is refused naming the flag,
// the name and the scopes there are, before any database is touched; list
// shows each key's scopes.
func TestAPIKeyCreateScopes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scopes.db")
	dsn := "sqlite:" + path
	var out, errOut bytes.Buffer
	err := run(ctx, []string{"apikey", "create", "--name", "bad", "--scope", "read,admin", "--db", dsn}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `--scope: unknown scope "admin": the scopes are read, create, payouts, management`) {
		t.Fatalf("an unknown scope: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a refused --scope touched the database: %v", err)
	}
	dsn = migratedDB(t, "scopes.db")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--name", "reader", "--scope", "read"}, []string{"read"}},
		{[]string{"--name", "shop", "--scope", "create, READ", "--scope", "payouts"}, []string{"read", "create", "payouts"}},
		{[]string{"--name", "full"}, []string{"read", "create", "payouts", "management"}},
		{[]string{"--name", "auditor", "--operator", "--scope", "read"}, []string{"read"}},
	} {
		out.Reset()
		errOut.Reset()
		if err := run(ctx, append(append([]string{"apikey", "create"}, c.args...), "--db", dsn), &out, &errOut); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if !strings.Contains(errOut.String(), "created with scopes "+strings.Join(c.want, ", ")+";") {
			t.Fatalf("%v: told %q", c.args, errOut.String())
		}
		db, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		k, err := (apikey.Resolver{DB: db.Client}).ResolveAPIKey(ctx, strings.TrimSpace(out.String()))
		_ = db.Close()
		if err != nil || !slices.Equal(k.Scopes, c.want) {
			t.Fatalf("%v: the key resolves as %+v (%v), want scopes %v", c.args, k, err, c.want)
		}
	}
	out.Reset()
	if err := run(ctx, []string{"apikey", "list", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SCOPES", "read,create,payouts ", "read,create,payouts,management "} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("list lacks %q:\n%s", want, out.String())
		}
	}
}

// migratedDB is the DSN of a new SQLite database made by payhook migrate,
// as an operator's is before the admin commands touch it (they create
// none).
func migratedDB(t *testing.T, name string) string {
	t.Helper()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), name)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatalf("migrate: %v (%s)", err, errOut.String())
	}
	return dsn
}

// cliProject creates a project named shop in the migrated database dsn
// with `payhook project create` and returns its id.
func cliProject(t *testing.T, dsn string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"project", "create", "--db", dsn, "--name", "shop", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	var created struct {
		ProjectID int64 `json:"project_id"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(created.ProjectID, 10)
}

// projectID is the project id cliProject returned, as a number.
func projectID(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
