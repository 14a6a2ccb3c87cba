package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payhook/payhook/chains/nodetest"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/servertest"
)

// commandPaths returns every command path of the tree, groups and leaves,
// without "payhook".
func commandPaths() [][]string {
	var paths [][]string
	var visit func(c *command, path []string)
	visit = func(c *command, path []string) {
		paths = append(paths, path)
		for _, s := range c.subs {
			visit(s, append(append([]string(nil), path...), s.name))
		}
	}
	visit(commands(), nil)
	return paths
}

// TestHelpOnEveryCommand: --help, -h and `help PATH` print the command's
// usage on standard output and succeed, for every command and nested
// command, without running it.
func TestHelpOnEveryCommand(t *testing.T) {
	paths := commandPaths()
	if len(paths) < 30 {
		t.Fatalf("only %d command paths: the tree lost commands", len(paths))
	}
	for _, path := range paths {
		forms := [][]string{append(slices.Clone(path), "--help"), append(slices.Clone(path), "-h")}
		if len(path) > 0 {
			forms = append(forms, append([]string{"help"}, path...))
		}
		for _, args := range forms {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var out, errOut bytes.Buffer
				// A database flag pointing nowhere: help must not open it.
				t.Setenv("PAYHOOK_DB", "sqlite:"+filepath.Join(t.TempDir(), "never", "created.db"))
				if err := run(context.Background(), args, &out, &errOut); err != nil {
					t.Fatalf("error %v (stderr %q)", err, errOut.String())
				}
				want := strings.TrimSpace("payhook " + strings.Join(path, " "))
				if !strings.Contains(out.String(), want) && len(path) > 0 {
					t.Fatalf("usage does not name %q:\n%s", want, out.String())
				}
				if len(path) == 0 && !strings.Contains(out.String(), "Usage:") {
					t.Fatalf("top-level usage:\n%s", out.String())
				}
			})
		}
	}
}

// TestTopLevelUsageNamesEveryCommand keeps the hand-written usage in step
// with the tree.
func TestTopLevelUsageNamesEveryCommand(t *testing.T) {
	for _, path := range commandPaths() {
		if len(path) == 0 || path[0] == "completion" && len(path) > 1 {
			continue
		}
		if !strings.Contains(usage, "payhook "+strings.Join(path, " ")) && len(path) == 1 {
			t.Errorf("usage does not mention payhook %s", strings.Join(path, " "))
		}
	}
}

func TestMissingOrUnknownCommand(t *testing.T) {
	rows := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "missing command"},
		{"group without command", []string{"apikey"}, "usage: payhook apikey create"},
		{"nested group without command", []string{"project", "wallet"}, "usage: payhook project wallet set"},
		{"unknown in group", []string{"devnet", "explode"}, `unknown command "devnet explode"`},
		{"help for unknown", []string{"help", "frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), r.args, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("error %v, want it to mention %q", err, r.want)
			}
		})
	}
}

