package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/sealed"
)

// storedSecrets reads what the database holds, beneath the client.
func storedSecrets(t *testing.T, db *store.DB, id int64) (ipn, prev string) {
	t.Helper()
	q := "SELECT ipn_secret, previous_ipn_secret FROM projects WHERE id = $1"
	if db.Dialect == store.SQLite {
		q = strings.ReplaceAll(q, "$1", "?")
	}
	if err := db.SQL.QueryRowContext(context.Background(), q, id).Scan(&ipn, &prev); err != nil {
		t.Fatal(err)
	}
	return ipn, prev
}

func TestSecretsSealedAtRest(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		p, err := db.Client.Project.Create().SetName("p").SetIpnSecret("whsec_plain").SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.IpnSecret != "whsec_plain" {
			t.Errorf("created project's secret = %q; want it opened", p.IpnSecret)
		}
		ipn, _ := storedSecrets(t, db, p.ID)
		if !sealed.IsSealed(ipn) || strings.Contains(ipn, "whsec_plain") {
			t.Errorf("stored secret = %q; want it sealed", ipn)
		}
		got, err := db.Client.Project.Get(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.IpnSecret != "whsec_plain" {
			t.Errorf("read secret = %q; want whsec_plain", got.IpnSecret)
		}
		k, err := db.Client.SigningKey.Create().SetAlgorithm("rsa-sha256").SetPrivatePem("-----PRIVATE-----").SetPublicPem("pub").SetCreatedAt(now).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var pem string
		q := "SELECT private_pem FROM signing_keys WHERE id = $1"
		if db.Dialect == store.SQLite {
			q = "SELECT private_pem FROM signing_keys WHERE id = ?"
		}
		if err := db.SQL.QueryRowContext(ctx, q, k.ID).Scan(&pem); err != nil {
			t.Fatal(err)
		}
		if !sealed.IsSealed(pem) {
			t.Errorf("stored private key = %q; want it sealed", pem)
		}
		if k2, err := db.Client.SigningKey.Get(ctx, k.ID); err != nil || k2.PrivatePem != "-----PRIVATE-----" {
			t.Errorf("read private key = %v, %v; want it opened", k2, err)
		}
		// An endpoint's signing secrets.
		e, err := db.Client.Endpoint.Create().SetProjectID(p.ID).SetPublicID("ep_1").SetURL("https://shop.example/hook").
			SetSecret("whsec_endpoint").SetPreviousSecret("whsec_before").SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil || e.Secret != "whsec_endpoint" || e.PreviousSecret != "whsec_before" {
			t.Fatalf("created endpoint %+v, %v; want its secrets opened", e, err)
		}
		var es, eprev string
		q = "SELECT secret, previous_secret FROM endpoints WHERE id = $1"
		if db.Dialect == store.SQLite {
			q = "SELECT secret, previous_secret FROM endpoints WHERE id = ?"
		}
		if err := db.SQL.QueryRowContext(ctx, q, e.ID).Scan(&es, &eprev); err != nil {
			t.Fatal(err)
		}
		if !sealed.IsSealed(es) || !sealed.IsSealed(eprev) || strings.Contains(es+eprev, "whsec_") {
			t.Errorf("stored endpoint secrets %q %q; want them sealed", es, eprev)
		}
		if e2, err := db.Client.Endpoint.Get(ctx, e.ID); err != nil || e2.Secret != "whsec_endpoint" || e2.PreviousSecret != "whsec_before" {
			t.Errorf("read endpoint %v, %v; want its secrets opened", e2, err)
		}
		// A dashboard user's TOTP secret.
		u, err := db.Client.DashboardUser.Create().SetProjectID(p.ID).SetEmail("a@shop.example").SetPasswordHash("x").
			SetTotpSecret("JBSWY3DPEHPK3PXP").SetCreatedAt(now).Save(ctx)
		if err != nil || u.TotpSecret != "JBSWY3DPEHPK3PXP" {
			t.Fatalf("created user %v, %v; want the TOTP secret opened", u, err)
		}
		var ts string
		q = "SELECT totp_secret FROM dashboard_users WHERE id = $1"
		if db.Dialect == store.SQLite {
			q = "SELECT totp_secret FROM dashboard_users WHERE id = ?"
		}
		if err := db.SQL.QueryRowContext(ctx, q, u.ID).Scan(&ts); err != nil {
			t.Fatal(err)
		}
		if !sealed.IsSealed(ts) || strings.Contains(ts, "JBSWY3DP") {
			t.Errorf("stored TOTP secret %q; want it sealed", ts)
		}
		if u2, err := db.Client.DashboardUser.Get(ctx, u.ID); err != nil || u2.TotpSecret != "JBSWY3DPEHPK3PXP" {
			t.Errorf("read user %v, %v; want the TOTP secret opened", u2, err)
		}
	})
}

