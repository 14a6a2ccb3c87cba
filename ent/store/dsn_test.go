package store_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
)

func TestParseDSN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		dsn         string
		wantDialect store.Dialect
		wantName    string
		wantErr     string // substring of the error; "" means success
	}{
		{name: "postgres URL", dsn: "postgres://u:p@db:5432/payhook?sslmode=disable", wantDialect: store.Postgres, wantName: "postgres://u:p@db:5432/payhook?sslmode=disable"},
		{name: "postgresql URL", dsn: "postgresql://db/payhook", wantDialect: store.Postgres, wantName: "postgresql://db/payhook"},
		{name: "scheme case-insensitive", dsn: "POSTGRES://db/payhook", wantDialect: store.Postgres, wantName: "POSTGRES://db/payhook"},
		{name: "sqlite relative", dsn: "sqlite:payhook.db", wantDialect: store.SQLite, wantName: "payhook.db"},
		{name: "sqlite relative dir", dsn: "sqlite:data/payhook.db", wantDialect: store.SQLite, wantName: "data/payhook.db"},
		{name: "sqlite absolute", dsn: "sqlite:/var/lib/payhook/payhook.db", wantDialect: store.SQLite, wantName: "/var/lib/payhook/payhook.db"},
		{name: "sqlite memory", dsn: "sqlite::memory:", wantDialect: store.SQLite, wantName: ":memory:"},

		{name: "empty", dsn: "", wantErr: "missing scheme"},
		{name: "bare path", dsn: "payhook.db", wantErr: "missing scheme"},
		{name: "key value postgres", dsn: "host=db dbname=payhook", wantErr: "missing scheme"},
		{name: "mysql", dsn: "mysql://db/payhook", wantErr: `unknown scheme "mysql"`},
		{name: "sqlite3 scheme", dsn: "sqlite3:payhook.db", wantErr: `unknown scheme "sqlite3"`},
		{name: "postgres without slashes", dsn: "postgres:db/payhook", wantErr: "malformed PostgreSQL URL"},
		{name: "postgres bad URL", dsn: "postgres://db:port/x", wantErr: "malformed PostgreSQL URL"},
		{name: "sqlite empty path", dsn: "sqlite:", wantErr: "sqlite DSN has no path"},
		{name: "sqlite URL form", dsn: "sqlite:///tmp/payhook.db", wantErr: "without //"},
		{name: "sqlite options", dsn: "sqlite:payhook.db?_pragma=foreign_keys(0)", wantErr: "must not contain '?'"},
		{name: "sqlite file URI", dsn: "sqlite:file:payhook.db", wantErr: "not a file: URI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, name, err := store.ParseDSN(tt.dsn)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseDSN(%q) = %q, %q, nil; want error containing %q", tt.dsn, d, name, tt.wantErr)
				}
				if !errors.Is(err, store.ErrUnsupportedDSN) {
					t.Errorf("error %v does not wrap ErrUnsupportedDSN", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, tt.wantErr) {
					t.Errorf("error %q does not contain %q", msg, tt.wantErr)
				}
				// Every rejection tells the operator what would have worked.
				for _, form := range []string{"postgres://", "postgresql://", "sqlite:PATH", "sqlite::memory:"} {
					if !strings.Contains(msg, form) {
						t.Errorf("error %q does not name accepted form %q", msg, form)
					}
				}
				if strings.Contains(msg, ":p@") {
					t.Errorf("error %q leaks a password", msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDSN(%q): %v", tt.dsn, err)
			}
			if d != tt.wantDialect || name != tt.wantName {
				t.Errorf("ParseDSN(%q) = %q, %q; want %q, %q", tt.dsn, d, name, tt.wantDialect, tt.wantName)
			}
		})
	}
}
