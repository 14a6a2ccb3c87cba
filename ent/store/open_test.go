package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

func TestOpenSQLitePragmas(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	for pragma, want := range map[string]string{
		"foreign_keys": "1",
		"journal_mode": "wal",
		"busy_timeout": "10000",
	} {
		var got string
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s; want %s", pragma, got, want)
		}
	}
}

func TestOpenSQLiteMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite::memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	// The schema lives on: the pool never opens a second, empty, database.
	key := newAPIKey(t, db.Client, "pk_live_memory")
	// Foreign keys are enforced again after Migrate switched them off.
	if _, err := addressCreate(db.Client, key.ID+1, "bc1qmem", 1, "https://m.example/cb").Save(ctx); err == nil {
		t.Error("address with a missing owner was saved; foreign keys are off")
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := store.Open(ctx, "mysql://db/x"); !errors.Is(err, store.ErrUnsupportedDSN) {
		t.Errorf("Open(mysql) = %v; want ErrUnsupportedDSN", err)
	}
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "payhook.db")
	if db, err := store.Open(ctx, "sqlite:"+missing); err == nil {
		db.Close()
		t.Errorf("Open in a missing directory succeeded")
	}
}

func TestCloseTwice(t *testing.T) {
	t.Parallel()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestOpenBoundsThePostgresPool: the pool never opens more than MaxConns
// connections (an unbounded pool under a burst exhausted PostgreSQL's
// max_connections), keeps them while idle up to the bound, and releases
// them after MaxIdleTime.
func TestOpenBoundsThePostgresPool(t *testing.T) {
	t.Parallel()
	dsn := storetest.DSN(t, store.Postgres)
	ctx := context.Background()
	for _, r := range []struct {
		name     string
		pool     store.Pool
		wantOpen int
	}{
		{"default", store.Pool{}, store.DefaultMaxConns},
		{"configured", store.Pool{MaxConns: 3}, 3},
	} {
		t.Run(r.name, func(t *testing.T) {
			db, err := store.OpenPool(ctx, dsn, r.pool)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if got := db.SQL.Stats().MaxOpenConnections; got != r.wantOpen {
				t.Fatalf("MaxOpenConnections %d, want %d", got, r.wantOpen)
			}
		})
	}
	db, err := store.OpenPool(ctx, dsn, store.Pool{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Three queries that each hold a connection until released: the third
	// waits for one (it does not fail), and never a third connection opens.
	c1, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		c3, err := db.SQL.Conn(ctx)
		if err == nil {
			err = c3.PingContext(ctx)
			_ = c3.Close()
		}
		got <- err
	}()
	_ = c1.Close() // the waiting request gets this connection
	if err := <-got; err != nil {
		t.Fatalf("a request waiting for a connection failed: %v", err)
	}
	_ = c2.Close()
	if st := db.SQL.Stats(); st.OpenConnections > 2 || st.Idle != st.OpenConnections {
		t.Fatalf("pool stats %+v: want at most 2 open, all idle", st)
	}
}

// TestPostgresSessionsRunWithoutJIT: payhook's PostgreSQL sessions run
// with jit off (compiling the plan of a short lookup cost 100-200 ms of
// CPU on a database without statistics), unless the URL sets jit itself.
func TestPostgresSessionsRunWithoutJIT(t *testing.T) {
	t.Parallel()
	dsn := storetest.DSN(t, store.Postgres)
	ctx := context.Background()
	for _, c := range []struct{ dsn, want string }{
		{dsn, "off"},
		{dsn + map[bool]string{true: "&", false: "?"}[strings.Contains(dsn, "?")] + "jit=on", "on"},
	} {
		db, err := store.Open(ctx, c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = db.SQL.QueryRowContext(ctx, "SHOW jit").Scan(&got)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("jit %q, want %q", got, c.want)
		}
	}
}
