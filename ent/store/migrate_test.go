package store_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/payhook/payhook/ent/db/migrate"
	"github.com/payhook/payhook/ent/migrations"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// embeddedVersions lists the versions of d's embedded migration files.
func embeddedVersions(t *testing.T, d store.Dialect) []string {
	t.Helper()
	names, err := fs.Glob(migrations.FS, string(d)+"/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, n := range names {
		v, _, _ := strings.Cut(filepath.Base(n), "_")
		versions = append(versions, v)
	}
	if len(versions) == 0 {
		t.Fatalf("no embedded migrations for %s", d)
	}
	for _, m := range migrations.Go(d == store.Postgres, nil) {
		versions = append(versions, strconv.FormatInt(m.Version, 10))
	}
	slices.Sort(versions)
	return versions
}

func TestMigrateFromEmpty(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.OpenEmpty(t, d)
			applied, err := store.Migrate(ctx, db)
			if err != nil {
				t.Fatalf("first Migrate: %v", err)
			}
			if want := embeddedVersions(t, d); !slices.Equal(applied, want) {
				t.Errorf("first Migrate applied %v; want %v", applied, want)
			}
			again, err := store.Migrate(ctx, db)
			if err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
			if len(again) != 0 {
				t.Errorf("second Migrate applied %v; want nothing", again)
			}
			// The schema is usable through the generated client.
			if n, err := db.Client.APIKey.Query().Count(ctx); err != nil || n != 0 {
				t.Errorf("count api keys = %d, %v; want 0, nil", n, err)
			}
		})
	}
}

var driftMu sync.Mutex

// schemaDrift returns the SQL ent would run to bring db in line with
// ent/schema, or "" when they agree. Drops count as drift too.
func schemaDrift(t *testing.T, db *store.DB) string {
	t.Helper()
	// ent sets up its global table descriptions (migrate.Tables) for each
	// diff, writing their maps: one diff at a time.
	driftMu.Lock()
	defer driftMu.Unlock()
	entDialect := dialect.Postgres
	if db.Dialect == store.SQLite {
		entDialect = dialect.SQLite
	}
	dir := &atlasmigrate.MemDir{}
	err := migrate.NewSchema(entsql.OpenDB(entDialect, db.SQL)).NamedDiff(context.Background(), "drift",
		schema.WithDir(dir),
		schema.WithFormatter(sqltool.GooseFormatter),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
		schema.WithErrNoPlan(true),
		schema.WithDiffHook(migrations.WithoutLogForeignKeys, migrations.WithPrintedPredicates),
	)
	if errors.Is(err, atlasmigrate.ErrNoPlan) {
		return ""
	}
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	files, err := dir.Files()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range files {
		b.Write(f.Bytes())
	}
	return b.String()
}

// TestMigrationsMatchSchema is the guard that the committed migrations
// produce exactly the schema ent/schema describes: after migrating, ent finds
// nothing to add, change or drop. If it fails, run
// `go run ./ent/migrations/gen -name NAME` and commit the new files.
func TestMigrationsMatchSchema(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		if drift := schemaDrift(t, db); drift != "" {
			t.Errorf("ent/schema and ent/migrations/%s disagree; run `go run ./ent/migrations/gen -name NAME`. Missing changes:\n%s", db.Dialect, drift)
		}
	})
}

// TestSchemaDriftDetected proves the guard above can fail: a database that
// lost an index and gained a column is reported.
func TestSchemaDriftDetected(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		for _, stmt := range []string{
			"DROP INDEX addresses_address_in_key",
			"ALTER TABLE api_keys ADD COLUMN stray text",
		} {
			if _, err := db.SQL.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		drift := schemaDrift(t, db)
		// SQLite drops a column by rebuilding its table, so look for the table.
		for _, want := range []string{"addresses_address_in_key", "api_keys"} {
			if !strings.Contains(drift, want) {
				t.Errorf("drift does not mention %q:\n%s", want, drift)
			}
		}
	})
}

// TestMigrationDirs checks that no committed migration was edited after it
// was generated (atlas.sum) and that both dialects have the same versions.
func TestMigrationDirs(t *testing.T) {
	t.Parallel()
	var versions [][]string
	for _, d := range storetest.Dialects() {
		dir, err := sqltool.NewGooseDir(filepath.Join("..", "migrations", string(d)))
		if err != nil {
			t.Fatal(err)
		}
		if err := atlasmigrate.Validate(dir); err != nil {
			t.Errorf("%s migrations: %v (migrations are immutable: add a new one instead of editing)", d, err)
		}
		versions = append(versions, embeddedVersions(t, d))
	}
	if !slices.Equal(versions[0], versions[1]) {
		t.Errorf("dialects have different migration versions: %v", versions)
	}
}