func TestGlobalLogFlags(t *testing.T) {
	rows := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		json    bool
	}{
		{"before the command", []string{"--log-format", "json", "version"}, nil, "", true},
		{"after the command", []string{"version", "--log-format=json", "--log-level", "debug"}, nil, "", true},
		{"single dash", []string{"version", "-log-level=warn"}, nil, "", false},
		{"from the environment", []string{"version"}, map[string]string{"PAYHOOK_LOG_FORMAT": "json", "PAYHOOK_LOG_LEVEL": "error"}, "", true},
		{"flag wins over environment", []string{"version", "--log-format", "text"}, map[string]string{"PAYHOOK_LOG_FORMAT": "xml"}, "", false},
		{"bad format", []string{"--log-format", "xml", "version"}, nil, `--log-format: "xml" is not a log format: use text or json`, false},
		{"bad level", []string{"version", "--log-level=loud"}, nil, `--log-level: "loud" is not a log level: use debug, info, warn or error`, false},
		{"bad environment", []string{"version"}, map[string]string{"PAYHOOK_LOG_LEVEL": "verbose"}, `PAYHOOK_LOG_LEVEL: "verbose" is not a log level`, false},
		{"missing value", []string{"version", "--log-level"}, nil, "--log-level: needs a value", false},
		{"after --, not ours", []string{"version", "--", "--log-level", "debug"}, nil, "unexpected argument", false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, k := range []string{"PAYHOOK_LOG_FORMAT", "PAYHOOK_LOG_LEVEL"} {
				t.Setenv(k, "")
				if err := os.Unsetenv(k); err != nil {
					t.Fatal(err)
				}
				if v, ok := r.env[k]; ok {
					t.Setenv(k, v)
				}
			}
			var out, errOut bytes.Buffer
			err := run(context.Background(), r.args, &out, &errOut)
			if r.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), r.wantErr) {
					t.Fatalf("error %v, want %q", err, r.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest, logger, err := globalFlags(r.args, &errOut)
			if err != nil || slices.Contains(rest, "--log-format") || slices.Contains(rest, "--log-level") {
				t.Fatalf("globalFlags left %q (%v)", rest, err)
			}
			errOut.Reset()
			logger.Error("probe")
			if got := json.Valid(errOut.Bytes()); got != r.json {
				t.Fatalf("JSON log line %v, want %v: %q", got, r.json, errOut.String())
			}
		})
	}
	// The level filters.
	var errOut bytes.Buffer
	_, logger, err := globalFlags([]string{"--log-level", "warn"}, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("hidden")
	logger.Warn("shown")
	if strings.Contains(errOut.String(), "hidden") || !strings.Contains(errOut.String(), "shown") {
		t.Fatalf("--log-level warn logged %q", errOut.String())
	}
}

func TestVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "payhook ") || !strings.Contains(out.String(), "go      go1.") {
		t.Fatalf("version printed %q", out.String())
	}
	out.Reset()
	if err := run(context.Background(), []string{"version", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var v map[string]string
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v["version"] == "" || v["commit"] == "" || !strings.HasPrefix(v["go_version"], "go") {
		t.Fatalf("version --json printed %q (%v)", out.String(), err)
	}
}

// TestCompletion: each script offers every command and each leaf's flags;
// the bash one is run, completing real command lines.
func TestCompletion(t *testing.T) {
	nodes, err := completionTree(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"completion", sh}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		scripts[sh] = out.String()
		for _, n := range nodes {
			for _, w := range append(slices.Clone(n.subs), n.flags...) {
				if sh == "fish" {
					w = strings.TrimPrefix(w, "--")
				}
				if !strings.Contains(out.String(), w) {
					t.Errorf("%s completion lacks %q (after %v)", sh, w, n.path)
				}
			}
		}
	}
	bash := nodetest.Need(t, "bash", "apt-get install bash")
	dir := t.TempDir()
	script := filepath.Join(dir, "payhook.bash")
	if err := os.WriteFile(script, []byte(scripts["bash"]), 0o600); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		line string // what is typed; the last word is completed
		want []string
		not  []string
	}{
		{"payhook ", []string{"serve", "apikey", "completion", "version", "--log-level"}, []string{"create"}},
		{"payhook api", []string{"apikey"}, []string{"serve"}},
		{"payhook apikey ", []string{"create", "list", "revoke"}, []string{"serve"}},
		{"payhook apikey list --", []string{"--json", "--project", "--db", "--log-format"}, []string{"--name"}},
		{"payhook --log-level debug apikey revoke --p", []string{"--project"}, nil},
		{"payhook project wallet ", []string{"set", "remove"}, []string{"create"}},
		{"payhook project create --name shop --cur", []string{"--currency"}, nil},
		{"payhook serve --mig", []string{"--migrate"}, nil},
		{"payhook serve --log-format ", []string{"text", "json"}, nil},
		{"payhook completion ", []string{"bash", "zsh", "fish"}, nil},
	}
	for _, r := range rows {
		words := strings.Split(r.line, " ")
		// COMP_WORDS as bash splits the line; the last (maybe empty) word
		// is the one completed.
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			string(rune('0'+len(words)-1)) + "\n_payhook\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", r.line, err, out)
		}
		got := strings.Fields(string(out))
		for _, w := range r.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %q, lacking %q", r.line, got, w)
			}
		}
		for _, w := range r.not {
			if slices.Contains(got, w) {
				t.Errorf("%q completes to %q, offering %q", r.line, got, w)
			}
		}
	}
}

