package server_test

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	entaddress "github.com/payhook/payhook/ent/db/address"
	entinvoice "github.com/payhook/payhook/ent/db/invoice"
	entledger "github.com/payhook/payhook/ent/db/ledgerentry"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
)

// exceptionCheckout is a checkout requested with params (notify_url, value
// 100 USD and JSON webhooks added) and its btc address.
type exceptionCheckout struct {
	id, addrIn string
	quote      decimal.Decimal // value_coin
	rate       decimal.Decimal // the held rate, as stored
}

func newExceptionCheckout(t *testing.T, e *merchantEnv, params ...string) exceptionCheckout {
	t.Helper()
	r := e.in.Get(t, "/checkout/request/", q(append([]string{"notify_url", e.ms.URL + "/merchant", "value", "100", "currency", "USD", "json", "1"}, params...)...), e.in.KeyA)
	wantStatus(t, r, 200)
	id := r.JSON["payment_id"].(string)
	a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA)
	wantStatus(t, a, 200)
	addrIn := a.JSON["address_in"].(string)
	row, err := e.in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(addrIn)).Only(context.Background())
	if err != nil || row.QuoteRate == nil {
		t.Fatalf("address %s: %v", addrIn, err)
	}
	return exceptionCheckout{id: id, addrIn: addrIn, quote: decimal.RequireFromString(a.JSON["value_coin"].(string)), rate: *row.QuoteRate}
}

// pay pays value to c on the devnet, mines a block and returns the
// webhooks delivered.
func (c exceptionCheckout) pay(t *testing.T, e *merchantEnv, value decimal.Decimal) []webhook {
	t.Helper()
	wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": c.addrIn, "value_coin": value.String()}), 200)
	e.mine(t, "btc", 1)
	got, errs := e.ms.take()
	if len(errs) > 0 {
		t.Fatalf("webhooks that did not verify: %v", errs)
	}
	return got
}

// logs reads c's /checkout/logs/.
func (c exceptionCheckout) logs(t *testing.T, e *merchantEnv) map[string]any {
	t.Helper()
	l := e.in.Get(t, "/checkout/logs/", q("payment_id", c.id), e.in.KeyA)
	wantStatus(t, l, 200)
	return l.JSON
}

// TestExceptionUnderpaidTolerance: with the project's underpaid_tolerance
// of 1 (percent), a checkout of 100 USD paid 99.5% of its quote is paid,
// without amount_due; a checkout that overrides it with 0 and is paid the
// same is partial, its webhook and its logs carry amount_due and
// amount_due_fiat (strings: the exact rest, rounded up), and paying that
// amount_due makes it paid.
func TestExceptionUnderpaidTolerance(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			tol := "1"
			if err := admin.SetProjectPaymentExceptions(context.Background(), e.in.DSN, e.in.ProjectA, &tol, nil, nil); err != nil {
				t.Fatal(err)
			}
			short := func(c exceptionCheckout) decimal.Decimal {
				return c.quote.Mul(decimal.RequireFromString("0.995")).RoundDown(8)
			}

			within := newExceptionCheckout(t, e)
			got := within.pay(t, e, short(within))
			if len(got) == 0 {
				t.Fatal("no webhook")
			}
			for _, w := range got {
				if w.get("invoice_status") != "paid" {
					t.Errorf("%s within the tolerance: invoice_status %s, want paid", w.event, w.get("invoice_status"))
				}
				wantJSONTypes(t, w, map[string]string{"amount_due": "absent", "amount_due_fiat": "absent", "overpaid_amount": "absent", "overpaid_amount_fiat": "absent"})
			}
			if l := within.logs(t, e); l["invoice_status"] != "paid" || l["underpaid_tolerance"] != "1" || l["amount_due"] != "" {
				t.Errorf("logs within the tolerance: %v", l)
			}

			strict := newExceptionCheckout(t, e, "underpaid_tolerance", "0")
			paid := short(strict)
			got = strict.pay(t, e, paid)
			if len(got) == 0 {
				t.Fatal("no webhook")
			}
			dueFiat := decimal.NewFromInt(100).Sub(paid.Mul(strict.rate))
			wantFiat := dueFiat.RoundUp(2)
			wantCoin, rem := dueFiat.QuoRem(strict.rate, 8)
			if rem.Sign() > 0 {
				wantCoin = wantCoin.Add(decimal.New(1, -8))
			}
			for _, w := range got {
				if w.get("invoice_status") != "partial" || w.get("amount_due") != wantCoin.String() || w.get("amount_due_fiat") != wantFiat.String() {
					t.Errorf("%s of the strict checkout: status %s amount_due %s amount_due_fiat %s, want partial %s %s",
						w.event, w.get("invoice_status"), w.get("amount_due"), w.get("amount_due_fiat"), wantCoin, wantFiat)
				}
				wantJSONTypes(t, w, map[string]string{"amount_due": "string", "amount_due_fiat": "string", "overpaid_amount": "absent"})
			}
			l := strict.logs(t, e)
			if l["invoice_status"] != "partial" || l["underpaid_tolerance"] != "0" || l["amount_due"] != wantCoin.String() ||
				l["amount_due_fiat"] != wantFiat.String() || l["due_coin"] != "btc" {
				t.Errorf("logs of the strict checkout: %v", l)
			}
			// Paying exactly amount_due settles it.
			for _, w := range strict.pay(t, e, wantCoin) {
				if w.get("invoice_status") != "paid" {
					t.Errorf("%s after paying amount_due: invoice_status %s", w.event, w.get("invoice_status"))
				}
				wantJSONTypes(t, w, map[string]string{"amount_due": "absent"})
			}
		})
	}
}

