// Command gen writes a new versioned migration for each dialect: the
// difference between the schemas in ent/schema (as compiled into ent/db) and
// the state reached by replaying the existing migration files on a clean dev
// database. Run it from the module root after `go generate ./ent/...`:
//
//	go run ./ent/migrations/gen -name add_payment_memo
//
// It needs a PostgreSQL server for the postgres dev database (-dev-url,
// default $TEST_DATABASE_URL); it creates a throwaway database there and drops
// it afterwards. SQLite uses an in-memory database. When the schemas and the
// migrations already agree, nothing is written. Both dialects get the same
// version (a UTC timestamp), so one change has one version everywhere.
//
// With -hash it only rewrites each directory's atlas.sum, for a hand-written
// migration file added after the generated ones (a data migration, say).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"

	"github.com/payhook/payhook/ent/db/migrate"
	"github.com/payhook/payhook/ent/migrations"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
)

// validName keeps migration names usable in file names and goose versions.
var validName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func main() {
	var (
		name    = flag.String("name", "", "migration name, e.g. add_payment_memo (required)")
		dir     = flag.String("dir", filepath.Join("ent", "migrations"), "migrations root holding postgres/ and sqlite/")
		devURL  = flag.String("dev-url", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL of a server where a throwaway dev database may be created")
		only    = flag.String("dialect", "", "generate for this dialect only (postgres or sqlite); default both")
		version = flag.String("version", "", "migration version (14-digit UTC timestamp); default now")
		rehash  = flag.Bool("hash", false, "only rewrite atlas.sum, after adding a hand-written migration file (never to bless an edit of a landed one)")
	)
	flag.Parse()
	log.SetFlags(0)
	dialects := []store.Dialect{store.Postgres, store.SQLite}
	switch store.Dialect(*only) {
	case "":
	case store.Postgres, store.SQLite:
		dialects = []store.Dialect{store.Dialect(*only)}
	default:
		log.Fatalf("gen: -dialect must be %s or %s", store.Postgres, store.SQLite)
	}
	if *rehash {
		for _, d := range dialects {
			if err := hash(filepath.Join(*dir, string(d))); err != nil {
				log.Fatalf("gen %s: %v", d, err)
			}
			log.Printf("%s: rewrote atlas.sum", d)
		}
		return
	}
	if !validName.MatchString(*name) {
		log.Fatalf("gen: -name must match %s", validName)
	}
	if *version == "" {
		*version = clock.UTC().Format("20060102150405")
	}
	if !regexp.MustCompile(`^\d{14}$`).MatchString(*version) {
		log.Fatalf("gen: -version must be 14 digits (YYYYMMDDhhmmss)")
	}
	ctx := context.Background()
	for _, d := range dialects {
		wrote, err := generate(ctx, d, filepath.Join(*dir, string(d)), *name, *version, *devURL)
		if err != nil {
			log.Fatalf("gen %s: %v", d, err)
		}
		if wrote {
			log.Printf("%s: wrote %s_%s.sql", d, *version, *name)
		} else {
			log.Printf("%s: schema and migrations agree; nothing written", d)
		}
	}
}

// generate writes one migration for dialect d into path and reports whether
// there was anything to write.
func generate(ctx context.Context, d store.Dialect, path, name, version, devURL string) (bool, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return false, err
	}
	dir, err := sqltool.NewGooseDir(path)
	if err != nil {
		return false, err
	}
	// goose refuses to apply a version older than one already applied.
	existing, err := filepath.Glob(filepath.Join(path, "*.sql"))
	if err != nil {
		return false, err
	}
	for _, f := range existing {
		if v, _, _ := strings.Cut(filepath.Base(f), "_"); v >= version {
			return false, fmt.Errorf("version %s is not after existing migration %s", version, filepath.Base(f))
		}
	}
	dev, cleanup, err := openDev(ctx, d, devURL)
	if err != nil {
		return false, err
	}
	defer func() {
		if err := cleanup(); err != nil {
			log.Printf("gen %s: cleaning up dev database: %v", d, err)
		}
	}()
	entDialect := dialect.Postgres
	if d == store.SQLite {
		entDialect = dialect.SQLite
	}
	err = migrate.NewSchema(entsql.OpenDB(entDialect, dev.SQL)).NamedDiff(ctx, name,
		schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithFormatter(versioned{sqltool.GooseFormatter, version}),
		schema.WithDropColumn(true),
		schema.WithDropIndex(true),
		schema.WithErrNoPlan(true),
		schema.WithDiffHook(migrations.WithoutLogForeignKeys, migrations.WithPrintedPredicates),
	)
	switch {
	case errors.Is(err, atlasmigrate.ErrNoPlan):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// hash rewrites the atlas.sum of the migration directory at path.
func hash(path string) error {
	dir, err := sqltool.NewGooseDir(path)
	if err != nil {
		return err
	}
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return atlasmigrate.WriteSumFile(dir, sum)
}

// openDev opens an empty dev database for d and returns a function that
// disposes of it.
func openDev(ctx context.Context, d store.Dialect, devURL string) (*store.DB, func() error, error) {
	if d == store.SQLite {
		db, err := store.Open(ctx, "sqlite::memory:")
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	if d != store.Postgres {
		return nil, nil, fmt.Errorf("unknown dialect %q", d)
	}
	if devURL == "" {
		return nil, nil, errors.New("no PostgreSQL dev server: set -dev-url or TEST_DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	}
	admin, err := store.Open(ctx, devURL)
	if err != nil {
		return nil, nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "payhook_migrate_dev_" + hex.EncodeToString(b)
	if _, err := admin.SQL.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		_ = admin.Close()
		return nil, nil, fmt.Errorf("create dev database: %w", err)
	}
	drop := func() error {
		_, err := admin.SQL.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return errors.Join(err, admin.Close())
	}
	u, err := url.Parse(devURL)
	if err != nil {
		return nil, nil, errors.Join(errors.New("parse dev URL"), drop())
	}
	u.Path = "/" + name
	db, err := store.Open(ctx, u.String())
	if err != nil {
		return nil, nil, errors.Join(err, drop())
	}
	return db, func() error { return errors.Join(db.Close(), drop()) }, nil
}

// versioned is a Formatter that names files with a fixed version instead of
// the current time, so both dialects of one change share a version.
type versioned struct {
	atlasmigrate.Formatter
	version string
}

// Format implements migrate.Formatter.
func (v versioned) Format(plan *atlasmigrate.Plan) ([]atlasmigrate.File, error) {
	files, err := v.Formatter.Format(plan)
	if err != nil {
		return nil, err
	}
	out := make([]atlasmigrate.File, len(files))
	for i, f := range files {
		n := f.Name()
		ts, rest, ok := strings.Cut(n, "_")
		if !ok || len(ts) != len(v.version) {
			return nil, fmt.Errorf("unexpected migration file name %q", n)
		}
		out[i] = atlasmigrate.NewLocalFile(v.version+"_"+rest, f.Bytes())
	}
	return out, nil
}
