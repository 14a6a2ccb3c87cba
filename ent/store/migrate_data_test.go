package store_test

import (
	"bytes"
	"context"
	"io/fs"
	"path"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/deliveryevent"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/migrations"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// migrationsUpTo returns d's embedded migrations up to and including
// version.
func migrationsUpTo(t *testing.T, d store.Dialect, version string) fs.FS {
	t.Helper()
	names, err := fs.Glob(migrations.FS, string(d)+"/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := fstest.MapFS{}
	for _, n := range names {
		if v, _, _ := strings.Cut(path.Base(n), "_"); v > version {
			continue
		}
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			t.Fatal(err)
		}
		out[path.Base(n)] = &fstest.MapFile{Data: b}
	}
	return out
}

// TestMigrationKeepsNotifications writes notifications, attempts and
// delivery events as the schema before 20261124160211 held them (tied to
// addresses, payments and API keys), migrates, and reads them back through
// the current schema: nothing is lost, the old columns became the
// notifier's labels, and a payment's notifications share a sequence; since
// 20261124182517 the key, its address and its notifications belong to a
// default project.
func TestMigrationKeepsNotifications(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.OpenEmpty(t, d)
			if _, err := store.MigrateFS(ctx, db, migrationsUpTo(t, d, "20261122003825")); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
			body := []byte("{\"uuid\":\"u1\"}\x00\xff")
			for _, stmt := range []struct {
				q    string
				args []any
			}{
				{`INSERT INTO api_keys (id, created_at, name, prefix, hash) VALUES (7, $1, 'k', 'ph_k', $2)`, []any{at, strings.Repeat("a", 64)}},
				{`INSERT INTO addresses (id, created_at, updated_at, api_key_id, ticker, family, address_in, derivation_index, callback_url, callback_key, destinations, custom_params, required_confirmations)
					VALUES (3, $1, $1, 7, 'btc', 'utxo', 'bc1qold', 0, 'https://shop.example/cb', $2, '[]', '[]', 1)`, []any{at, strings.Repeat("b", 64)}},
				{`INSERT INTO payments (id, created_at, updated_at, address_id, api_key_id, ticker, txid_in, value_coin, status)
					VALUES (11, $1, $1, 3, 7, 'btc', 'tx1', '0.5', 'confirmed')`, []any{at}},
				{`INSERT INTO notifications (id, created_at, updated_at, uuid, address_id, payment_id, api_key_id, ticker, address_in, host, payment_status,
					method, url, body, content_type, signature_scheme, signature, status, attempts, next_attempt_at, expires_at)
					VALUES (21, $1, $1, 'u1', 3, 11, 7, 'btc', 'bc1qold', 'shop.example:443', 'pending',
					'POST', 'https://shop.example/cb', $2, 'application/json', 'rsa-sha256', 'c2ln', 'retrying', 1, $3, $4)`, []any{at, body, at.Add(time.Minute), at.Add(48 * time.Hour)}},
				{`INSERT INTO notifications (id, created_at, updated_at, uuid, address_id, api_key_id, ticker, address_in, host, payment_status,
					method, url, body, status, attempts, expires_at)
					VALUES (22, $1, $1, 'u2', 3, 7, 'btc', 'bc1qold', 'shop.example:443', 'confirmed',
					'GET', 'https://shop.example/cb?uuid=u2', $2, 'acknowledged', 1, $3)`, []any{at, []byte{}, at.Add(48 * time.Hour)}},
				{`INSERT INTO delivery_attempts (notification_id, number, started_at, request_method, request_url, outcome, response_status)
					VALUES (21, 1, $1, 'POST', 'https://shop.example/cb', 'failed', 500)`, []any{at}},
				{`INSERT INTO delivery_events (id, created_at, notification_id, api_key_id, uuid, ticker, address_in, payment_status, kind, delivery_status)
					VALUES (31, $1, 21, 7, 'u1', 'btc', 'bc1qold', 'pending', 'created', 'pending')`, []any{at}},
			} {
				if _, err := db.SQL.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
					t.Fatalf("%s: %v", stmt.q, err)
				}
			}
			if _, err := store.Migrate(ctx, db, store.WithDecimals(func(string) (int32, bool) { return 8, true })); err != nil {
				t.Fatal(err)
			}

			ns, err := db.Client.Notification.Query().Order(entdb.Asc(notification.FieldID)).WithDeliveryAttempts().All(ctx)
			if err != nil || len(ns) != 2 {
				t.Fatalf("%d notifications after migrating, %v", len(ns), err)
			}
			n := ns[0]
			if n.UUID != "u1" || n.OwnerID != 1 || n.Service != "address" || n.Event != "pending" || n.Subject != "bc1qold" || n.Topic != "btc" ||
				n.Sequence == nil || *n.Sequence != "address-payment:11" || n.Host != "shop.example:443" || n.Method != "POST" ||
				n.URL != "https://shop.example/cb" || !bytes.Equal(n.Body, body) || n.ContentType != "application/json" ||
				n.SignatureScheme != "rsa-sha256" || n.Signature != "c2ln" || n.SigningKey != "" || n.Status != notification.StatusRetrying ||
				n.Attempts != 1 || n.NextAttemptAt == nil || !n.NextAttemptAt.Equal(at.Add(time.Minute)) || !n.ExpiresAt.Equal(at.Add(48*time.Hour)) {
				t.Errorf("notification with a payment read back as %+v", n)
			}
			if len(n.Edges.DeliveryAttempts) != 1 || *n.Edges.DeliveryAttempts[0].ResponseStatus != 500 {
				t.Errorf("its attempts read back as %+v", n.Edges.DeliveryAttempts)
			}
			if m := ns[1]; m.UUID != "u2" || m.Sequence != nil || m.Event != "confirmed" || m.Status != notification.StatusAcknowledged || m.NextAttemptAt != nil {
				t.Errorf("notification without a payment read back as %+v", m)
			}
			ev, err := db.Client.DeliveryEvent.Query().Where(deliveryevent.ID(31)).Only(ctx)
			if err != nil || ev.OwnerID != 1 || ev.Service != "address" || ev.Event != "pending" || ev.Subject != "bc1qold" || ev.Topic != "btc" || ev.NotificationID != 21 {
				t.Errorf("delivery event read back as %+v, %v", ev, err)
			}
			// 20261124182517 moved the key into a default project, which
			// owns what the key owned.
			ps, err := db.Client.Project.Query().All(ctx)
			if err != nil || len(ps) != 1 || ps[0].ID != 1 || ps[0].Name != "default" || ps[0].Currency != "USD" || ps[0].IpnSecret != "" {
				t.Errorf("projects after migrating: %+v, %v", ps, err)
			}
			if k, err := db.Client.APIKey.Get(ctx, 7); err != nil || k.ProjectID != 1 {
				t.Errorf("api key after migrating: %+v, %v", k, err)
			}
			if a, err := db.Client.Address.Get(ctx, 3); err != nil || a.ProjectID != 1 || a.Service != "address" || a.InvoiceID != nil {
				t.Errorf("address after migrating: %+v, %v", a, err)
			}
			// The migrated database is the current schema, and takes new rows.
			if drift := schemaDrift(t, db); drift != "" {
				t.Errorf("after migrating data, the schema drifts:\n%s", drift)
			}
			if _, err := db.Client.Notification.Create().SetUUID("u3").SetOwnerID(7).SetMethod("GET").SetURL("https://shop.example/").
				SetBody([]byte{}).SetExpiresAt(at).SetSequence("s").Save(ctx); err != nil {
				t.Errorf("insert after migrating: %v", err)
			}
		})
	}
}