func TestAPIKeyListAndRevoke(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "keys.db")
	cli := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(args, "--db", dsn), &out, &errOut)
		return out.String(), err
	}
	var keys []string
	for _, a := range [][]string{
		{"apikey", "create", "--name", "shop"},
		{"apikey", "create", "--name", "ops", "--operator"},
		{"apikey", "create", "--name", "twin"},
		{"apikey", "create", "--name", "twin"},
	} {
		out, err := cli(a...)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, strings.TrimSpace(out))
	}
	out, err := cli("apikey", "list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(out, k) || strings.Contains(out, k[8:]) {
			t.Fatalf("list --json shows a key:\n%s", out)
		}
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed) != 4 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	want := []string{"id", "name", "prefix", "project_id", "operator", "created_at", "revoked_at", "last_used_at", "scopes"}
	for _, f := range want {
		if _, ok := listed[0][f]; !ok {
			t.Fatalf("list --json lacks %q: %v", f, listed[0])
		}
	}
	if len(listed[0]) != len(want) {
		t.Fatalf("list --json has fields beyond %v: %v", want, listed[0])
	}
	if listed[1]["operator"] != true || listed[0]["operator"] != false || listed[0]["revoked_at"] != nil {
		t.Fatalf("kinds: %v", listed)
	}
	table, err := cli("apikey", "list")
	if err != nil || !strings.Contains(table, "operator") || !strings.Contains(table, "shop") {
		t.Fatalf("list: %v\n%s", err, table)
	}

	// A name two keys share is refused, naming both.
	_, err = cli("apikey", "revoke", "twin")
	if !errors.Is(err, admin.ErrAmbiguousAPIKey) || !strings.Contains(err.Error(), "id 3") || !strings.Contains(err.Error(), "id 4") {
		t.Fatalf("revoke twin: %v", err)
	}
	// By id (after the flags), then by name: the one left active.
	if out, err = cli("apikey", "revoke", "--project", "0", "3"); err != nil || !strings.Contains(out, "revoked API key 3") {
		t.Fatalf("revoke 3: %q %v", out, err)
	}
	if out, err = cli("apikey", "revoke", "twin"); err != nil || !strings.Contains(out, "revoked API key 4") {
		t.Fatalf("revoke twin again: %q %v", out, err)
	}
	if _, err = cli("apikey", "revoke", "nobody"); err == nil || !strings.Contains(err.Error(), `no key named "nobody"`) {
		t.Fatalf("revoke nobody: %v", err)
	}
	if _, err = cli("apikey", "revoke", "shop", "ops"); err == nil || !strings.Contains(err.Error(), "unexpected argument") {
		t.Fatalf("revoke two keys: %v", err)
	}
	if _, err = cli("apikey", "revoke"); err == nil || !strings.Contains(err.Error(), "which key") {
		t.Fatalf("revoke nothing: %v", err)
	}
	// Another project's id is not found.
	if _, err = cli("apikey", "revoke", "1", "--project", "999"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("revoke in another project: %v", err)
	}
	out, _ = cli("apikey", "list", "--json")
	_ = json.Unmarshal([]byte(out), &listed)
	if listed[2]["revoked_at"] == nil || listed[3]["revoked_at"] == nil || listed[0]["revoked_at"] != nil {
		t.Fatalf("after revoking 3 and 4: %v", listed)
	}
}

