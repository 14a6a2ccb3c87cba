package admin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/user"
	"runtime/debug"
	"strings"
	"time"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/audit"
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

// operatorEntry is the audit entry of action on target in project
// projectID by the operator running this command, at at: actor kind
// operator, actor "cli:" and the OS user, no address, and "payhook-cli"
// (with the module's version when the binary knows it) as user agent.
// Target never holds a secret.
func operatorEntry(projectID int64, action, target string, at time.Time) audit.Entry {
	return audit.Entry{
		ProjectID: projectID, ActorKind: audit.Operator, Actor: OperatorActor(),
		Action: action, Target: target, UserAgent: CLIUserAgent(), At: at,
	}
}

// OperatorActor is how the audit log names the operator running this
// process: "cli:" and the OS user's name ($USER when the system cannot
// say, "unknown" when neither can).
func OperatorActor() string {
	name := ""
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if name == "" {
		name = os.Getenv("USER")
	}
	if name == "" {
		name = "unknown"
	}
	return "cli:" + name
}

// CLIUserAgent is the user agent of the operator's audit entries:
// payhook-cli/<the main module's version> when the binary was built with
// one (go install ...@v1.2.3, or a build that stamped its VCS version),
// else payhook-cli.
func CLIUserAgent() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return "payhook-cli/" + bi.Main.Version
	}
	return "payhook-cli"
}

// recordInTx writes the operator's entry of action with tx (the
// change's transaction's client): the entry commits with the change, and
// a failure to write it undoes the change.
func recordInTx(ctx context.Context, tx *entdb.Client, projectID int64, action, target string, at time.Time) error {
	return audit.Record(ctx, tx, operatorEntry(projectID, action, target, at))
}

// recordDone writes the operator's entry of action after a change that
// committed in a transaction of its own. The change stands whatever
// happens here: an entry that cannot be written is logged (a warning on
// standard error), not returned, so a command that did its work never
// reports a failure (nor hides a secret it shows once).
func recordDone(ctx context.Context, db *entdb.Client, projectID int64, action, target string) {
	if err := audit.Record(ctx, db, operatorEntry(projectID, action, target, clock.UTC())); err != nil {
		slog.Default().Warn("the change is made but its audit entry is not written", "action", action, "project", projectID, "err", err)
	}
}
