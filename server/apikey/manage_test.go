package apikey_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	entdb "github.com/payhook/payhook/ent/db"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/interceptor"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestMain fails the run when a goroutine started by a test outlives it.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestListAndRevoke: List shows a project's keys (operator keys flagged,
// no hash), every project's with 0; Revoke is scoped to the project,
// idempotent (the first time stays) and takes effect for the resolver at
// once; RevokeMerchant refuses an operator key as it refuses an unknown
// one.
func TestListAndRevoke(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		pa, err := project.Create(ctx, c, project.Params{Name: "a"}, now)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := project.Create(ctx, c, project.Params{Name: "b"}, now)
		if err != nil {
			t.Fatal(err)
		}
		keyA, rowA, err := apikey.CreateInProject(ctx, c, "shop", pa.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		_, rowA2, err := apikey.CreateInProject(ctx, c, "backup", pa.ID, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		_, rowB, err := apikey.CreateInProject(ctx, c, "other", pb.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		_, op, err := apikey.CreateOperator(ctx, c, "ops", now)
		if err != nil {
			t.Fatal(err)
		}

		ks, err := apikey.List(ctx, c, pa.ID)
		if err != nil || len(ks) != 2 || ks[0].ID != rowA.ID || ks[1].ID != rowA2.ID {
			t.Fatalf("project a's keys: %v %v", ks, err)
		}
		if k := ks[0]; k.Name != "shop" || k.Prefix != keyA[:8] || k.Hash != "" || k.Operator || k.RevokedAt != nil || !k.CreatedAt.Equal(now) {
			t.Fatalf("listed key %+v", k)
		}
		all, err := apikey.List(ctx, c, 0)
		if err != nil || len(all) != 4 || !all[3].Operator || all[3].ID != op.ID {
			t.Fatalf("every key: %v %v", all, err)
		}

		res := apikey.Resolver{DB: c}
		if _, err := res.ResolveAPIKey(ctx, keyA); err != nil {
			t.Fatal(err)
		}
		// Another project's key, an unknown one, and (for a merchant) an
		// operator key are not found, and stay unrevoked.
		for _, bad := range []struct {
			name    string
			project int64
			id      int64
			revoke  func(context.Context, *entdb.Client, int64, int64, time.Time) (*entdb.APIKey, error)
		}{
			{"another project's", pb.ID, rowA.ID, apikey.Revoke},
			{"unknown", pa.ID, 1 << 40, apikey.Revoke},
			{"operator as merchant", op.ProjectID, op.ID, apikey.RevokeMerchant},
		} {
			if _, err := bad.revoke(ctx, c, bad.project, bad.id, now); !errors.Is(err, apikey.ErrNotFound) {
				t.Errorf("%s: %v, want ErrNotFound", bad.name, err)
			}
		}
		if n, _ := apikey.Count(ctx, c); n != 4 {
			t.Fatalf("%d keys unrevoked after refused revocations", n)
		}

		at := now.Add(time.Hour)
		k, err := apikey.RevokeMerchant(ctx, c, pa.ID, rowA.ID, at)
		if err != nil || k.RevokedAt == nil || !k.RevokedAt.Equal(at) || k.Hash != "" {
			t.Fatalf("revoke: %+v %v", k, err)
		}
		if _, err := res.ResolveAPIKey(ctx, keyA); !errors.Is(err, interceptor.ErrUnknownKey) {
			t.Fatalf("a revoked key resolves: %v", err)
		}
		again, err := apikey.Revoke(ctx, c, 0, rowA.ID, at.Add(time.Hour))
		if err != nil || !again.RevokedAt.Equal(at) {
			t.Fatalf("revoked again: %+v %v", again, err)
		}
		if _, err := apikey.Revoke(ctx, c, 0, op.ID, at); err != nil {
			t.Fatalf("the operator revokes an operator key: %v", err)
		}
		ks, _ = apikey.List(ctx, c, pa.ID)
		if ks[0].RevokedAt == nil || ks[1].RevokedAt != nil {
			t.Fatalf("after the revocation: %v", ks)
		}
		if n, _ := apikey.Count(ctx, c); n != 2 || rowB.RevokedAt != nil {
			t.Fatalf("%d keys unrevoked", n)
		}
	})
}

// TestLastUsed: a key's use is recorded to the minute, written again only
// once that minute has passed, listed, and never recorded for a revoked
// key (which authenticates nothing).
func TestLastUsed(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		start := time.Date(2026, 11, 24, 12, 0, 30, 0, time.UTC)
		p, err := project.Create(ctx, c, project.Params{Name: "a"}, start)
		if err != nil {
			t.Fatal(err)
		}
		key, row, err := apikey.CreateInProject(ctx, c, "shop", p.ID, start)
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() *time.Time {
			t.Helper()
			ks, err := apikey.List(ctx, c, p.ID)
			if err != nil || len(ks) != 1 {
				t.Fatalf("list: %v %v", ks, err)
			}
			return ks[0].LastUsedAt
		}
		if lastUsed() != nil {
			t.Fatal("a new key is listed as used")
		}
		now := start
		res := apikey.Resolver{DB: c, Now: func() time.Time { return now }}
		use := func() {
			t.Helper()
			if _, err := res.ResolveAPIKey(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		use()
		minute := start.Truncate(time.Minute)
		if got := lastUsed(); got == nil || !got.Equal(minute) {
			t.Fatalf("after a use: %v, want %v", got, minute)
		}
		now = start.Add(20 * time.Second) // the same minute: nothing to write
		use()
		if got := lastUsed(); !got.Equal(minute) {
			t.Fatalf("within the minute: %v", got)
		}
		now = start.Add(3 * time.Minute)
		use()
		if got := lastUsed(); !got.Equal(now.Truncate(time.Minute)) {
			t.Fatalf("three minutes later: %v", got)
		}
		if _, err := apikey.Revoke(ctx, c, p.ID, row.ID, now); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
		if _, err := res.ResolveAPIKey(ctx, key); !errors.Is(err, interceptor.ErrUnknownKey) {
			t.Fatalf("a revoked key: %v", err)
		}
		if got := lastUsed(); !got.Equal(start.Add(3 * time.Minute).Truncate(time.Minute)) {
			t.Fatalf("a revoked key's use was recorded: %v", got)
		}
	})
}