// TestExceptionOverpaid: a checkout of 100 USD paid 120% of its quote is
// paid, and every webhook of it, and its logs, carry overpaid_amount (in
// btc: what was paid beyond the quote, exactly) and overpaid_amount_fiat
// (rounded down to cents), as strings; paying the quote exactly is not an
// overpayment.
func TestExceptionOverpaid(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			c := newExceptionCheckout(t, e)
			paid := c.quote.Mul(decimal.RequireFromString("1.2")).RoundDown(8)
			got := c.pay(t, e, paid)
			wantCoin := paid.Sub(c.quote)
			wantFiat := paid.Mul(c.rate).Sub(decimal.NewFromInt(100)).RoundDown(2)
			var events []string
			for _, w := range got {
				events = append(events, w.event)
				if w.get("invoice_status") != "paid" || w.get("overpaid_amount") != wantCoin.String() || w.get("overpaid_amount_fiat") != wantFiat.String() {
					t.Errorf("%s: status %s overpaid_amount %s overpaid_amount_fiat %s, want paid %s %s",
						w.event, w.get("invoice_status"), w.get("overpaid_amount"), w.get("overpaid_amount_fiat"), wantCoin, wantFiat)
				}
				wantJSONTypes(t, w, map[string]string{"overpaid_amount": "string", "overpaid_amount_fiat": "string", "amount_due": "absent", "hold_reason": "absent"})
			}
			if strings.Join(events, ",") != "checkout.payment.confirmed,checkout.payment.completed" {
				t.Fatalf("events %v", events)
			}
			if l := c.logs(t, e); l["overpaid_amount"] != wantCoin.String() || l["overpaid_amount_fiat"] != wantFiat.String() || l["due_coin"] != "btc" {
				t.Errorf("logs: %v", l)
			}

			exact := newExceptionCheckout(t, e)
			for _, w := range exact.pay(t, e, exact.quote) {
				wantJSONTypes(t, w, map[string]string{"overpaid_amount": "absent", "overpaid_amount_fiat": "absent"})
			}
		})
	}
}

