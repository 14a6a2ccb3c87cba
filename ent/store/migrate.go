package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/payhook/payhook/ent/migrations"
)

// Migrate applies every embedded migration of db's dialect that the database
// has not applied yet, in version order, and returns the versions it applied
// (empty when the database was up to date). On error the returned versions
// are those that were applied before the failure.
//
// On SQLite, migrations run with foreign-key enforcement off, as SQLite's
// table-rebuild procedure requires (a rebuilt parent table must not cascade
// or fail on its children); afterwards every foreign key is checked and a
// violation is an error. Do not use an in-memory SQLite db concurrently with
// Migrate: it has a single connection, and it is switched for the duration.
//
// Data migrations that convert amounts to a coin's base units need the
// ticker registry (WithDecimals); one that has rows to convert fails
// without it, naming what it needs.
func Migrate(ctx context.Context, db *DB, opts ...MigrateOption) ([]string, error) {
	sub, err := fs.Sub(migrations.FS, string(db.Dialect))
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var o migrateOptions
	for _, opt := range opts {
		opt(&o)
	}
	applied, err := migrate(ctx, db, sub, o)
	if err != nil {
		return applied, fmt.Errorf("migrate %s database: %w", db.Dialect, err)
	}
	return applied, nil
}

// MigrateOption configures Migrate.
type MigrateOption func(*migrateOptions)

type migrateOptions struct {
	decimals migrations.Decimals
}

// WithDecimals gives the data migrations each ticker's decimals (the
// registry's).
func WithDecimals(d migrations.Decimals) MigrateOption {
	return func(o *migrateOptions) { o.decimals = d }
}

// migrate applies the goose migrations in fsys to db.
func migrate(ctx context.Context, db *DB, fsys fs.FS, o migrateOptions) ([]string, error) {
	switch db.Dialect {
	case Postgres:
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, err
		}
		return up(ctx, goose.DialectPostgres, db.SQL, fsys, o, goose.WithSessionLocker(locker))
	case SQLite:
		return migrateSQLite(ctx, db, fsys, o)
	default:
		return nil, fmt.Errorf("unknown dialect %q", db.Dialect)
	}
}

// migrateSQLite runs the migrations on a single connection with foreign keys
// off, then checks them.
func migrateSQLite(ctx context.Context, db *DB, fsys fs.FS, o migrateOptions) (_ []string, err error) {
	if db.sqlitePath == "" {
		return nil, errors.New("SQLite DB was not opened by store.Open")
	}
	pool := db.SQL // ":memory:": the only connection there is
	if db.sqlitePath != memoryPath {
		if pool, err = openSQLite(db.sqlitePath, false); err != nil {
			return nil, err
		}
		defer pool.Close()
	} else {
		if _, err := pool.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
			return nil, err
		}
		defer func() {
			_, onErr := pool.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
			err = errors.Join(err, onErr)
		}()
	}
	applied, err := up(ctx, goose.DialectSQLite3, pool, fsys, o)
	if err != nil {
		return applied, err
	}
	return applied, checkForeignKeys(ctx, pool)
}

// checkForeignKeys reports the first foreign-key violation in the database.
func checkForeignKeys(ctx context.Context, pool *sql.DB) error {
	rows, err := pool.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		var (
			table, parent string
			rowid, fkid   sql.NullInt64
		)
		if err := rows.Scan(&table, &rowid, &parent, &fkid); err != nil {
			return err
		}
		return fmt.Errorf("migrations left a foreign key violation: table %s row %d references a missing row of %s", table, rowid.Int64, parent)
	}
	return rows.Err()
}

// up runs goose's Provider on pool. The Provider is not closed: Close would
// close pool, which its caller owns.
func up(ctx context.Context, d goose.Dialect, pool *sql.DB, fsys fs.FS, o migrateOptions, opts ...goose.ProviderOption) ([]string, error) {
	gos, err := goMigrations(d, fsys, o.decimals)
	if err != nil {
		return nil, err
	}
	opts = append(opts, goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(gos...))
	p, err := goose.NewProvider(d, pool, fsys, opts...)
	if err != nil {
		return nil, err
	}
	results, err := p.Up(ctx)
	applied := make([]string, 0, len(results))
	for _, r := range results {
		if r.Error == nil {
			applied = append(applied, strconv.FormatInt(r.Source.Version, 10))
		}
	}
	return applied, err
}

