package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/lib/pq"  // registers "postgres"
	_ "modernc.org/sqlite" // registers "sqlite"

	entdb "github.com/payhook/payhook/ent/db"
)

// Dialect names a supported database system.
type Dialect string

const (
	// Postgres is PostgreSQL, reached through lib/pq.
	Postgres Dialect = "postgres"
	// SQLite is SQLite, reached through modernc.org/sqlite.
	SQLite Dialect = "sqlite"
)

// acceptedForms is quoted in every DSN error so that an operator can fix it.
const acceptedForms = `accepted forms: "postgres://user@host:5432/db?sslmode=disable", "postgresql://...", "sqlite:PATH" (e.g. "sqlite:payhook.db", "sqlite:/var/lib/payhook.db") and "sqlite::memory:"`

// memoryPath is the SQLite path of a private in-memory database.
const memoryPath = ":memory:"

// sqlitePragmas is appended to every SQLite path. The _txlock makes BEGIN take
// the write lock at once, so busy_timeout covers lock contention between
// transactions; _time_format and _timezone store times as UTC text that sorts
// chronologically.
const sqlitePragmas = "_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)" +
	"&_txlock=immediate&_time_format=sqlite&_timezone=UTC"

// sqliteMaxConns bounds the pool of a file database: readers run concurrently
// under WAL, writers queue on the database lock.
const sqliteMaxConns = 4

// DB is an open database: the entdb client, the pool beneath it (for
// migrations and raw SQL), and which dialect it speaks.
type DB struct {
	// Client is the generated ent client; it shares SQL's pool.
	Client *entdb.Client
	// SQL is the connection pool beneath Client.
	SQL *sql.DB
	// Dialect is the database system behind SQL.
	Dialect Dialect

	// sqlitePath is the SQLite file (or ":memory:"); Migrate opens its own
	// connection to it.
	sqlitePath string
	// postgresDSN is the PostgreSQL URL; Listen opens its own connection.
	postgresDSN string
	// secrets seals the secret columns (SetSecretsKey).
	secrets *secrets
}

// Close closes the client and its pool. It is safe to call more than once.
func (db *DB) Close() error {
	if err := db.Client.Close(); err != nil {
		return fmt.Errorf("close %s database: %w", db.Dialect, err)
	}
	return nil
}

// ParseDSN splits dsn into its dialect and the driver-level name: the URL
// itself for PostgreSQL, the file path (or ":memory:") for SQLite.
func ParseDSN(dsn string) (Dialect, string, error) {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok {
		return "", "", fmt.Errorf("%w: missing scheme; %s", ErrUnsupportedDSN, acceptedForms)
	}
	switch strings.ToLower(scheme) {
	case "postgres", "postgresql":
		// The parse error is not wrapped: it would echo the URL, password included.
		if _, err := url.Parse(dsn); err != nil || !strings.HasPrefix(rest, "//") {
			return "", "", fmt.Errorf("%w: malformed PostgreSQL URL; %s", ErrUnsupportedDSN, acceptedForms)
		}
		return Postgres, dsn, nil
	case "sqlite":
		switch {
		case rest == "":
			return "", "", fmt.Errorf("%w: sqlite DSN has no path; %s", ErrUnsupportedDSN, acceptedForms)
		case strings.HasPrefix(rest, "//"):
			return "", "", fmt.Errorf("%w: sqlite DSN is not a URL, write sqlite:PATH without //; %s", ErrUnsupportedDSN, acceptedForms)
		case strings.ContainsAny(rest, "?#"):
			return "", "", fmt.Errorf("%w: sqlite path must not contain '?' or '#' (connection options are fixed by payhook); %s", ErrUnsupportedDSN, acceptedForms)
		case strings.HasPrefix(rest, "file:"):
			return "", "", fmt.Errorf("%w: sqlite path must be a plain path, not a file: URI; %s", ErrUnsupportedDSN, acceptedForms)
		}
		return SQLite, rest, nil
	default:
		return "", "", fmt.Errorf("%w: unknown scheme %q; %s", ErrUnsupportedDSN, scheme, acceptedForms)
	}
}

// Pool bounds a PostgreSQL connection pool. A request that finds every
// connection busy waits for one (database/sql queues it) for as long as its
// context allows; nothing fails for want of a connection. SQLite pools are
// fixed by payhook (see Open) and ignore Pool.
type Pool struct {
	// MaxConns bounds the pool's open connections; DefaultMaxConns when 0.
	// Connections a caller takes out of the pool for good (a session lock)
	// count against it; Listen's connection does not.
	MaxConns int
	// MaxIdleConns is how many connections stay open while idle; MaxConns
	// when 0 (a burst does not close and reopen connections), at most
	// MaxConns.
	MaxIdleConns int
	// MaxIdleTime closes a connection idle this long, so a pool grown by a
	// burst gives its connections back to the server; DefaultMaxIdleTime
	// when 0.
	MaxIdleTime time.Duration
}

