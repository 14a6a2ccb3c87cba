package subscription_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/price"
	entdb "github.com/payhook/payhook/ent/db"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/merchant/subscription"
)

// TestFilteredAndDetail: subscriptions filtered by the status StatusAt
// computes and by creation time, paged by cursor, scoped to their
// project; Detail adds the renewals without a payment.
func TestFilteredAndDetail(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		c := db.Client
		now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
		svc := subscription.New(subscription.Config{DB: c, Prices: price.Default(), Now: func() time.Time { return now }})
		var projects [2]int64
		for i := range projects {
			p, err := project.Create(ctx, c, project.Params{Name: fmt.Sprintf("p%d", i)}, now)
			if err != nil {
				t.Fatal(err)
			}
			projects[i] = p.ID
		}
		_, key, err := apikey.CreateInProject(ctx, c, "k", projects[0], now)
		if err != nil {
			t.Fatal(err)
		}
		subs := map[string]*entdb.Subscription{}
		for i, s := range []struct {
			name    string
			project int64
			expires *time.Time
		}{
			{"pending", projects[0], nil},
			{"active", projects[0], ptr(now.Add(time.Hour))},
			{"expired", projects[0], ptr(now.Add(-time.Hour))},
			{"other", projects[1], ptr(now.Add(time.Hour))},
		} {
			at := now.Add(time.Duration(i-3) * 24 * time.Hour)
			sub, err := c.Subscription.Create().SetProjectID(s.project).SetToken("sub_" + s.name).SetNotifyURL("").
				SetCurrency("USD").SetOptions([]schema.PlanOption{{Period: "1m", Value: "10"}}).
				SetNillableExpiresAt(s.expires).SetCreatedAt(at).SetUpdatedAt(at).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			subs[s.name] = sub
		}
		names := func(vs []subscription.View) string {
			var out []string
			for _, v := range vs {
				out = append(out, strings.TrimPrefix(v.Subscription.Token, "sub_")+"="+string(v.Status))
			}
			return strings.Join(out, ",")
		}
		for _, tc := range []struct {
			name string
			f    subscription.Filter
			want string
		}{
			{"all", subscription.Filter{}, "expired=expired,active=active,pending=pending"},
			{"pending", subscription.Filter{Status: subscription.Pending}, "pending=pending"},
			{"active", subscription.Filter{Status: subscription.Active}, "active=active"},
			{"expired", subscription.Filter{Status: subscription.Expired}, "expired=expired"},
			{"from", subscription.Filter{From: now.Add(-2 * 24 * time.Hour)}, "expired=expired,active=active"},
			{"until", subscription.Filter{Until: now.Add(-2 * 24 * time.Hour)}, "pending=pending"},
		} {
			vs, next, err := svc.Filtered(ctx, projects[0], tc.f)
			if err != nil || next != "" || names(vs) != tc.want {
				t.Errorf("%s: %s (next %q, %v), want %s", tc.name, names(vs), next, err, tc.want)
			}
		}
		vs, next, err := svc.Filtered(ctx, projects[0], subscription.Filter{Limit: 2})
		if err != nil || names(vs) != "expired=expired,active=active" || next == "" {
			t.Fatalf("first page: %s %q %v", names(vs), next, err)
		}
		if vs, next, err = svc.Filtered(ctx, projects[0], subscription.Filter{Limit: 2, Cursor: next}); err != nil || names(vs) != "pending=pending" || next != "" {
			t.Fatalf("second page: %s %q %v", names(vs), next, err)
		}
		for _, tc := range []struct {
			f     subscription.Filter
			param string
		}{
			{subscription.Filter{Status: "paid"}, "status"},
			{subscription.Filter{Cursor: "x"}, "cursor"},
			{subscription.Filter{Limit: -1}, "limit"},
		} {
			_, _, err := svc.Filtered(ctx, projects[0], tc.f)
			var ie *subscription.InvalidError
			if !errors.As(err, &ie) || ie.Param != tc.param {
				t.Errorf("%+v: %v, want an invalid %s", tc.f, err, tc.param)
			}
		}

		// Two renewals of the active subscription: one paid, one open.
		sub := subs["active"]
		renewal := func(id string, st entinvoice.Status) *entdb.Invoice {
			inv, err := c.Invoice.Create().SetProjectID(projects[0]).SetPublicID(id).SetKind(entinvoice.KindSubscription).
				SetNotifyURL("").SetCurrency("USD").SetValue(decimal.NewFromInt(10)).SetExpiresAt(now.Add(time.Hour)).
				SetSubscriptionID(sub.ID).SetOption("1m").SetStatus(st).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return inv
		}
		paid := renewal("ren_paid", entinvoice.StatusPaid)
		renewal("ren_open", entinvoice.StatusWaiting)
		sum := sha256.Sum256([]byte("renewal"))
		a, err := c.Address.Create().SetAPIKeyID(key.ID).SetProjectID(projects[0]).SetService("subscription").
			SetInvoiceID(paid.ID).SetTicker("btc").SetFamily("utxo").SetAddressIn("bcrt1qren").SetDerivationIndex(1).
			SetCallbackURL("renewal").SetCallbackKey(hex.EncodeToString(sum[:])).SetDestinations([]schema.Destination{}).
			SetRequiredConfirmations(1).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(key.ID).SetTicker("btc").SetTxidIn("tx1").
			SetValueCoin(decimal.RequireFromString("0.0002")).SetValueFiat(decimal.NewFromInt(10)).
			SetStatus(entpayment.StatusConfirmed).Save(ctx); err != nil {
			t.Fatal(err)
		}
		d, err := svc.Detail(ctx, projects[0], sub.Token)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Renewals) != 1 || d.Renewals[0].Invoice.PublicID != "ren_paid" || len(d.Renewals[0].Payments) != 1 ||
			len(d.Open) != 1 || d.Open[0].Invoice.PublicID != "ren_open" || d.Open[0].Status != "waiting" || d.Status != subscription.Active {
			t.Fatalf("detail: %+v", d)
		}
		if _, err := svc.Detail(ctx, projects[1], sub.Token); !errors.Is(err, subscription.ErrNotFound) {
			t.Fatalf("another project's subscription: %v", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }
