package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/route"
	"github.com/payhook/payhook/server/rpc"
)

// Open opens the database named by dsn ("sqlite:PATH" or a "postgres://"
// URL, as --db takes it) with pool's bounds, naming the --db flag when dsn
// is not one payhook understands.
func Open(ctx context.Context, dsn string, pool store.Pool) (*store.DB, error) {
	if _, _, err := store.ParseDSN(dsn); err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	db, err := store.OpenPool(ctx, dsn, pool)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// The server replaces it with its own key; an admin command loads it
	// from the environment if it touches a secret.
	db.SetSecretsKeyLoader(secretsKeyFromEnv)
	return db, nil
}

// LoadRegistry returns the embedded ticker registry, or the one in path
// (--registry-file) when it is set, which may not name a ticker after one
// of the route table's reserved first segments (the embedded one is checked
// by server/route's tests).
func LoadRegistry(path string) (*chains.Registry, error) {
	if path == "" {
		return family.DefaultRegistry(), nil
	}
	reserved := chains.Reserved(route.Default().ReservedNames()...)
	return LoadFile("--registry-file", path, func(r io.Reader) (*chains.Registry, error) {
		return chains.LoadRegistry(r, family.All(), reserved)
	})
}

// LoadFile opens path and parses it with parse, naming flag (the setting
// that gave path) in errors.
func LoadFile[T any](flag, path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	b, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", flag, err)
	}
	v, err := parse(bytes.NewReader(b))
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return v, nil
}

// WithDecimals gives the data migrations the decimals of registry's
// tickers.
func WithDecimals(registry *chains.Registry) store.MigrateOption {
	return store.WithDecimals(func(ticker string) (int32, bool) {
		t, ok := registry.Lookup(ticker)
		return t.Decimals, ok
	})
}

// Migrate opens the database named by dsn, applies its pending migrations
// and closes it. It returns the versions applied, none when the database
// was up to date. The ticker registry (the embedded one, or registryFile's)
// gives the data migrations each coin's decimals.
func Migrate(ctx context.Context, dsn, registryFile string) (applied []string, err error) {
	registry, err := LoadRegistry(registryFile)
	if err != nil {
		return nil, err
	}
	err = withDB(ctx, dsn, func(db *store.DB) error {
		versions, err := store.Migrate(ctx, db, WithDecimals(registry))
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		applied = versions
		return nil
	})
	return applied, err
}

// HeldFunds opens the database named by dsn, migrates it when needed and
// lists the funds payhook holds (see address.Service.HeldFunds) as the
// operator API answers them, every page in one answer (no next page), with
// the embedded ticker registry or the one in registryFile.
func HeldFunds(ctx context.Context, dsn, registryFile string) (resp *payhookv1.ListHeldFundsResponse, err error) {
	registry, err := LoadRegistry(registryFile)
	if err != nil {
		return nil, err
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		svc := address.New(db.Client, db.Dialect == store.Postgres, registry, nil, nil, clock.Now)
		var all address.HeldFunds
		for after := int64(0); ; {
			page, err := svc.HeldFunds(ctx, address.MaxHeldPage, after)
			if err != nil {
				return err
			}
			all.Tickers = page.Tickers
			all.Addresses = append(all.Addresses, page.Addresses...)
			if page.Next == 0 {
				break
			}
			after = page.Next
		}
		resp = rpc.HeldFunds(all)
		return nil
	})
	return resp, err
}

// PayoutRequests opens the database named by dsn, migrates it when needed
// and lists the payout requests merchants made that are not handled yet,
// as the operator API answers them.
func PayoutRequests(ctx context.Context, dsn string) (resp *payhookv1.ListPayoutRequestsResponse, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		ps, err := address.New(db.Client, db.Dialect == store.Postgres, family.DefaultRegistry(), nil, nil, clock.Now).PayoutRequests(ctx)
		resp = rpc.PayoutRequests(ps)
		return err
	})
	return resp, err
}

// withDB opens the database named by dsn (an unbounded pool: one command
// at a time), runs fn on it and closes it.
func withDB(ctx context.Context, dsn string, fn func(*store.DB) error) (err error) {
	db, err := Open(ctx, dsn, store.Pool{})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}()
	return fn(db)
}

// withMigratedDB is withDB on a database payhook created (payhook migrate
// or serve), migrated when it is behind (with the embedded ticker
// registry's decimals: `payhook migrate --registry-file` migrates a
// database that has payments of other tickers). A database payhook has not
// created is ErrNoDatabase, and nothing is created: an admin command run
// in the wrong directory, or without --db, must not answer from an empty
// database of its own making.
func withMigratedDB(ctx context.Context, dsn string, fn func(*store.DB) error) error {
	d, path, err := store.ParseDSN(dsn)
	if err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	if d == store.SQLite && path != ":memory:" {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return noDatabase(dsn, "there is no database file "+path)
		}
	}
	return withDB(ctx, dsn, func(db *store.DB) error {
		versioned, err := store.Versioned(ctx, db)
		if err != nil {
			return err
		}
		if !versioned {
			return noDatabase(dsn, "the database has no payhook tables")
		}
		if _, err := store.Migrate(ctx, db, WithDecimals(family.DefaultRegistry())); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		return fn(db)
	})
}

// noDatabase is ErrNoDatabase for dsn: why, and the two ways on (the
// server's database, or a new one). A PostgreSQL URL is not repeated: it
// may hold a password.
func noDatabase(dsn, why string) error {
	migrate := "payhook migrate --db " + dsn
	if !strings.HasPrefix(dsn, "sqlite:") {
		migrate = "payhook migrate --db URL"
	}
	return fmt.Errorf("%w: %s; give the server's database with --db (or PAYHOOK_DB), or create this one with %q (payhook serve creates it too)",
		ErrNoDatabase, why, migrate)
}
