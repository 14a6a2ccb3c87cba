package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/family"
	entemail "github.com/payhook/payhook/ent/db/email"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/mail"
	"github.com/payhook/payhook/server/mail/mailtest"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/dashboard"
)

// withEmail configures the server to email through smtp (STARTTLS, with
// its certificate trusted), with ops as the operator.
func withEmail(smtp *mailtest.Server, ops ...string) func(*server.Config) {
	return func(c *server.Config) {
		c.Email = mail.Config{URL: smtp.URL("payhook@pay.example"), RootCAs: smtp.Roots, Operators: ops}
	}
}

// runMail sends the emails due now.
func runMail(t *testing.T, in *servertest.Instance) {
	t.Helper()
	if err := in.Server.Mail().RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutReceiptEmailed: a devnet checkout requested with the payer's
// email is paid; the SMTP server then gets one receipt, to the payer,
// naming the project, its support contact, the amount, the coin, the
// transaction and the payment_id; more confirmations send nothing more.
// A checkout without email sends none, and a bad address is a 400 naming
// the parameter.
func TestCheckoutReceiptEmailed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			smtp := mailtest.Start(t, mailtest.Options{TLS: true})
			e := newMerchantEnv(t, d, withEmail(smtp))
			ctx := context.Background()
			if err := e.in.Server.DB().Client.Project.UpdateOneID(e.in.ProjectA).SetSupportContact("help@shop.example").Exec(ctx); err != nil {
				t.Fatal(err)
			}
			notify := e.ms.URL + "/merchant?order=7"
			bad := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100", "email", "not-an-address"), e.in.KeyA)
			if bad.Code != 400 || !strings.Contains(string(bad.Body), "email") {
				t.Fatalf("a bad email: HTTP %d %s, want 400 naming email", bad.Code, bad.Body)
			}
			pay := func(email string) (id, valueCoin, txid string) {
				t.Helper()
				r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100", "currency", "USD", "item_description", "a book", "email", email), e.in.KeyA)
				wantStatus(t, r, 200)
				id = r.JSON["payment_id"].(string)
				a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA)
				wantStatus(t, a, 200)
				valueCoin = a.JSON["value_coin"].(string)
				p := e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": valueCoin})
				wantStatus(t, p, 200)
				e.mine(t, "btc", 1)
				logs := e.in.Get(t, "/checkout/logs/", q("payment_id", id), e.in.KeyA)
				if logs.JSON["invoice_status"] != "paid" {
					t.Fatalf("checkout not paid: %s", logs.Body)
				}
				pays := logs.JSON["payments"].([]any)
				txid, _ = pays[0].(map[string]any)["txid_in"].(string)
				return id, valueCoin, txid
			}
			id, valueCoin, txid := pay("payer@example.org")
			if txid == "" {
				t.Fatal("no txid_in in the logs")
			}
			pay("") // no email: no receipt
			runMail(t, e.in)
			e.mine(t, "btc", 3)
			runMail(t, e.in)
			got := smtp.Wait(t, 1)
			if len(got) != 1 {
				t.Fatalf("%d emails, want the one receipt", len(got))
			}
			m := got[0]
			if len(m.To) != 1 || m.To[0] != "payer@example.org" || !m.TLS || m.Subject() != "Receipt: your payment to project A" {
				t.Fatalf("receipt to %v over TLS %v: %q", m.To, m.TLS, m.Subject())
			}
			for _, want := range []string{id, "100.00 USD", valueCoin + " BTC", txid, "a book", "help@shop.example", "project A"} {
				if !strings.Contains(m.Text(), want) || !strings.Contains(m.HTML(), want) {
					t.Errorf("receipt lacks %q:\n%s\n%s", want, m.Text(), m.HTML())
				}
			}
			rows, err := e.in.Server.DB().Client.Email.Query().All(ctx)
			if err != nil || len(rows) != 1 || rows[0].Status != entemail.StatusSent || rows[0].Kind != string(mail.KindReceipt) || rows[0].ProjectID != e.in.ProjectA {
				t.Fatalf("email rows %v, %v", rows, err)
			}
		})
	}
}

