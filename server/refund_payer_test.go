package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
)

// page GETs a hosted page and returns its HTML.
func page(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: HTTP %d %s", u, resp.StatusCode, b)
	}
	return string(b)
}

// askRefund posts the hosted page's refund form.
func askRefund(t *testing.T, pageURL, addr string) (int, string) {
	t.Helper()
	return askRefundIn(t, pageURL, addr, "")
}

// askRefundIn posts the hosted page's refund form with an Accept-Language.
func askRefundIn(t *testing.T, pageURL, addr, lang string) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(http.MethodPost, pageURL+"refund", strings.NewReader(url.Values{"address": {addr}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if lang != "" {
		req.Header.Set("Accept-Language", lang)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRefundByPayer: the payer of an overpaid checkout is offered its
// overpayment back on the hosted page and gives an address; the refund is
// requested (the merchant told, checkout.refund.requested) and waits until
// the merchant approves it by the API, then is sent and completed (pending,
// completed webhooks, the txid on the page). A second request finds
// nothing to refund. With auto_refund_overpaid the request is sent at
// once. A payment after the checkout expired, held under the
// late_payments refund policy, is offered back whole; its approved refund
// spends that payment's own output.
func TestRefundByPayer(t *testing.T) {
	t.Parallel()
	btc, _ := family.DefaultRegistry().Lookup("btc")
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := clock.NewManual(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
			e := newMerchantEnv(t, d, func(c *server.Config) { c.Now = clk.Now })
			e.ms.now = clk.Now
			wallet, dest := destinations(t, btc)
			if err := admin.SetProjectWallet(ctx, e.in.DSN, "", e.in.ProjectA, "btc="+wallet); err != nil {
				t.Fatal(err)
			}
			pw := e.in.Get(t, "/btc/payout/address/", nil, e.in.KeyA).JSON["address"].(string)
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": pw, "value_coin": "1"}), 200)
			e.mine(t, "btc", 3)
			e.ms.take()

			checkout := func(params ...string) (exceptionCheckout, string) {
				c := newExceptionCheckout(t, e, params...)
				l := e.in.Get(t, "/checkout/logs/", q("payment_id", c.id), e.in.KeyA)
				wantStatus(t, l, 200)
				return c, fmt.Sprintf("%s/payment/%s/", e.in.BaseURL, c.id)
			}
			over := decimal.RequireFromString("0.001")

			// Overpaid; the merchant approves.
			c, pageURL := checkout()
			c.pay(t, e, c.quote.Add(over))
			if html := page(t, pageURL); !strings.Contains(html, `id="refund-form"`) || !strings.Contains(html, "0.001 BTC more than was due") {
				t.Fatalf("the overpaid page offers no refund:\n%s", html)
			}
			if code, body := askRefund(t, pageURL, "not-an-address"); code != 400 || !strings.Contains(body, "This is not a valid BTC address") {
				t.Errorf("a bad refund address: HTTP %d", code)
			}
			if code, body := askRefundIn(t, pageURL, "not-an-address", "de"); code != 400 || !strings.Contains(body, "Das ist keine gültige BTC-Adresse") {
				t.Errorf("a bad refund address, in German: HTTP %d\n%s", code, body)
			}
			if code, _ := askRefund(t, pageURL, dest); code != http.StatusSeeOther {
				t.Fatalf("refund request: HTTP %d", code)
			}
			rf, err := e.in.Server.DB().Client.Refund.Query().Only(ctx)
			if err != nil || rf.Status != entrefund.StatusRequested || !rf.Value.Equal(over) || rf.Address != dest || rf.Reason != "overpaid" {
				t.Fatalf("requested refund %+v %v", rf, err)
			}
			if html := page(t, pageURL); strings.Contains(html, `id="refund-form"`) || !strings.Contains(html, "asked for") {
				t.Errorf("the page after the request:\n%s", html)
			}
			if code, body := askRefund(t, pageURL, dest); code != 400 || !strings.Contains(body, "nothing to refund") {
				t.Errorf("a second request: HTTP %d", code)
			}
			e.mine(t, "btc", 1)
			if hooks, _ := e.ms.take(); len(hooks) != 1 || hooks[0].event != "checkout.refund.requested" || hooks[0].get("refund_id") != rf.UUID {
				t.Fatalf("webhooks of the request: %v", hooks)
			}
			r := e.postKey(t, "/refund/approve/", fmt.Sprintf(`{"refund_id": %q}`, rf.UUID), e.in.KeyB)
			wantStatus(t, r, 404)
			r = e.postKey(t, "/refund/approve/", fmt.Sprintf(`{"refund_id": %q}`, rf.UUID), e.in.KeyA)
			wantStatus(t, r, 200)
			got := r.JSON["refund"].(map[string]any)
			if got["status"] != "completed" || got["txid"] == "" || got["reason"] != "overpaid" || got["value"] != "0.001" {
				t.Fatalf("approved refund %s", r.Body)
			}
			wantStatus(t, e.postKey(t, "/refund/approve/", fmt.Sprintf(`{"refund_id": %q}`, rf.UUID), e.in.KeyA), 400)
			e.mine(t, "btc", 1)
			var events []string
			hooks, _ := e.ms.take()
			for _, h := range hooks {
				events = append(events, h.event)
			}
			if strings.Join(events, ",") != "checkout.refund.pending,checkout.refund.completed" {
				t.Errorf("webhooks of the approval: %v", events)
			}
			if html := page(t, pageURL); !strings.Contains(html, "sent (transaction "+got["txid"].(string)) {
				t.Errorf("the page after the refund:\n%s", html)
			}

			// Overpaid, refunds of overpayments approved at once.
			auto := true
			if err := admin.SetProjectPaymentExceptions(ctx, e.in.DSN, e.in.ProjectA, nil, nil, &auto); err != nil {
				t.Fatal(err)
			}
			c, pageURL = checkout()
			c.pay(t, e, c.quote.Add(over))
			if code, _ := askRefund(t, pageURL, dest); code != http.StatusSeeOther {
				t.Fatalf("refund request: HTTP %d", code)
			}
			if html := page(t, pageURL); !strings.Contains(html, "sent (transaction") {
				t.Errorf("an auto-approved refund is not sent:\n%s", html)
			}
			e.mine(t, "btc", 1)
			e.ms.take()

			// Late, under the refund policy: the payment itself goes back.
			late := "refund"
			if err := admin.SetProjectPaymentExceptions(ctx, e.in.DSN, e.in.ProjectA, nil, &late, nil); err != nil {
				t.Fatal(err)
			}
			c, pageURL = checkout()
			clk.Advance(2 * time.Hour)
			paid := c.pay(t, e, c.quote)
			if len(paid) != 1 || paid[0].get("hold_reason") != "late_payment" {
				t.Fatalf("late payment: %v", paid)
			}
			txidIn := paid[0].get("txid_in")
			if html := page(t, pageURL); !strings.Contains(html, "arrived after this payment request expired") {
				t.Fatalf("the late payment's page offers no refund:\n%s", html)
			}
			if code, _ := askRefund(t, pageURL, dest); code != http.StatusSeeOther {
				t.Fatalf("refund request: HTTP %d", code)
			}
			rl, err := e.in.Server.DB().Client.Refund.Query().Where(entrefund.Reason("late")).Only(ctx)
			if err != nil || !rl.Value.Equal(c.quote) || rl.Status != entrefund.StatusRequested {
				t.Fatalf("late refund %+v %v", rl, err)
			}
			r = e.postKey(t, "/refund/approve/", fmt.Sprintf(`{"refund_id": %q}`, rl.UUID), e.in.KeyA)
			wantStatus(t, r, 200)
			if st := r.JSON["refund"].(map[string]any)["status"]; st != "completed" {
				t.Fatalf("late refund approved: %s", r.Body)
			}
			ch, _ := e.in.Server.Devnet().Chain("btc")
			var spent string
			for _, f := range ch.Forwards() {
				if f.ID == fmt.Sprintf("payout:%v", r.JSON["payout_info"].(map[string]any)["id"]) && len(f.Inputs) > 0 {
					spent = f.Inputs[0].TxID
				}
			}
			if spent != txidIn {
				t.Errorf("the late refund spends %q first, want the late payment %q", spent, txidIn)
			}
		})
	}
}
