package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

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
	base := os.Getenv(EnvURL)
	if base == "" {
		t.Skipf("storetest: %s is not set; to run PostgreSQL tests set it to a server where test databases may be created, e.g. %s='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'", EnvURL, EnvURL)
	}
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