// TestRevokedKeyRefusedAtOnce: `payhook apikey revoke` against a running
// server's database; the very next request with that key is refused, over
// REST (401) and gRPC (Unauthenticated), on two instances sharing the
// database, while another key of the same project still works.
func TestRevokedKeyRefusedAtOnce(t *testing.T) {
	d := store.SQLite
	if os.Getenv(storetest.EnvURL) != "" {
		d = store.Postgres
	}
	a := servertest.Start(t, d)
	b := servertest.Start(t, d, func(c *server.Config) { c.Store.DB = a.DSN })
	ctx := context.Background()
	logs := func(in *servertest.Instance, key string) int {
		return in.Get(t, "/btc/logs/", url.Values{"callback": {"https://shop.example/hook"}}, key).Code
	}
	grpcLogs := func(in *servertest.Instance, key string) error {
		_, err := payhookv1.NewAddressServiceClient(in.Conn).GetLogs(servertest.WithKey(ctx, key),
			&payhookv1.GetLogsRequest{Ticker: "btc", Callback: "https://shop.example/hook"})
		return err
	}
	for i, in := range []*servertest.Instance{a, b} {
		if c := logs(in, a.KeyA); c == http.StatusUnauthorized {
			t.Fatalf("instance %d before revoking: %d", i, c)
		}
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"apikey", "revoke", "test A", "--project", strconv.FormatInt(a.ProjectA, 10), "--db", a.DSN}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for i, in := range []*servertest.Instance{a, b} {
		if c := logs(in, a.KeyA); c != http.StatusUnauthorized {
			t.Fatalf("instance %d: revoked key answered %d, want 401", i, c)
		}
		if err := grpcLogs(in, a.KeyA); status.Code(err) != codes.Unauthenticated {
			t.Fatalf("instance %d: gRPC with the revoked key: %v", i, err)
		}
		if c := logs(in, a.KeyA2); c == http.StatusUnauthorized {
			t.Fatalf("instance %d: the project's other key answered %d", i, c)
		}
		if err := grpcLogs(in, a.KeyA2); status.Code(err) == codes.Unauthenticated {
			t.Fatalf("instance %d: gRPC with the project's other key: %v", i, err)
		}
	}
}

// TestMigrateOff: serve --migrate=off refuses a database that lacks
// migrations, naming payhook migrate; after `payhook migrate` it starts.
// The default (auto) migrates on start.
func TestMigrateOff(t *testing.T) {
	ctx := context.Background()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) { testMigrateOff(ctx, t, storetest.DSN(t, d)) })
	}
}

func testMigrateOff(ctx context.Context, t *testing.T, dsn string) {
	cfg, err := serveConfig([]string{"--dev", "--db", dsn, "--migrate", "off", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
		"--seed-file", filepath.Join(t.TempDir(), "seed")}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Out = io.Discard
	logger := slog.New(slog.DiscardHandler)
	_, err = server.New(ctx, cfg, logger)
	if !errors.Is(err, server.ErrMigrationsBehind) || !strings.Contains(err.Error(), "payhook migrate") {
		t.Fatalf("--migrate=off on an empty database: %v", err)
	}
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	s, err := server.New(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("--migrate=off after payhook migrate: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := serveConfig([]string{"--migrate", "sometimes"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err) // parsed; Validate names it
	}
	bad, _ := serveConfig([]string{"--migrate", "sometimes"}, io.Discard, io.Discard)
	if err := bad.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), "--migrate") {
		t.Fatalf("--migrate=sometimes: %v", err)
	}
	if def, _ := serveConfig(nil, io.Discard, io.Discard); def.WithDefaults().Store.Migrate != server.MigrateAuto {
		t.Fatalf("default --migrate %q", def.WithDefaults().Store.Migrate)
	}
}
