package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	entdb "github.com/payhook/payhook/ent/db"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
)

// hexSum is the lowercase hex SHA-256 of s.
func hexSum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// fixedTime is a UTC instant with microsecond precision, which every dialect
// stores exactly.
var fixedTime = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

func newAPIKey(t *testing.T, c *entdb.Client, key string) *entdb.APIKey {
	t.Helper()
	k, err := c.APIKey.Create().
		SetName("merchant " + key).
		SetPrefix(key[:8]).
		SetHash(hexSum(key)).
		SetProjectID(1).
		SetCreatedAt(fixedTime).
		Save(context.Background())
	if err != nil {
		t.Fatalf("create api key: %v", err)
	}
	return k
}

// addressCreate returns a valid create builder; tests override fields.
func addressCreate(c *entdb.Client, apiKeyID int64, addr string, index int64, callback string) *entdb.AddressCreate {
	return c.Address.Create().
		SetAPIKeyID(apiKeyID).
		SetProjectID(1).
		SetTicker("btc").
		SetFamily("utxo").
		SetAddressIn(addr).
		SetDerivationIndex(index).
		SetCallbackURL(callback).
		SetCallbackKey(hexSum(callback)).
		SetDestinations([]schema.Destination{{Address: "bc1qdest", Share: decimal.RequireFromString("1")}}).
		SetRequiredConfirmations(1).
		SetCreatedAt(fixedTime).
		SetUpdatedAt(fixedTime)
}

func newAddress(t *testing.T, c *entdb.Client, apiKeyID int64, addr string, index int64, callback string) *entdb.Address {
	t.Helper()
	a, err := addressCreate(c, apiKeyID, addr, index, callback).Save(context.Background())
	if err != nil {
		t.Fatalf("create address: %v", err)
	}
	return a
}

func TestDecimalRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		key := newAPIKey(t, c, "pk_live_decimal")
		addr, err := addressCreate(c, key.ID, "bc1qdecimal", 1, "https://merchant.example/cb").
			SetDestinations([]schema.Destination{
				{Address: "bc1qa", Share: decimal.RequireFromString("0.333333333333333333")},
				{Address: "bc1qb", Share: decimal.RequireFromString("0.666666666666666667")},
			}).
			SetCustomParams([]schema.Param{{Key: "order", Value: "42"}, {Key: "a", Value: "b"}}).
			Save(ctx)
		if err != nil {
			t.Fatalf("create address: %v", err)
		}
		values := []string{
			"0.123456789012345678",
			"12345678901234567890.123456789012345678", // all 38 digits in use
			"0.000000000000000001",
			"0",
			"-1.5",
		}
		for i, v := range values {
			want := decimal.RequireFromString(v)
			fee := decimal.RequireFromString("0.000000000000000123")
			p, err := c.Payment.Create().
				SetAddressID(addr.ID).
				SetAPIKeyID(key.ID).
				SetTxidIn(fmt.Sprintf("tx%d", i)).
				SetValueCoin(want).
				SetFeeCoin(fee).
				Save(ctx)
			if err != nil {
				t.Fatalf("create payment %s: %v", v, err)
			}
			got, err := c.Payment.Get(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !got.ValueCoin.Equal(want) {
				t.Errorf("value_coin %s read back as %s", v, got.ValueCoin)
			}
			if got.FeeCoin == nil || !got.FeeCoin.Equal(fee) {
				t.Errorf("fee_coin read back as %v; want %s", got.FeeCoin, fee)
			}
			if got.NetworkFee != nil || got.ValueForwardedCoin != nil {
				t.Errorf("unset decimals read back as %v, %v; want nil", got.NetworkFee, got.ValueForwardedCoin)
			}
		}
		// Exact text, not only numeric equality, for the value the brief names.
		var text string
		if err := db.SQL.QueryRowContext(ctx,
			"SELECT CAST(value_coin AS TEXT) FROM payments WHERE txid_in = 'tx0'").Scan(&text); err != nil {
			t.Fatal(err)
		}
		if text != "0.123456789012345678" {
			t.Errorf("stored value_coin text = %q", text)
		}
		if db.Dialect == store.SQLite {
			// A float anywhere would show up here as "real".
			var typ string
			if err := db.SQL.QueryRowContext(ctx,
				"SELECT DISTINCT typeof(value_coin) FROM payments").Scan(&typ); err != nil {
				t.Fatal(err)
			}
			if typ != "text" {
				t.Errorf("SQLite stores value_coin as %s; want text", typ)
			}
		}
		got, err := c.Address.Get(ctx, addr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Destinations) != 2 ||
			got.Destinations[0].Share.String() != "0.333333333333333333" ||
			got.Destinations[1].Share.String() != "0.666666666666666667" {
			t.Errorf("destinations read back as %+v", got.Destinations)
		}
		if len(got.CustomParams) != 2 || got.CustomParams[0].Key != "order" || got.CustomParams[1].Key != "a" {
			t.Errorf("custom_params read back as %+v", got.CustomParams)
		}
		if !got.CreatedAt.Equal(fixedTime) {
			t.Errorf("created_at read back as %v; want %v", got.CreatedAt, fixedTime)
		}
	})
}

