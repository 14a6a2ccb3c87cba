package invoice_test

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
	"github.com/payhook/payhook/server/merchant/invoice"
	"github.com/payhook/payhook/server/merchant/project"
)

// listFixture is a project with invoices in every state, written as the
// service and the reactor would have left them.
type listFixture struct {
	c         *entdb.Client
	svc       *invoice.Service
	now       time.Time
	project   int64
	keyID     int64
	n         int64
	ids       map[string]string // name -> payment_id
	otherProj int64
}

func newListFixture(t *testing.T, db *store.DB) *listFixture {
	t.Helper()
	ctx := context.Background()
	f := &listFixture{c: db.Client, now: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), ids: map[string]string{}}
	f.svc = invoice.New(invoice.Config{DB: db.Client, Prices: price.Default(), Now: func() time.Time { return f.now }})
	for i, dst := range []*int64{&f.project, &f.otherProj} {
		p, err := project.Create(ctx, db.Client, project.Params{Name: fmt.Sprintf("p%d", i)}, f.now)
		if err != nil {
			t.Fatal(err)
		}
		*dst = p.ID
	}
	_, k, err := apikey.CreateInProject(ctx, db.Client, "k", f.project, f.now)
	if err != nil {
		t.Fatal(err)
	}
	f.keyID = k.ID
	return f
}