// Defaults of Pool.
const (
	// DefaultMaxConns lets four instances (each also holding one Listen
	// connection) share PostgreSQL's default max_connections of 100 with
	// room left for administration: 4 x (20 + 1) = 84.
	DefaultMaxConns = 20
	// DefaultMaxIdleTime releases a burst's connections after 5 minutes.
	DefaultMaxIdleTime = 5 * time.Minute
)

// WithDefaults returns p with every unset field set to its default.
func (p Pool) WithDefaults() Pool {
	if p.MaxConns == 0 {
		p.MaxConns = DefaultMaxConns
	}
	if p.MaxIdleConns == 0 || p.MaxIdleConns > p.MaxConns {
		p.MaxIdleConns = p.MaxConns
	}
	if p.MaxIdleTime == 0 {
		p.MaxIdleTime = DefaultMaxIdleTime
	}
	return p
}

// Open connects to the database named by dsn (see ParseDSN) with the
// default Pool and pings it. The caller owns the returned DB and must Close
// it. Open does not migrate.
func Open(ctx context.Context, dsn string) (*DB, error) {
	return OpenPool(ctx, dsn, Pool{})
}

// OpenPool is Open with a bounded PostgreSQL pool p (defaults filled in).
func OpenPool(ctx context.Context, dsn string, p Pool) (*DB, error) {
	d, name, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	var (
		pool       *sql.DB
		entDialect string
	)
	switch d {
	case Postgres:
		entDialect = dialect.Postgres
		pool, err = sql.Open("postgres", sessionDefaults(name))
		if err == nil {
			p = p.WithDefaults()
			pool.SetMaxOpenConns(p.MaxConns)
			pool.SetMaxIdleConns(p.MaxIdleConns)
			pool.SetConnMaxIdleTime(p.MaxIdleTime)
		}
	case SQLite:
		entDialect = dialect.SQLite
		pool, err = openSQLite(name, true)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s database: %w", d, err)
	}
	if err := pool.PingContext(ctx); err != nil {
		_ = pool.Close()
		return nil, fmt.Errorf("connect to %s database: %w", d, err)
	}
	drv := entsql.OpenDB(entDialect, pool)
	db := &DB{
		Client:  entdb.NewClient(entdb.Driver(drv)),
		SQL:     pool,
		Dialect: d,
		secrets: &secrets{},
	}
	installSealing(db.Client, db.secrets)
	installEndpointSealing(db.Client, db.secrets)
	installTOTPSealing(db.Client, db.secrets)
	installIdempotencyMarks(db.Client)
	if d == SQLite {
		db.sqlitePath = name
	} else {
		db.postgresDSN = name
	}
	return db, nil
}

// sessionDefaults adds to a PostgreSQL URL the session settings payhook's
// connections run with, unless the URL sets them: jit=off. payhook's
// statements are short index lookups; on a database that has not been
// analysed yet (a new one, or autovacuum off) the planner's estimates can
// pass jit_above_cost, and compiling a plan then takes 100-200 ms of CPU
// for a statement that runs in 2 (the sequence check of a block of
// payments did, at every block).
func sessionDefaults(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return dsn
	}
	q := u.Query()
	if q.Has("jit") {
		return dsn
	}
	q.Set("jit", "off")
	u.RawQuery = q.Encode()
	return u.String()
}

// openSQLite opens a pool on the SQLite database at path with payhook's
// pragmas; foreignKeys is false only for the pool that runs migrations.
func openSQLite(path string, foreignKeys bool) (*sql.DB, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	fk := "0"
	if foreignKeys {
		fk = "1"
	}
	pool, err := sql.Open("sqlite", path+"?_pragma=foreign_keys("+fk+")&"+sqlitePragmas)
	if err != nil {
		return nil, err
	}
	switch {
	case path == memoryPath:
		// Every connection to ":memory:" is a separate database: keep exactly
		// one, forever.
		pool.SetMaxOpenConns(1)
		pool.SetMaxIdleConns(1)
		pool.SetConnMaxLifetime(0)
		pool.SetConnMaxIdleTime(0)
	case !foreignKeys:
		pool.SetMaxOpenConns(1)
	default:
		pool.SetMaxOpenConns(sqliteMaxConns)
		pool.SetMaxIdleConns(sqliteMaxConns)
	}
	return pool, nil
}

// createPrivate creates the SQLite file at path, empty and readable by its
// owner alone (0600), when it does not exist, so that SQLite, which keeps
// the mode of the database file for its journal files, never makes a
// world-readable database. An existing file is left as it is.
func createPrivate(path string) error {
	if path == memoryPath || strings.HasPrefix(path, "file:") {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create SQLite database %s: %w", path, err)
	}
	return f.Close()
}