// TestMigrationMovesPayoutRequests: a payout request recorded for the
// operator before payouts existed (status requested) is a pending request
// of its key's project after the migration.
func TestMigrationMovesPayoutRequests(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := storetest.OpenEmpty(t, d)
			if _, err := store.MigrateFS(ctx, db, migrationsUpTo(t, d, "20261128020000")); err != nil {
				t.Fatal(err)
			}
			at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			for _, stmt := range []struct {
				q    string
				args []any
			}{
				{`INSERT INTO projects (id, created_at, updated_at, name, ipn_secret, wallets, confirmations, tickers) VALUES (5, $1, $1, 'p', 's', '{}', '{}', '[]')`, []any{at}},
				{`INSERT INTO api_keys (id, created_at, name, prefix, hash, project_id) VALUES (7, $1, 'k', 'ph_k', $2, 5)`, []any{at, strings.Repeat("a", 64)}},
				{`INSERT INTO payout_requests (id, created_at, updated_at, api_key_id, uuid, ticker, address, value, status) VALUES (9, $1, $1, 7, 'u', 'btc', 'bc1q', '0.5', 'requested')`, []any{at}},
			} {
				if _, err := db.SQL.ExecContext(ctx, stmt.q, stmt.args...); err != nil {
					t.Fatalf("%s: %v", stmt.q, err)
				}
			}
			if _, err := store.Migrate(ctx, db); err != nil {
				t.Fatal(err)
			}
			r, err := db.Client.PayoutRequest.Get(ctx, 9)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != "pending" || r.ProjectID != 5 || r.PayoutID != nil {
				t.Errorf("migrated request: status %s, project %d, payout %v; want pending, 5, none", r.Status, r.ProjectID, r.PayoutID)
			}
		})
	}
}

// TestMigrationLedgerIndexesRerun: the ledger export's indexes are built
// CONCURRENTLY, outside a transaction, so a run interrupted between them
// leaves the first behind (INVALID, after a failed build) and goose does
// not record the version; the next migrate completes instead of finding
// the index exists. PostgreSQL only (SQLite builds them in a transaction).
func TestMigrationLedgerIndexesRerun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenEmpty(t, store.Postgres)
	if _, err := store.MigrateFS(ctx, db, migrationsUpTo(t, store.Postgres, "20261129011540")); err != nil {
		t.Fatal(err)
	}
	// What an interrupted run leaves: the first index built, the second
	// begun (an index of its name), the version not recorded.
	for _, q := range []string{
		`CREATE INDEX "ledgerentry_project_id_created_at_id" ON "ledger_entries" ("project_id", "created_at", "id")`,
		`CREATE INDEX "ledgerentry_project_id_id" ON "ledger_entries" ("project_id")`,
	} {
		if _, err := db.SQL.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Migrate(ctx, db); err != nil {
		t.Fatalf("migrate after an interrupted index build: %v", err)
	}
	var def string
	if err := db.SQL.QueryRowContext(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = 'ledgerentry_project_id_id'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, "(project_id, id)") {
		t.Fatalf("the index left behind was kept: %s", def)
	}
}