// invoice stores an invoice created at, with status as stored.
func (f *listFixture) invoice(t *testing.T, name string, kind entinvoice.Kind, projectID int64, value string, expires time.Duration, stored entinvoice.Status, at time.Time) *entdb.Invoice {
	t.Helper()
	c := f.c.Invoice.Create().SetProjectID(projectID).SetKind(kind).SetNotifyURL("").SetCurrency("USD").
		SetPublicID("chk_" + name).SetStatus(stored).SetItemDescription(name).SetCreatedAt(at).SetUpdatedAt(at)
	if value != "" {
		c.SetValue(decimal.RequireFromString(value))
	}
	if expires != 0 {
		c.SetExpiresAt(at.Add(expires))
	}
	inv, err := c.Save(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.ids[name] = inv.PublicID
	return inv
}

// pay stores a payment of value btc worth fiat USD to a new address of inv.
func (f *listFixture) pay(t *testing.T, inv *entdb.Invoice, value, fiat string, st entpayment.Status) {
	t.Helper()
	ctx := context.Background()
	f.n++
	cb := fmt.Sprintf("invoice:%d:%d", inv.ID, f.n)
	sum := sha256.Sum256([]byte(cb))
	a, err := f.c.Address.Create().SetAPIKeyID(f.keyID).SetProjectID(inv.ProjectID).SetService(string(inv.Kind)).
		SetInvoiceID(inv.ID).SetTicker("btc").SetFamily("utxo").SetAddressIn(fmt.Sprintf("bcrt1q%d", f.n)).
		SetDerivationIndex(f.n).SetCallbackURL(cb).SetCallbackKey(hex.EncodeToString(sum[:])).
		SetDestinations([]schema.Destination{}).SetRequiredConfirmations(1).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fv := decimal.RequireFromString(fiat)
	if _, err := f.c.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(f.keyID).SetTicker("btc").
		SetTxidIn(fmt.Sprintf("tx%d", f.n)).SetValueCoin(decimal.RequireFromString(value)).SetValueFiat(fv).
		SetStatus(st).Save(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestList: a project's invoices of one kind, newest first, with their
// status as Logs computes it, payments and amounts; filters by status and
// creation time; pages by cursor; bad parameters name themselves.
func TestList(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		f := newListFixture(t, db)
		day := f.now.Add(-24 * time.Hour)
		f.invoice(t, "waiting", entinvoice.KindCheckout, f.project, "10", 2*24*time.Hour, entinvoice.StatusWaiting, day)
		paid := f.invoice(t, "paid", entinvoice.KindCheckout, f.project, "10", time.Hour, entinvoice.StatusPaid, day.Add(time.Minute))
		f.pay(t, paid, "0.0001", "6", entpayment.StatusConfirmed)
		f.pay(t, paid, "0.0001", "6", entpayment.StatusCompleted)
		f.pay(t, paid, "0.5", "3000", entpayment.StatusDropped)
		// Stored waiting, but its expiry has passed: expired.
		f.invoice(t, "lapsed", entinvoice.KindCheckout, f.project, "10", time.Hour, entinvoice.StatusWaiting, day.Add(2*time.Minute))
		// Stored pending, its only payment dropped since: waiting.
		dropped := f.invoice(t, "dropped", entinvoice.KindCheckout, f.project, "10", 2*24*time.Hour, entinvoice.StatusPending, f.now.Add(-time.Minute))
		f.pay(t, dropped, "0.0002", "12", entpayment.StatusDropped)
		f.invoice(t, "deposit", entinvoice.KindDeposit, f.project, "", 0, entinvoice.StatusWaiting, f.now)
		f.invoice(t, "other", entinvoice.KindCheckout, f.otherProj, "10", time.Hour, entinvoice.StatusWaiting, f.now)

		names := func(rows []invoice.Row) string {
			var out []string
			for _, r := range rows {
				out = append(out, strings.TrimPrefix(r.Invoice.PublicID, "chk_")+"="+string(r.Status))
			}
			return strings.Join(out, ",")
		}
		for _, tc := range []struct {
			name string
			f    invoice.ListFilter
			want string
		}{
			{"all", invoice.ListFilter{}, "dropped=waiting,lapsed=expired,paid=paid,waiting=waiting"},
			{"waiting", invoice.ListFilter{Status: invoice.Waiting}, "dropped=waiting,waiting=waiting"},
			{"pending", invoice.ListFilter{Status: invoice.Pending}, ""},
			{"paid", invoice.ListFilter{Status: invoice.Paid}, "paid=paid"},
			{"expired", invoice.ListFilter{Status: invoice.Expired}, "lapsed=expired"},
			{"from today", invoice.ListFilter{From: f.now.Truncate(24 * time.Hour)}, "dropped=waiting"},
			{"until today", invoice.ListFilter{Until: f.now.Truncate(24 * time.Hour)}, "lapsed=expired,paid=paid,waiting=waiting"},
		} {
			rows, next, err := f.svc.List(ctx, invoice.Checkout, f.project, tc.f)
			if err != nil || next != "" || names(rows) != tc.want {
				t.Errorf("%s: %s (next %q, %v), want %s", tc.name, names(rows), next, err, tc.want)
			}
		}
		rows, _, _ := f.svc.List(ctx, invoice.Checkout, f.project, invoice.ListFilter{Status: invoice.Paid})
		if r := rows[0]; r.Payments != 2 || r.PaidFiat.String() != "12" || len(r.Received) != 1 || r.Received[0].Coin != "btc" || r.Received[0].Value.String() != "0.0002" {
			t.Errorf("paid row: %d payments, %s fiat, %+v", r.Payments, r.PaidFiat, r.Received)
		}
		// The status agrees with Logs'.
		for _, name := range []string{"paid", "lapsed", "dropped"} {
			l, err := f.svc.Logs(ctx, invoice.Checkout, f.project, f.ids[name])
			rows, _, _ := f.svc.List(ctx, invoice.Checkout, f.project, invoice.ListFilter{Status: l.Status})
			if err != nil || !strings.Contains(names(rows), name+"="+string(l.Status)) {
				t.Errorf("%s: Logs says %s (%v); the listing %s", name, l.Status, err, names(rows))
			}
		}
		if rows, _, _ := f.svc.List(ctx, invoice.Deposit, f.project, invoice.ListFilter{}); names(rows) != "deposit=waiting" {
			t.Errorf("deposits: %s", names(rows))
		}

		// Pages of one; the filtered-out rows between matches are skipped.
		var got []string
		cursor := ""
		for range 10 {
			rows, next, err := f.svc.List(ctx, invoice.Checkout, f.project, invoice.ListFilter{Status: invoice.Waiting, Limit: 1, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, names(rows))
			if cursor = next; cursor == "" {
				break
			}
		}
		if strings.Join(got, "|") != "dropped=waiting|waiting=waiting" {
			t.Errorf("pages: %v", got)
		}

		for _, tc := range []struct {
			f     invoice.ListFilter
			param string
		}{
			{invoice.ListFilter{Status: "shipped"}, "status"},
			{invoice.ListFilter{Cursor: "abc"}, "cursor"},
			{invoice.ListFilter{Cursor: "-4"}, "cursor"},
			{invoice.ListFilter{Limit: invoice.MaxListLimit + 1}, "limit"},
		} {
			_, _, err := f.svc.List(ctx, invoice.Checkout, f.project, tc.f)
			var ie *invoice.InvalidError
			if !errors.As(err, &ie) || ie.Param != tc.param {
				t.Errorf("%+v: %v, want an invalid %s", tc.f, err, tc.param)
			}
		}
	})
}

// TestListScanIsBounded: a status filter confirmed in Go examines a
// bounded number of rows per page; when many rows the database selects are
// not of the status, a page ends early (even empty) with a next cursor,
// and following the cursors still finds every match.
func TestListScanIsBounded(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		t.Parallel()
		ctx := context.Background()
		f := newListFixture(t, db)
		start := f.now.Add(-time.Hour)
		target := f.invoice(t, "target", entinvoice.KindCheckout, f.project, "10", 2*24*time.Hour, entinvoice.StatusPending, start)
		f.pay(t, target, "0.0001", "6", entpayment.StatusPending)
		for i := range 45 { // newer, stored waiting: the pending predicate selects them too
			f.invoice(t, fmt.Sprintf("w%02d", i), entinvoice.KindCheckout, f.project, "10", 2*24*time.Hour, entinvoice.StatusWaiting, start.Add(time.Duration(i+1)*time.Second))
		}
		var pages []int
		found := false
		cursor := ""
		for range 10 {
			rows, next, err := f.svc.List(ctx, invoice.Checkout, f.project, invoice.ListFilter{Status: invoice.Pending, Limit: 1, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, len(rows))
			for _, r := range rows {
				found = found || (r.Invoice.ID == target.ID && r.Status == invoice.Pending)
			}
			if cursor = next; cursor == "" {
				break
			}
		}
		if !found || len(pages) < 2 || pages[0] != 0 {
			t.Fatalf("pages %v, found %v: want an early empty page, then the pending invoice", pages, found)
		}
	})
}