// TestPayoutApprovalEmailed: a payout above the project's limit waits for
// approval, and each of the project's dashboard users is emailed once,
// with the amount, the reason and the link to the dashboard's payouts;
// another project's user is not. Without --smtp-url nothing is stored.
func TestPayoutApprovalEmailed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			smtp := mailtest.Start(t, mailtest.Options{TLS: true})
			e := newDevEnv(t, d, withEmail(smtp), func(c *server.Config) { c.API.PublicURL = "https://pay.example" })
			ctx := context.Background()
			db := e.in.Server.DB().Client
			for _, u := range []struct {
				project int64
				email   string
			}{{e.in.ProjectA, "ann@shop.example"}, {e.in.ProjectA, "bob@shop.example"}, {e.in.ProjectB, "eve@other.example"}} {
				if _, err := dashboard.CreateUser(ctx, db, u.project, u.email, "correct horse battery staple", clock.Now()); err != nil {
					t.Fatal(err)
				}
			}
			operator, _, err := apikey.CreateOperator(ctx, db, "ops", clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, e.postKey(t, "/operator/project/payout-limit/", fmt.Sprintf(`{"project_id": %d, "ticker": "ltc", "per_payout": "0.5"}`, e.in.ProjectA), operator), 200)
			w := e.in.Get(t, "/ltc/payout/address/", nil, e.in.KeyA).JSON["address"].(string)
			wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": w, "value_coin": "2"}), 200)
			e.mine(t, "ltc", 5)
			tk, _ := family.DefaultRegistry().Lookup("ltc")
			dest, _ := destinations(t, tk)
			r := e.postKey(t, "/ltc/payout/request/bulk/process/", fmt.Sprintf(`{"outputs": {%q: "0.6"}}`, dest), e.in.KeyA)
			wantStatus(t, r, 200)
			info := r.JSON["payout_info"].(map[string]any)
			if info["status"] != "pending_approval" {
				t.Fatalf("payout: %s", r.Body)
			}
			runMail(t, e.in)
			got := smtp.Wait(t, 2)
			to := map[string]bool{}
			for _, m := range got {
				to[strings.Join(m.To, ",")] = true
				if !strings.HasPrefix(m.Subject(), "[project A] Payout "+fmt.Sprint(info["id"])+" of 0.6 LTC awaits your approval") {
					t.Errorf("subject %q", m.Subject())
				}
				for _, want := range []string{"0.6 LTC", "maximum per payout of 0.5", "https://pay.example/dashboard/payouts/"} {
					if !strings.Contains(m.Text(), want) {
						t.Errorf("to %v: text lacks %q:\n%s", m.To, want, m.Text())
					}
				}
			}
			if len(got) != 2 || !to["ann@shop.example"] || !to["bob@shop.example"] {
				t.Fatalf("emails to %v, want ann and bob once each", to)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		e := newDevEnv(t, store.SQLite)
		if e.in.Server.Mail() != nil {
			t.Fatal("a sender without --smtp-url")
		}
		if n, err := e.in.Server.DB().Client.Email.Query().Count(context.Background()); err != nil || n != 0 {
			t.Fatalf("%d emails stored, %v", n, err)
		}
	})
}

// TestStalePricesEmailed: when the price providers are down past
// --price-max-age, the operator is emailed once per episode, also across
// a restart (the episode's start comes from the stored prices); prices
// coming back end the episode, and the next one is another email.
func TestStalePricesEmailed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
			clk := clock.NewManual(t0)
			var providers []*fakeProvider
			for _, name := range []string{"coinbase", "coingecko", "kraken", "frankfurter"} {
				providers = append(providers, newFakeProvider(t, name, nil))
			}
			down := func(v bool) {
				for _, p := range providers {
					p.down.Store(v)
				}
			}
			smtp := mailtest.Start(t, mailtest.Options{TLS: true})
			setup := func(c *server.Config) {
				c.Now = clk.Now
				c.ManualDelivery = true
				c.Chains.Prices = server.PricesLive
				c.Chains.PriceMaxAge = time.Hour
				for _, f := range providers {
					c.Chains.PriceProviders = append(c.Chains.PriceProviders, f.spec())
				}
			}
			ctx := context.Background()
			in := servertest.Start(t, d, setup, withEmail(smtp, "ops@host.example"))
			check := func(in *servertest.Instance, wantEmails int) {
				t.Helper()
				if err := in.Server.CheckPrices(ctx); err != nil {
					t.Fatal(err)
				}
				runMail(t, in)
				if n := len(smtp.Messages()); n != wantEmails {
					t.Fatalf("%d emails to the operator, want %d", n, wantEmails)
				}
			}
			if err := in.Server.RefreshPrices(ctx); err != nil {
				t.Fatal(err)
			}
			check(in, 0)
			down(true)
			clk.Advance(30 * time.Minute)
			_ = in.Server.RefreshPrices(ctx) // fails: the providers are down
			check(in, 0)                     // the prices are 30 minutes old: fresh
			clk.Advance(31 * time.Minute)
			check(in, 1)
			m := smtp.Messages()[0]
			if m.To[0] != "ops@host.example" || m.Subject() != "payhook: prices stale since 2026-03-02 10:00:00 UTC, amounts cannot be priced" ||
				!strings.Contains(m.Text(), "no fresh price") {
				t.Fatalf("operator email to %v %q:\n%s", m.To, m.Subject(), m.Text())
			}
			clk.Advance(10 * time.Minute)
			check(in, 1) // the same episode

			// A restart in the episode: the same start, no second email.
			if err := in.Server.Stop(); err != nil {
				t.Fatal(err)
			}
			in = servertest.Start(t, d, setup, withEmail(smtp, "ops@host.example"), func(c *server.Config) { c.Store.DB = in.DSN })
			check(in, 1)

			// The providers are back: the episode ends; the next is news.
			down(false)
			if err := in.Server.RefreshPrices(ctx); err != nil {
				t.Fatal(err)
			}
			check(in, 1)
			down(true)
			clk.Advance(61 * time.Minute)
			check(in, 2)
			if s := smtp.Messages()[1].Subject(); !strings.Contains(s, "2026-03-02 11:11:00 UTC") {
				t.Fatalf("second episode: %q", s)
			}
		})
	}
}
