package admin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/audit"
)

// TestErrorsNameTheFlag: what the operator typed wrong is named by its
// flag, and nothing is opened.
func TestErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "registry.json")
	if err := os.WriteFile(garbage, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := "sqlite:" + filepath.Join(dir, "payhook.db")
	tests := []struct {
		name string
		run  func(context.Context) error
		want string
	}{
		{"unknown database scheme", func(ctx context.Context) error {
			_, err := admin.Migrate(ctx, "mysql://x", "")
			return err
		}, "--db"},
		{"missing registry file", func(ctx context.Context) error {
			_, err := admin.Migrate(ctx, db, filepath.Join(dir, "missing.json"))
			return err
		}, "--registry-file"},
		{"registry file that does not parse", func(ctx context.Context) error {
			_, err := admin.HeldFunds(ctx, db, garbage)
			return err
		}, "--registry-file " + garbage},
		{"key command on an unknown database scheme", func(ctx context.Context) error {
			_, err := admin.CreateAPIKey(ctx, "mysql://x", "k", false, clock.Now())
			return err
		}, "--db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run(t.Context())
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want it to start with %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "payhook.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused command created the database: %v", err)
	}
}

// TestMigrateOnceThenNothing: Migrate applies what is pending and reports
// it; a second run finds nothing to apply.
func TestMigrateOnceThenNothing(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := storetest.DSN(t, d)
			applied, err := admin.Migrate(t.Context(), db, "")
			if err != nil || len(applied) == 0 {
				t.Fatalf("first Migrate: %v, %v; want versions applied", applied, err)
			}
			again, err := admin.Migrate(t.Context(), db, "")
			if err != nil || len(again) != 0 {
				t.Errorf("second Migrate: %v, %v; want nothing applied", again, err)
			}
		})
	}
}

// TestRevokeByAmbiguousName: of two active keys with one name, neither is
// revoked by name, and the error names both ids.
func TestRevokeByAmbiguousName(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := storetest.DSN(t, d)
			ctx := t.Context()
			if _, err := admin.Migrate(ctx, db, ""); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			for range 2 {
				if _, err := admin.CreateAPIKey(ctx, db, "shop", false, now); err != nil {
					t.Fatal(err)
				}
			}
			_, err := admin.RevokeAPIKey(ctx, db, 0, "shop", now)
			if !errors.Is(err, admin.ErrAmbiguousAPIKey) || !strings.Contains(err.Error(), "id 1") || !strings.Contains(err.Error(), "id 2") {
				t.Fatalf("RevokeAPIKey by a shared name: %v", err)
			}
			keys, err := admin.ListAPIKeys(ctx, db, 0)
			if err != nil || len(keys) != 2 {
				t.Fatalf("ListAPIKeys: %v, %v", keys, err)
			}
			for _, k := range keys {
				if k.RevokedAt != nil {
					t.Errorf("key %d revoked by an ambiguous name", k.ID)
				}
			}
			k, err := admin.RevokeAPIKey(ctx, db, 0, "2", now)
			if err != nil || k.ID != 2 || k.RevokedAt == nil {
				t.Errorf("RevokeAPIKey by id: %+v, %v", k, err)
			}
		})
	}
}

// TestOnlyMigrateCreatesTheDatabase: every admin function but Migrate
// refuses a database payhook has not created (a SQLite file that does not
// exist, an empty PostgreSQL database) with ErrNoDatabase naming --db and
// payhook migrate, and creates nothing; after Migrate they work.
func TestOnlyMigrateCreatesTheDatabase(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	calls := map[string]func(ctx context.Context, db string) error{
		"CreateAPIKey": func(ctx context.Context, db string) error {
			_, err := admin.CreateAPIKey(ctx, db, "k", false, now)
			return err
		},
		"ListAPIKeys": func(ctx context.Context, db string) error {
			_, err := admin.ListAPIKeys(ctx, db, 0)
			return err
		},
		"RevokeAPIKey": func(ctx context.Context, db string) error {
			_, err := admin.RevokeAPIKey(ctx, db, 0, "k", now)
			return err
		},
		"ListProjects": func(ctx context.Context, db string) error {
			_, err := admin.ListProjects(ctx, db)
			return err
		},
		"HeldFunds": func(ctx context.Context, db string) error {
			_, err := admin.HeldFunds(ctx, db, "")
			return err
		},
		"PayoutRequests": func(ctx context.Context, db string) error {
			_, err := admin.PayoutRequests(ctx, db)
			return err
		},
		"CreateDashboardUser": func(ctx context.Context, db string) error {
			_, err := admin.CreateDashboardUser(ctx, db, 1, "a@shop.example", "correct horse battery staple")
			return err
		},
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			db := storetest.DSN(t, d)
			for name, call := range calls {
				err := call(t.Context(), db)
				if !errors.Is(err, admin.ErrNoDatabase) || !strings.Contains(err.Error(), "--db") || !strings.Contains(err.Error(), "payhook migrate") {
					t.Errorf("%s on a database payhook did not create: %v", name, err)
				}
			}
			if path, ok := strings.CutPrefix(db, "sqlite:"); ok {
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused command created %s: %v", path, err)
				}
			}
			if _, err := admin.Migrate(t.Context(), db, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.ListProjects(t.Context(), db); err != nil {
				t.Fatalf("ListProjects after Migrate: %v", err)
			}
		})
	}
}

