// Package storetest opens isolated, migrated databases for tests. Import it
// from _test.go files only.
//
// SQLite databases are files in t.TempDir(). PostgreSQL databases are created
// fresh on the server named by TEST_DATABASE_URL (CREATE DATABASE
// payhook_test_<random>) and dropped when the test ends. When the variable is
// unset, the local default DefaultURL is tried and PostgreSQL tests are
// skipped if no server answers there; when it is set, an unreachable server
// fails the tests (CI sets it).
package storetest

import (
	"context"
	"github.com/payhook/payhook/internal/sealed"
	"testing"

	"github.com/payhook/payhook/ent/store"
)

// EnvURL is the environment variable naming the PostgreSQL server on which
// test databases are created. Its user needs the CREATEDB privilege.
const EnvURL = "TEST_DATABASE_URL"

// Dialects returns every dialect the store supports, PostgreSQL first.
func Dialects() []store.Dialect {
	return []store.Dialect{store.Postgres, store.SQLite}
}

// ForEach runs fn as a subtest named after each dialect, each with its own
// migrated database. fn may call t.Parallel.
func ForEach(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, d := range Dialects() {
		t.Run(string(d), func(t *testing.T) {
			fn(t, Open(t, d))
		})
	}
}

// SecretsKey seals the secrets of the databases Open returns.
var SecretsKey = func() *sealed.Box {
	b, err := sealed.New(make([]byte, sealed.KeySize))
	if err != nil {
		panic(err)
	}
	return b
}()

// Open returns a migrated database of dialect d that no other test sees. It
// is closed (and, for PostgreSQL, dropped) by t.Cleanup. It skips the test
// when d is PostgreSQL and TEST_DATABASE_URL is unset.
func Open(t testing.TB, d store.Dialect) *store.DB {
	t.Helper()
	db := OpenEmpty(t, d)
	if _, err := store.Migrate(context.Background(), db); err != nil {
		t.Fatalf("storetest: %v", err)
	}
	return db
}

// OpenEmpty is Open without migrating: the database has no tables at all.
// Use it to test migrations themselves.
func OpenEmpty(t testing.TB, d store.Dialect) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), DSN(t, d))
	if err != nil {
		t.Fatalf("storetest: %v", err)
	}
	db.SetSecretsKey(SecretsKey)
	// Registered after DSN's cleanup, so it runs first: close, then drop.
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("storetest: %v", err)
		}
	})
	return db
}