// TestExceptionLatePayments: a payment after its checkout expired, under
// the project's late_payments refund, is credited and notified
// (checkout.payment.confirmed, invoice_status expired: it pays nothing of
// the checkout, hold_reason late_payment) but never forwarded: no
// completed webhook, no forward, the payment held (late_payment) and the
// journal's held account holding its value with that reason. A checkout
// that overrides the policy with credit forwards its late payment as
// before (completed, forwarded to the wallet, paid).
func TestExceptionLatePayments(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := clock.NewManual(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
			e := newMerchantEnv(t, d, func(c *server.Config) { c.Now = clk.Now })
			e.ms.now = clk.Now
			db := e.in.Server.DB().Client
			btc, _ := family.DefaultRegistry().Lookup("btc")
			wallet, _ := destinations(t, btc)
			if err := admin.SetProjectWallet(ctx, e.in.DSN, "", e.in.ProjectA, "btc="+wallet); err != nil {
				t.Fatal(err)
			}
			late := "refund"
			if err := admin.SetProjectPaymentExceptions(ctx, e.in.DSN, e.in.ProjectA, nil, &late, nil); err != nil {
				t.Fatal(err)
			}
			refund := newExceptionCheckout(t, e)
			credit := newExceptionCheckout(t, e, "late_payments", "credit")
			clk.Advance(2 * time.Hour) // past the default expiry of one hour

			got := refund.pay(t, e, refund.quote)
			if len(got) != 1 || got[0].event != "checkout.payment.confirmed" {
				t.Fatalf("late payment under refund: webhooks %v, want confirmed only", got)
			}
			w := got[0]
			if w.get("hold_reason") != "late_payment" || w.get("invoice_status") != "expired" || w.get("paid_amount") != refund.quote.String() {
				t.Errorf("late payment under refund: %v", w.fields)
			}
			wantJSONTypes(t, w, map[string]string{"hold_reason": "string", "received_amount": "absent", "txid_out": "absent"})
			e.mine(t, "btc", 3) // more blocks: nothing more happens
			if more, _ := e.ms.take(); len(more) != 0 {
				t.Fatalf("webhooks after the late payment was held: %v", more)
			}
			p, err := db.Payment.Query().Where(entpayment.HasAddressWith(entaddress.AddressIn(refund.addrIn))).WithForward().Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != entpayment.StatusConfirmed || p.HoldReason != entpayment.HoldReasonLatePayment || p.Edges.Forward != nil {
				t.Fatalf("late payment under refund: status %s hold %s forward %v", p.Status, p.HoldReason, p.Edges.Forward)
			}
			if held := heldUnits(t, db, p.ID, entledger.HoldReasonLatePayment); !held.Equal(refund.quote.Shift(btc.Decimals)) {
				t.Errorf("journal holds %s base units as late_payment, want %s", held, refund.quote.Shift(btc.Decimals))
			}
			l := refund.logs(t, e)
			if l["invoice_status"] != "expired" || l["late_payments"] != "refund" {
				t.Errorf("logs: %v", l)
			}
			if ps, _ := l["payments"].([]any); len(ps) != 1 || ps[0].(map[string]any)["hold_reason"] != "late_payment" {
				t.Errorf("logs' payments: %v", l["payments"])
			}
			ch, _ := e.in.Server.Devnet().Chain("btc")
			if fw := ch.Forwards(); len(fw) != 0 {
				t.Fatalf("forwards %v, want none", fw)
			}

			got = credit.pay(t, e, credit.quote)
			var events []string
			for _, w := range got {
				events = append(events, w.event)
				if w.get("invoice_status") != "paid" {
					t.Errorf("%s under credit: invoice_status %s", w.event, w.get("invoice_status"))
				}
				wantJSONTypes(t, w, map[string]string{"hold_reason": "absent"})
			}
			if strings.Join(events, ",") != "checkout.payment.confirmed,checkout.payment.completed" {
				t.Fatalf("late payment under credit: events %v", events)
			}
			if fw := ch.Forwards(); len(fw) != 1 || !strings.Contains(fmt.Sprint(fw[0]), wallet) {
				t.Fatalf("forwards %v, want one to %s", fw, wallet)
			}
			if n, err := db.LedgerEntry.Query().Where(entledger.HoldReasonEQ(entledger.HoldReasonLatePayment)).Count(ctx); err != nil || n != 1 {
				t.Errorf("%d late_payment hold entries, want the refund checkout's one (%v)", n, err)
			}
		})
	}
}

