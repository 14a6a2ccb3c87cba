package server

import (
	"context"
	"fmt"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/rpc"
)

// Migrate opens the database named by dsn ("sqlite:PATH" or a "postgres://"
// URL, as --db takes it), applies its pending migrations and closes it. It returns the versions
// applied, none when the database was up to date. The ticker registry (the
// embedded one, or registryFile's) gives the data migrations each coin's
// decimals.
func Migrate(ctx context.Context, dsn, registryFile string) (applied []string, err error) {
	registry, err := loadRegistry(registryFile)
	if err != nil {
		return nil, err
	}
	db, err := openDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}()
	applied, err = store.Migrate(ctx, db, withDecimals(registry))
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return applied, nil
}

// withDecimals gives the data migrations the decimals of registry's
// tickers.
func withDecimals(registry *chains.Registry) store.MigrateOption {
	return store.WithDecimals(func(ticker string) (int32, bool) {
		t, ok := registry.Lookup(ticker)
		return t.Decimals, ok
	})
}

// CreateAPIKey opens the database named by dsn, migrates it when needed and
// issues an API key called name, created at now (an operator's key when
// operator is set: it alone may call the operator API). The key is returned
// in clear this once; the database keeps only its hash.
func CreateAPIKey(ctx context.Context, dsn, name string, operator bool, now time.Time) (key string, err error) {
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		create := apikey.Create
		if operator {
			create = apikey.CreateOperator
		}
		if key, _, err = create(ctx, db.Client, name, now); err != nil {
			return fmt.Errorf("create api key %q: %w", name, err)
		}
		return nil
	})
	return key, err
}

// openDB opens the database named by dsn, naming the --db flag when dsn
// is not one payhook understands.
func openDB(ctx context.Context, dsn string) (*store.DB, error) {
	return openPool(ctx, dsn, store.Pool{})
}

// openPool is openDB with a bounded PostgreSQL pool.
func openPool(ctx context.Context, dsn string, p store.Pool) (*store.DB, error) {
	if _, _, err := store.ParseDSN(dsn); err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	db, err := store.OpenPool(ctx, dsn, p)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return db, nil
}

// HeldFunds opens the database named by dsn, migrates it when needed and
// lists the funds payhook holds (see address.Service.HeldFunds) as the
// operator API answers them, every page in one answer (no next page), with
// the embedded ticker registry or the one in registryFile.
func HeldFunds(ctx context.Context, dsn, registryFile string) (resp *payhookv1.ListHeldFundsResponse, err error) {
	registry, err := loadRegistry(registryFile)
	if err != nil {
		return nil, err
	}
	err = withMigratedDB(ctx, dsn, func(db *store.DB) error {
		svc := address.New(db.Client, db.Dialect == store.Postgres, registry, nil, nil, time.Now)
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
		ps, err := address.New(db.Client, db.Dialect == store.Postgres, family.DefaultRegistry(), nil, nil, time.Now).PayoutRequests(ctx)
		resp = rpc.PayoutRequests(ps)
		return err
	})
	return resp, err
}

// withMigratedDB opens the database named by dsn, migrates it when needed
// (with the embedded ticker registry's decimals: `payhook migrate
// --registry-file` migrates a database that has payments of other
// tickers), runs fn on it and closes it.
func withMigratedDB(ctx context.Context, dsn string, fn func(*store.DB) error) (err error) {
	db, err := openDB(ctx, dsn)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}()
	if _, err := store.Migrate(ctx, db, withDecimals(family.DefaultRegistry())); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return fn(db)
}
