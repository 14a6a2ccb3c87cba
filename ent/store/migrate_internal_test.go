package store

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/payhook/payhook/ent/migrations"
)

// sqliteInit returns the embedded SQLite migrations as a MapFS that tests
// can extend with migrations of their own.
func sqliteInit(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "sqlite/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		m[filepath.Base(n)] = &fstest.MapFile{Data: b}
	}
	return m
}

// seed inserts an address with a payment and a forward pointing at the
// payment.
func seed(t *testing.T, db *DB) {
	t.Helper()
	for _, stmt := range []string{
		`INSERT INTO api_keys (id, created_at, name, prefix, hash) VALUES (1, '2025-01-01 00:00:00+00:00', 'k', 'pk_live_', 'h')`,
		`INSERT INTO addresses (id, created_at, updated_at, ticker, family, address_in, derivation_index, callback_url, callback_key, destinations, custom_params, required_confirmations, api_key_id)
		 VALUES (1, '2025-01-01 00:00:00+00:00', '2025-01-01 00:00:00+00:00', 'btc', 'utxo', 'bc1q', 1, 'https://m.example', 'k', '[]', '[]', 1, 1)`,
		`INSERT INTO payments (id, created_at, updated_at, txid_in, value_coin, api_key_id, address_id) VALUES (1, '2025-01-01 00:00:00+00:00', '2025-01-01 00:00:00+00:00', 'tx', '1', 1, 1)`,
		`INSERT INTO forwards (id, created_at, updated_at, intent_id, outputs, fee_coin, network_fee, value_forwarded_coin, payment_id)
		 VALUES (1, '2025-01-01 00:00:00+00:00', '2025-01-01 00:00:00+00:00', 'fwd-1', '[]', '0', '0', '1', 1)`,
	} {
		if _, err := db.SQL.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// TestSQLiteTableRebuild applies the kind of migration atlas writes when a
// SQLite table must be rebuilt. With foreign keys on, dropping the old
// payments table would fail on (or, with ON DELETE SET NULL, null) the
// references of its children, forwards.payment_id; Migrate must keep it.
func TestSQLiteTableRebuild(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", memoryPath} {
		name := "file"
		if path == memoryPath {
			name = "memory"
		} else {
			path = filepath.Join(t.TempDir(), "payhook.db")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db, err := Open(ctx, "sqlite:"+path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			fsys := sqliteInit(t)
			if _, err := migrate(ctx, db, fsys, migrateOptions{}); err != nil {
				t.Fatal(err)
			}
			seed(t, db)
			fsys["99990101000000_rebuild.sql"] = &fstest.MapFile{Data: []byte(`-- +goose Up
PRAGMA foreign_keys = off;
CREATE TABLE new_payments (id integer NOT NULL PRIMARY KEY AUTOINCREMENT, created_at datetime NOT NULL, updated_at datetime NOT NULL, txid_in text NOT NULL, output_index integer NOT NULL DEFAULT (0), value_coin text NOT NULL, confirmations integer NOT NULL DEFAULT (0), status text NOT NULL DEFAULT ('pending'), txid_out text NULL, value_forwarded_coin text NULL, fee_coin text NULL, network_fee text NULL, credited_at datetime NULL, forwarded_at datetime NULL, api_key_id integer NOT NULL, address_id integer NOT NULL, memo text NOT NULL DEFAULT (''), CONSTRAINT payments_api_keys_payments FOREIGN KEY (api_key_id) REFERENCES api_keys (id) ON DELETE NO ACTION, CONSTRAINT payments_addresses_payments FOREIGN KEY (address_id) REFERENCES addresses (id) ON DELETE NO ACTION);
INSERT INTO new_payments (id, created_at, updated_at, txid_in, output_index, value_coin, confirmations, status, txid_out, value_forwarded_coin, fee_coin, network_fee, credited_at, forwarded_at, api_key_id, address_id)
  SELECT id, created_at, updated_at, txid_in, output_index, value_coin, confirmations, status, txid_out, value_forwarded_coin, fee_coin, network_fee, credited_at, forwarded_at, api_key_id, address_id FROM payments;
DROP TABLE payments;
ALTER TABLE new_payments RENAME TO payments;
PRAGMA foreign_keys = on;
-- +goose Down
`)}
			applied, err := migrate(ctx, db, fsys, migrateOptions{})
			if err != nil || len(applied) != 1 || applied[0] != "99990101000000" {
				t.Fatalf("migrate = %v, %v; want [99990101000000], nil", applied, err)
			}
			var paymentID *int64
			if err := db.SQL.QueryRow("SELECT payment_id FROM forwards WHERE id = 1").Scan(&paymentID); err != nil {
				t.Fatal(err)
			}
			if paymentID == nil || *paymentID != 1 {
				t.Errorf("forward lost its payment during the rebuild: payment_id = %v", paymentID)
			}
			var fk int
			if err := db.SQL.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
				t.Errorf("foreign_keys after Migrate = %d, %v; want 1", fk, err)
			}
		})
	}
}

// TestSQLiteForeignKeyCheck makes sure a migration that breaks a reference is
// reported even though foreign keys are off while it runs.
func TestSQLiteForeignKeyCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "payhook.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fsys := sqliteInit(t)
	if _, err := migrate(ctx, db, fsys, migrateOptions{}); err != nil {
		t.Fatal(err)
	}
	seed(t, db)
	fsys["99990101000000_break.sql"] = &fstest.MapFile{Data: []byte("-- +goose Up\nDELETE FROM payments;\n-- +goose Down\n")}
	_, err = migrate(ctx, db, fsys, migrateOptions{})
	if err == nil || !strings.Contains(err.Error(), "foreign key violation") {
		t.Errorf("migrate = %v; want a foreign key violation", err)
	}
}
