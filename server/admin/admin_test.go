package admin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/admin"
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