func TestUniqueConstraints(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		key := newAPIKey(t, c, "pk_live_unique")
		other := newAPIKey(t, c, "pk_live_other")
		addr := newAddress(t, c, key.ID, "bc1qone", 1, "https://merchant.example/cb")
		if _, err := c.Payment.Create().SetAddressID(addr.ID).SetAPIKeyID(key.ID).
			SetTxidIn("tx").SetValueCoin(decimal.NewFromInt(1)).Save(ctx); err != nil {
			t.Fatal(err)
		}

		tests := []struct {
			name string
			save func() error
		}{
			{"api key hash", func() error {
				_, err := c.APIKey.Create().SetName("dup").SetPrefix("pk_live_").SetHash(hexSum("pk_live_unique")).SetProjectID(1).Save(ctx)
				return err
			}},
			{"address_in", func() error {
				_, err := addressCreate(c, other.ID, "bc1qone", 2, "https://other.example/cb").Save(ctx)
				return err
			}},
			{"derivation_index", func() error {
				_, err := addressCreate(c, other.ID, "bc1qtwo", 1, "https://other.example/cb").Save(ctx)
				return err
			}},
			{"project_id, ticker, callback_key", func() error {
				_, err := addressCreate(c, key.ID, "bc1qthree", 3, "https://merchant.example/cb").Save(ctx)
				return err
			}},
			{"project_id, ticker, callback_key through another key of the project", func() error {
				_, err := addressCreate(c, other.ID, "bc1qsix", 6, "https://merchant.example/cb").Save(ctx)
				return err
			}},
			{"payment output", func() error {
				_, err := c.Payment.Create().SetAddressID(addr.ID).SetAPIKeyID(key.ID).
					SetTxidIn("tx").SetValueCoin(decimal.NewFromInt(2)).Save(ctx)
				return err
			}},
			{"foreign key", func() error {
				_, err := addressCreate(c, 999999, "bc1qorphan", 4, "https://merchant.example/cb").Save(ctx)
				return err
			}},
		}
		for _, tt := range tests {
			if err := tt.save(); !entdb.IsConstraintError(err) {
				t.Errorf("%s: got %v; want a constraint error", tt.name, err)
			}
		}

		// The same callback for another coin or another owner is allowed.
		if _, err := addressCreate(c, key.ID, "bc1qfour", 4, "https://merchant.example/cb").SetTicker("ltc").Save(ctx); err != nil {
			t.Errorf("same callback, other ticker: %v", err)
		}
		if _, err := addressCreate(c, other.ID, "bc1qfive", 5, "https://merchant.example/cb").SetProjectID(2).Save(ctx); err != nil {
			t.Errorf("same callback, other project: %v", err)
		}
		// Another output of the same transaction is another payment.
		if _, err := c.Payment.Create().SetAddressID(addr.ID).SetAPIKeyID(key.ID).
			SetTxidIn("tx").SetOutputIndex(1).SetValueCoin(decimal.NewFromInt(2)).Save(ctx); err != nil {
			t.Errorf("second output: %v", err)
		}
	})
}

