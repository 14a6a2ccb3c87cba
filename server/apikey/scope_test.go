package apikey_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/server/apikey"
)

// TestParseScopes: names and comma lists, in any case and order, with
// repeats, become the scopes in their documented order; nothing is every
// scope; an unknown name is ErrUnknownScope (invalid), naming it and the
// scopes there are.
func TestParseScopes(t *testing.T) {
	t.Parallel()
	all := []string{"read", "create", "payouts", "management"}
	for _, c := range []struct {
		name string
		in   []string
		want []string
		err  string
	}{
		{"none", nil, all, ""},
		{"empty values", []string{"", " , "}, all, ""},
		{"one", []string{"read"}, []string{"read"}, ""},
		{"comma list", []string{"payouts, read"}, []string{"read", "payouts"}, ""},
		{"repeated flags", []string{"create", "READ", "create"}, []string{"read", "create"}, ""},
		{"every one", []string{"management,payouts,create,read"}, all, ""},
		{"unknown", []string{"read", "admin"}, nil, `unknown scope "admin": the scopes are read, create, payouts, management`},
		{"singular", []string{"payout"}, nil, `unknown scope "payout"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := apikey.ParseScopes(c.in)
			if c.err != "" {
				if !errors.Is(err, apikey.ErrUnknownScope) || kind.Of(err) != kind.Invalid || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%v, want ErrUnknownScope with %q", err, c.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Fatalf("%v %v, want %v", got, err, c.want)
			}
		})
	}
	if !slices.Equal(apikey.AllScopes(), all) {
		t.Fatalf("AllScopes %v", apikey.AllScopes())
	}
}

// TestIssueScopes: a key is stored with the scopes it was issued with
// (every scope by default, operator keys included), the resolver
// authenticates it with them, and listing shows them; an unknown scope
// issues nothing.
func TestIssueScopes(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
		reader, row, err := apikey.Issue(ctx, c, apikey.Spec{Name: "reader", Scopes: []string{"read"}}, now)
		if err != nil || !slices.Equal(row.Scopes, []string{"read"}) {
			t.Fatalf("issue: %+v %v", row, err)
		}
		full, _, err := apikey.Create(ctx, c, "full", now)
		if err != nil {
			t.Fatal(err)
		}
		auditor, _, err := apikey.Issue(ctx, c, apikey.Spec{Name: "auditor", Operator: true, Scopes: []string{"read"}}, now)
		if err != nil {
			t.Fatal(err)
		}
		res := apikey.Resolver{DB: c}
		for key, want := range map[string][]string{reader: {"read"}, full: apikey.AllScopes(), auditor: {"read"}} {
			k, err := res.ResolveAPIKey(ctx, key)
			if err != nil || !slices.Equal(k.Scopes, want) {
				t.Fatalf("resolved %+v %v, want scopes %v", k, err, want)
			}
		}
		if _, _, err := apikey.Issue(ctx, c, apikey.Spec{Name: "bad", Scopes: []string{"everything"}}, now); !errors.Is(err, apikey.ErrUnknownScope) {
			t.Fatalf("an unknown scope: %v", err)
		}
		ks, err := apikey.List(ctx, c, 0)
		if err != nil || len(ks) != 3 || !slices.Equal(ks[0].Scopes, []string{"read"}) || len(ks[1].Scopes) != 4 {
			t.Fatalf("listed %+v %v", ks, err)
		}
	})
}
