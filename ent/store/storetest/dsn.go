package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
)

// DSN returns the DSN of a fresh, empty database of dialect d that no other
// test sees, for code under test that opens the database itself (the server,
// the CLI). A PostgreSQL database is dropped by t.Cleanup, after the test's
// own cleanups have closed their connections.
func DSN(t testing.TB, d store.Dialect) string {
	t.Helper()
	switch d {
	case store.SQLite:
		return "sqlite:" + filepath.Join(t.TempDir(), "payhook.db")
	case store.Postgres:
	default:
		t.Fatalf("storetest: unknown dialect %q", d)
	}
	base := serverURL(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("storetest: %s is not a URL", EnvURL)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "payhook_test_" + hex.EncodeToString(b)
	admin := func(stmt string) {
		t.Helper()
		ctx := context.Background()
		a, err := store.Open(ctx, base)
		if err != nil {
			t.Fatalf("storetest: %v", err)
		}
		defer a.Close()
		if _, err := a.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("storetest: %s: %v", stmt, err)
		}
	}
	admin("CREATE DATABASE " + name)
	t.Cleanup(func() { admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") })
	u.Path = "/" + name
	return u.String()
}

// DefaultURL is the PostgreSQL server tried when TEST_DATABASE_URL is unset.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	probeOnce sync.Once
	probeErr  error
)

// serverURL returns the test PostgreSQL server's URL, or skips the test when
// TEST_DATABASE_URL is unset and nothing answers at DefaultURL.
func serverURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		db, err := store.Open(ctx, DefaultURL)
		if err == nil {
			_ = db.Close()
		}
		probeErr = err
	})
	if probeErr != nil {
		t.Skipf("storetest: %s is unset and no PostgreSQL answers at %s (%v); set %s to run the PostgreSQL tests", EnvURL, DefaultURL, probeErr, EnvURL)
	}
	return DefaultURL
}