// TestNotificationRows exercises the outbox tables end to end: optional
// edges, bytes, enums and nullable times.
func TestNotificationRows(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		key := newAPIKey(t, c, "pk_live_notify")
		addr := newAddress(t, c, key.ID, "bc1qnotify", 1, "https://merchant.example/cb")
		p, err := c.Payment.Create().SetAddressID(addr.ID).SetAPIKeyID(key.ID).
			SetTxidIn("tx").SetValueCoin(decimal.NewFromInt(1)).SetStatus(entpayment.StatusConfirmed).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		body := []byte("{\"value_coin\":\"1\"}\x00\xff")
		n, err := c.Notification.Create().
			SetUUID("8c1d1b0e-5f7c-4b0a-9a57-6f1e3c2d4b5a").
			SetOwnerID(key.ID).
			SetSequence(fmt.Sprintf("address-payment:%d", p.ID)).
			SetSubject(addr.AddressIn).
			SetEvent("confirmed").
			SetMethod("POST").
			SetURL("https://merchant.example/cb").
			SetBody(body).
			SetContentType("application/json").
			SetNextAttemptAt(fixedTime).
			SetExpiresAt(fixedTime.Add(24 * time.Hour)).
			Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.DeliveryAttempt.Create().SetNotificationID(n.ID).SetNumber(1).
			SetStartedAt(fixedTime).SetRequestMethod("POST").SetRequestURL(n.URL).Save(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = c.DeliveryAttempt.Create().SetNotificationID(n.ID).SetNumber(1).
			SetStartedAt(fixedTime).SetRequestMethod("POST").SetRequestURL(n.URL).Save(ctx)
		if !entdb.IsConstraintError(err) {
			t.Errorf("duplicate attempt number: got %v; want a constraint error", err)
		}
		got, err := c.Notification.Query().WithDeliveryAttempts().Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != string(body) {
			t.Errorf("body read back as %q", got.Body)
		}
		if got.Sequence == nil || *got.Sequence != fmt.Sprintf("address-payment:%d", p.ID) || got.OwnerID != key.ID {
			t.Errorf("sequence, owner read back as %v, %d", got.Sequence, got.OwnerID)
		}
		if got.NextAttemptAt == nil || !got.NextAttemptAt.Equal(fixedTime) || got.LeaseUntil != nil {
			t.Errorf("next_attempt_at, lease_until read back as %v, %v", got.NextAttemptAt, got.LeaseUntil)
		}
		if len(got.Edges.DeliveryAttempts) != 1 || got.Edges.DeliveryAttempts[0].Outcome != "in_flight" {
			t.Errorf("attempts read back as %+v", got.Edges.DeliveryAttempts)
		}
	})
}

// TestSQLiteConcurrentWriters checks that transactions from several
// goroutines queue for SQLite's write lock instead of failing with
// SQLITE_BUSY.
func TestSQLiteConcurrentWriters(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.SQLite)
	ctx := context.Background()
	key := newAPIKey(t, db.Client, "pk_live_concurrent")
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := db.Client.Tx(ctx)
			if err != nil {
				errs <- err
				return
			}
			// Read, then write: the pattern that deadlocks deferred transactions.
			if _, err := tx.APIKey.Get(ctx, key.ID); err != nil {
				errs <- fmt.Errorf("read: %w", err)
				_ = tx.Rollback()
				return
			}
			cb := fmt.Sprintf("https://merchant.example/cb/%d", i)
			if _, err := addressCreate(tx.Client(), key.ID, fmt.Sprintf("bc1qc%d", i), int64(100+i), cb).Save(ctx); err != nil {
				errs <- fmt.Errorf("write: %w", err)
				_ = tx.Rollback()
				return
			}
			errs <- tx.Commit()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n, err := db.Client.Address.Query().Count(ctx); err != nil || n != writers {
		t.Errorf("addresses = %d, %v; want %d", n, err, writers)
	}
}