func TestSealSecretsMigratesAndChecksTheKey(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		// A row an earlier version wrote in clear, beneath the hooks.
		q := "INSERT INTO projects (created_at, updated_at, name, currency, ipn_secret, previous_ipn_secret, wallets, confirmations, tickers) VALUES ($1, $1, 'old', 'USD', 'whsec_old', 'whsec_older', '{}', '{}', '[]')"
		if db.Dialect == store.SQLite {
			q = strings.ReplaceAll(q, "$1", "?")
			if _, err := db.SQL.ExecContext(ctx, q, now, now); err != nil {
				t.Fatal(err)
			}
		} else if _, err := db.SQL.ExecContext(ctx, q, now); err != nil {
			t.Fatal(err)
		}
		p, err := db.Client.Project.Query().Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SealSecrets(ctx); err != nil {
			t.Fatal(err)
		}
		ipn, prev := storedSecrets(t, db, p.ID)
		if !sealed.IsSealed(ipn) || !sealed.IsSealed(prev) {
			t.Fatalf("after SealSecrets: stored %q, %q; want both sealed", ipn, prev)
		}
		if got, err := db.Client.Project.Get(ctx, p.ID); err != nil || got.IpnSecret != "whsec_old" || got.PreviousIpnSecret != "whsec_older" {
			t.Fatalf("read back = %v, %v", got, err)
		}
		// Another key opens nothing: the server refuses to start.
		other, err := sealed.New([]byte(strings.Repeat("k", sealed.KeySize)))
		if err != nil {
			t.Fatal(err)
		}
		db.SetSecretsKey(other)
		if err := db.SealSecrets(ctx); !errors.Is(err, sealed.ErrOpen) {
			t.Errorf("SealSecrets with another key = %v; want ErrOpen", err)
		}
	})
}

func TestNoSecretsKeyRefusesToWriteASecret(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, store.SQLite)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	p, err := db.Client.Project.Create().SetName("p").SetIpnSecret("whsec_a").SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.SetSecretsKey(nil)
	_, err = db.Client.Project.Create().SetName("q").SetIpnSecret("whsec_b").SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if !errors.Is(err, store.ErrNoSecretsKey) || !strings.Contains(err.Error(), "--secrets-key-file") {
		t.Errorf("create without a key = %v; want ErrNoSecretsKey naming the flags", err)
	}
	// A read needs no key: the secret stays sealed, unused.
	got, err := db.Client.Project.Get(ctx, p.ID)
	if err != nil || !sealed.IsSealed(got.IpnSecret) {
		t.Errorf("read without a key = %v, %v; want the sealed value", got, err)
	}
	// A change that writes no secret needs no key either.
	if err := db.Client.Project.UpdateOneID(p.ID).SetName("renamed").Exec(ctx); err != nil {
		t.Errorf("rename without a key: %v", err)
	}
}

func TestSQLiteFileIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "payhook.db")
	db, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, err := store.Migrate(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal"} {
		fi, err := os.Stat(f)
		if errors.Is(err, os.ErrNotExist) && f != path {
			continue // checkpointed and removed
		}
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s mode %04o; want no access for group and others", filepath.Base(f), perm)
		}
	}
}