// heldUnits sums the journal's held account for payment pid with reason.
func heldUnits(t *testing.T, db *entdb.Client, pid int64, reason entledger.HoldReason) decimal.Decimal {
	t.Helper()
	ls, err := db.LedgerEntry.Query().Where(entledger.PaymentID(pid), entledger.AccountEQ(entledger.AccountHeld), entledger.HoldReasonEQ(reason)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := decimal.Zero
	for _, l := range ls {
		sum = sum.Add(l.Amount)
	}
	return sum
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestExceptionBadInput: an out-of-range, over-precise or non-numeric
// underpaid_tolerance and an unknown late_payments policy are 400s naming
// the field, at checkout creation and through the operator's
// ProjectService; nothing is recorded and the project keeps its rules.
func TestExceptionBadInput(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	ctx := context.Background()
	notify := e.ms.URL + "/merchant"
	for _, c := range []struct {
		name   string
		params url.Values
		want   string
	}{
		{"tolerance above 100", q("notify_url", notify, "value", "10", "underpaid_tolerance", "100.01"), "underpaid_tolerance"},
		{"negative tolerance", q("notify_url", notify, "value", "10", "underpaid_tolerance", "-1"), "underpaid_tolerance"},
		{"over-precise tolerance", q("notify_url", notify, "value", "10", "underpaid_tolerance", "0.125"), "underpaid_tolerance"},
		{"non-numeric tolerance", q("notify_url", notify, "value", "10", "underpaid_tolerance", "1%"), "underpaid_tolerance"},
		{"unknown late policy", q("notify_url", notify, "value", "10", "late_payments", "keep"), "late_payments"},
	} {
		r := e.in.Get(t, "/checkout/request/", c.params, e.in.KeyA)
		if r.Code != 400 || !strings.Contains(string(r.Body), c.want) || !strings.Contains(string(r.Body), `"status":"error"`) {
			t.Errorf("%s: HTTP %d %s, want 400 naming %s", c.name, r.Code, r.Body, c.want)
		}
	}
	if n, err := e.in.Server.DB().Client.Invoice.Query().Count(ctx); err != nil || n != 0 {
		t.Errorf("%d invoices stored, want none (%v)", n, err)
	}
	// A valid override is stored on the checkout.
	r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "10", "underpaid_tolerance", "2.5", "late_payments", "refund"), e.in.KeyA)
	wantStatus(t, r, 200)
	if r.JSON["underpaid_tolerance"] != "2.5" || r.JSON["late_payments"] != "refund" {
		t.Errorf("request: %s", r.Body)
	}
	inv, err := e.in.Server.DB().Client.Invoice.Query().Only(ctx)
	if err != nil || inv.UnderpaidTolerance.String() != "2.5" || inv.LatePayments != entinvoice.LatePaymentsRefund {
		t.Fatalf("stored checkout %+v (%v)", inv, err)
	}

	opKey, _, err := apikey.CreateOperator(ctx, e.in.Server.DB().Client, "ops", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	path := "/operator/project/payment-exceptions/"
	for _, c := range []struct{ body, want string }{
		{`{"project_id":` + itoa(e.in.ProjectA) + `,"underpaid_tolerance":"101"}`, "underpaid_tolerance"},
		{`{"project_id":` + itoa(e.in.ProjectA) + `,"underpaid_tolerance":"1.005","late_payments":"refund"}`, "underpaid_tolerance"},
		{`{"project_id":` + itoa(e.in.ProjectA) + `,"underpaid_tolerance":"1","late_payments":"later"}`, "late_payments"},
		{`{"project_id":` + itoa(e.in.ProjectA) + `}`, "underpaid_tolerance"},
	} {
		r := e.postKey(t, path, c.body, opKey)
		if r.Code != 400 || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: HTTP %d %s, want 400 naming %s", c.body, r.Code, r.Body, c.want)
		}
	}
	wantStatus(t, e.postKey(t, path, `{"project_id":`+itoa(e.in.ProjectA)+`,"late_payments":"refund"}`, e.in.KeyA), 403)
	p, err := e.in.Server.DB().Client.Project.Get(ctx, e.in.ProjectA)
	if err != nil || !p.UnderpaidTolerance.IsZero() || p.LatePayments != "credit" {
		t.Fatalf("a refused request changed the project: %s %s (%v)", p.UnderpaidTolerance, p.LatePayments, err)
	}
	r = e.postKey(t, path, `{"project_id":`+itoa(e.in.ProjectA)+`,"underpaid_tolerance":"0.75","late_payments":"refund"}`, opKey)
	wantStatus(t, r, 200)
	if r.JSON["underpaid_tolerance"] != "0.75" || r.JSON["late_payments"] != "refund" {
		t.Errorf("set: %s", r.Body)
	}
	// Unset fields keep their value.
	r = e.postKey(t, path, `{"project_id":`+itoa(e.in.ProjectA)+`,"underpaid_tolerance":"0"}`, opKey)
	wantStatus(t, r, 200)
	if r.JSON["underpaid_tolerance"] != "0" || r.JSON["late_payments"] != "refund" {
		t.Errorf("set the tolerance only: %s", r.Body)
	}
	if list := e.in.Get(t, "/operator/project/list/", nil, opKey); !strings.Contains(string(list.Body), `"late_payments":"refund"`) {
		t.Errorf("list: %s", list.Body)
	}
}