// auditEntries returns every audit entry of the database named by dsn,
// oldest first.
func auditEntries(t *testing.T, dsn string) []*entdb.AuditEntry {
	t.Helper()
	db, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	rows, err := db.Client.AuditEntry.Query().Order(entdb.Asc(auditentry.FieldID)).All(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestOperatorChangesAudited: the CLI's changes to a project are in its
// audit log with actor kind operator, actor cli:<OS user>, no address and
// the CLI's user agent, each with its action and target and never a
// secret (the IPN secret, a key, a password); a command that fails
// records nothing. Both dialects. Not parallel: the secrets key comes from
// the environment (PAYHOOK_SEED), as it does for the commands.
func TestOperatorChangesAudited(t *testing.T) {
	t.Setenv("PAYHOOK_SEED", strings.Repeat("ab", 32))
	const btc = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			ctx := t.Context()
			dsn := storetest.DSN(t, d)
			if _, err := admin.Migrate(ctx, dsn, ""); err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			var secrets []string
			created, err := admin.CreateProject(ctx, dsn, "", &payhookv1.CreateProjectRequest{Name: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			id := created.GetProjectId()
			secrets = append(secrets, created.GetApikey(), created.GetIpnSecret())
			secret, err := admin.RotateProjectSecret(ctx, dsn, id, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, secret)
			if err := admin.SetProjectWallet(ctx, dsn, "", id, "BTC="+btc); err != nil {
				t.Fatal(err)
			}
			const password = "correct horse battery staple"
			if _, err := admin.CreateDashboardUserRole(ctx, dsn, id, "Dev@Shop.example", password, "developer"); err != nil {
				t.Fatal(err)
			}
			if err := admin.ResetDashboardPassword(ctx, dsn, "dev@shop.example", password+" again"); err != nil {
				t.Fatal(err)
			}
			if err := admin.DisableDashboardUser(ctx, dsn, "dev@shop.example"); err != nil {
				t.Fatal(err)
			}
			key, _, err := admin.CreateScopedAPIKey(ctx, dsn, id, "till", false, []string{"read"}, now)
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, key, password)
			revoked, err := admin.RevokeAPIKey(ctx, dsn, 0, "till", now)
			if err != nil {
				t.Fatal(err)
			}
			type want struct{ action, target string }
			wants := []want{
				{"project.create", "shop"},
				{"settings.rotate_ipn_secret", ""},
				{"settings.wallet_set", "btc"},
				{"user.create", "dev@shop.example as developer"},
				{"user.reset_password", "dev@shop.example"},
				{"user.disable", "dev@shop.example"},
				{"api_key.create", "till"},
				{"api_key.revoke", strconv.FormatInt(revoked.ID, 10)},
			}
			check := func(t *testing.T) {
				t.Helper()
				got := auditEntries(t, dsn)
				if len(got) != len(wants) {
					for _, e := range got {
						t.Logf("entry %+v", e)
					}
					t.Fatalf("%d audit entries, want %d", len(got), len(wants))
				}
				for i, e := range got {
					w := wants[i]
					if e.ProjectID != id || e.ActorKind != audit.Operator || e.ActorID != 0 || e.Actor != admin.OperatorActor() ||
						!strings.HasPrefix(e.Actor, "cli:") || e.Action != w.action || e.Target != w.target ||
						e.IP != "" || e.UserAgent != admin.CLIUserAgent() || !strings.HasPrefix(e.UserAgent, "payhook-cli") {
						t.Errorf("entry %d: %+v, want project %d, operator %s, %s on %q, no address, %s",
							i, e, id, admin.OperatorActor(), w.action, w.target, admin.CLIUserAgent())
					}
					for _, s := range secrets {
						if strings.Contains(e.Actor+e.Target+e.Action, s) {
							t.Errorf("entry %d holds a secret: %+v", i, e)
						}
					}
				}
			}
			check(t)

			// Failed commands record nothing.
			failures := map[string]func() error{
				"wallet of another ticker's address": func() error {
					return admin.SetProjectWallet(ctx, dsn, "", id, "ltc="+btc)
				},
				"wallet of an unknown project": func() error {
					return admin.SetProjectWallet(ctx, dsn, "", 999, "btc="+btc)
				},
				"rotation of an unknown project": func() error {
					_, err := admin.RotateProjectSecret(ctx, dsn, 999, time.Hour)
					return err
				},
				"disable of an unknown user": func() error {
					return admin.DisableDashboardUser(ctx, dsn, "nobody@shop.example")
				},
				"user with a short password": func() error {
					_, err := admin.CreateDashboardUserRole(ctx, dsn, id, "v@shop.example", "short", "viewer")
					return err
				},
				"key of an unknown project": func() error {
					_, _, err := admin.CreateScopedAPIKey(ctx, dsn, 999, "k", false, nil, now)
					return err
				},
				"revocation of an unknown key": func() error {
					_, err := admin.RevokeAPIKey(ctx, dsn, id, "nosuchkey", now)
					return err
				},
				"rate limit without a value": func() error {
					return admin.SetProjectRateLimit(ctx, dsn, id, nil, nil)
				},
			}
			for name, f := range failures {
				if err := f(); err == nil {
					t.Errorf("%s: no error", name)
				}
			}
			check(t)
		})
	}
}