// goMigrations returns the data migrations written in Go (ent/migrations.Go)
// that belong among the SQL files of fsys: those older than its newest
// file, so a directory cut at an earlier version (a test's, to write data
// as that schema held it) runs none that need a schema it does not reach
// or that would run before its data is written; and, when fsys holds every
// embedded SQL file of the dialect, those newer than the newest file too.
func goMigrations(d goose.Dialect, fsys fs.FS, decimals migrations.Decimals) ([]*goose.Migration, error) {
	have, err := sqlVersions(fsys, ".")
	if err != nil {
		return nil, err
	}
	dir := string(Postgres)
	if d != goose.DialectPostgres {
		dir = string(SQLite)
	}
	all, err := sqlVersions(migrations.FS, dir)
	if err != nil {
		return nil, err
	}
	complete := true
	for _, v := range all {
		if !slices.Contains(have, v) {
			complete = false
			break
		}
	}
	var newest int64
	for _, v := range have {
		newest = max(newest, v)
	}
	var out []*goose.Migration
	for _, m := range migrations.Go(d == goose.DialectPostgres, decimals) {
		if m.Version < newest || complete {
			out = append(out, m)
		}
	}
	return out, nil
}

// sqlVersions returns the versions of the SQL migrations in fsys's dir.
func sqlVersions(fsys fs.FS, dir string) ([]int64, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, n := range names {
		v, _, _ := strings.Cut(path.Base(n), "_")
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out, nil
}

// Pending reports the embedded migrations of db's dialect that the database
// has not applied (every one on an empty database), in version order,
// without applying or locking anything: it lets a server that must not
// migrate (serve --migrate=off) refuse a database that is behind.
func Pending(ctx context.Context, db *DB) ([]string, error) {
	sub, err := fs.Sub(migrations.FS, string(db.Dialect))
	if err != nil {
		return nil, fmt.Errorf("pending migrations: %w", err)
	}
	var d goose.Dialect
	exists := "SELECT to_regclass('goose_db_version') IS NOT NULL"
	switch db.Dialect {
	case Postgres:
		d = goose.DialectPostgres
	case SQLite:
		d = goose.DialectSQLite3
		exists = "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'"
	default:
		return nil, fmt.Errorf("unknown dialect %q", db.Dialect)
	}
	gos, err := goMigrations(d, sub, nil)
	if err != nil {
		return nil, fmt.Errorf("pending migrations: %w", err)
	}
	p, err := goose.NewProvider(d, db.SQL, sub, goose.WithDisableGlobalRegistry(true), goose.WithGoMigrations(gos...))
	if err != nil {
		return nil, fmt.Errorf("pending migrations: %w", err)
	}
	var versioned bool
	if err := db.SQL.QueryRowContext(ctx, exists).Scan(&versioned); err != nil {
		return nil, fmt.Errorf("pending migrations: %w", err)
	}
	var pending []string
	if !versioned {
		for _, s := range p.ListSources() {
			pending = append(pending, strconv.FormatInt(s.Version, 10))
		}
		return pending, nil
	}
	// Status reads the version table without the migration lock, so it
	// neither waits for nor blocks an instance that is migrating.
	st, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("pending migrations: %w", err)
	}
	for _, s := range st {
		if s.State == goose.StatePending {
			pending = append(pending, strconv.FormatInt(s.Source.Version, 10))
		}
	}
	return pending, nil
}

// Versioned reports whether db has ever been migrated (it has goose's
// version table): false for a database payhook has not created, which the
// admin commands refuse rather than create.
func Versioned(ctx context.Context, db *DB) (bool, error) {
	exists := "SELECT to_regclass('goose_db_version') IS NOT NULL"
	if db.Dialect == SQLite {
		exists = "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'"
	}
	var versioned bool
	if err := db.SQL.QueryRowContext(ctx, exists).Scan(&versioned); err != nil {
		return false, fmt.Errorf("read the migration version table: %w", err)
	}
	return versioned, nil
}
