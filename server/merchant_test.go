package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/family"
	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/notification"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/servertest"
)

// webhook is one merchant webhook as the receiver got it, verified.
type webhook struct {
	method, event, id, timestamp string
	header                       http.Header
	fields                       map[string]json.RawMessage // JSON transport
	form                         url.Values                 // GET and form transports
}

// get returns a field as text, whatever the transport.
func (w webhook) get(name string) string {
	if w.fields != nil {
		raw := w.fields[name]
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	return w.form.Get(name)
}

// merchantSink verifies every webhook with the project's secrets and
// answers ok, or 500 while failing is set.
type merchantSink struct {
	*httptest.Server
	mu      sync.Mutex
	secrets []string
	now     func() time.Time // the verifier's clock; clock.Now when nil
	failing bool
	got     []webhook
	errs    []string
}

func newMerchantSink(t *testing.T) *merchantSink {
	s := &merchantSink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		now := s.now
		if now == nil {
			now = clock.Now
		}
		v := receiver.NewWebhookVerifier(s.secrets, receiver.WithClock(now))
		data, err := v.Verify(r)
		if err != nil {
			s.errs = append(s.errs, err.Error())
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		got := webhook{method: r.Method, event: r.Header.Get("x-service-event"), id: r.Header.Get("x-service-id"),
			timestamp: r.Header.Get("x-service-timestamp"), header: r.Header.Clone()}
		switch ct := r.Header.Get("Content-Type"); {
		case r.Method == http.MethodGet:
			got.form = r.URL.Query()
		case strings.HasPrefix(ct, "application/json"):
			if err := json.Unmarshal(data, &got.fields); err != nil {
				s.errs = append(s.errs, "JSON body: "+err.Error())
			}
		default:
			got.form, _ = url.ParseQuery(string(data))
		}
		s.got = append(s.got, got)
		if s.failing {
			http.Error(w, "down", 500)
			return
		}
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *merchantSink) take() ([]webhook, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got, errs := s.got, s.errs
	s.got, s.errs = nil, nil
	return got, errs
}

// merchantEnv is a --dev server whose operator allows the merchant sink.
type merchantEnv struct {
	*devEnv
	ms *merchantSink
}

func newMerchantEnv(t *testing.T, d store.Dialect, mutate ...func(*server.Config)) *merchantEnv {
	t.Helper()
	ms := newMerchantSink(t)
	e := newDevEnv(t, d, append([]func(*server.Config){func(c *server.Config) {
		c.Delivery.AllowPrivateEndpoints = append(c.Delivery.AllowPrivateEndpoints, servertest.AllowPrivate(ms.URL+"/merchant", servertest.A, servertest.B)...)
	}}, mutate...)...)
	p, err := e.in.Server.DB().Client.Project.Get(context.Background(), e.in.ProjectA)
	if err != nil {
		t.Fatal(err)
	}
	ms.secrets = []string{p.IpnSecret}
	return &merchantEnv{devEnv: e, ms: ms}
}

// wantJSONTypes checks the JSON type of each named field: "string",
// "number", "null" or "absent".
func wantJSONTypes(t *testing.T, w webhook, types map[string]string) {
	t.Helper()
	for name, want := range types {
		raw, ok := w.fields[name]
		got := "absent"
		if ok {
			switch {
			case bytes.Equal(raw, []byte("null")):
				got = "null"
			case len(raw) > 0 && raw[0] == '"':
				got = "string"
			default:
				got = "number"
			}
		}
		if got != want {
			t.Errorf("%s webhook: %s is %s (%s), want %s", w.event, name, got, raw, want)
		}
	}
}

// TestCheckoutEndToEnd: a checkout is requested, the customer gets a btc
// address with the amount at the held rate, pays it on the devnet, and the
// project's receiver gets checkout.payment.confirmed then completed, each
// signed with the project's IPN secret (Standard Webhooks construction),
// with the spec's field types and invoice_status paid; the logs show it
// all, and another project sees nothing of it.
func TestCheckoutEndToEnd(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			notify := e.ms.URL + "/merchant?order=7"
			r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100", "currency", "USD", "json", "1", "item_description", "a book"), e.in.KeyA)
			wantStatus(t, r, 200)
			id, _ := r.JSON["payment_id"].(string)
			if !strings.HasPrefix(id, "chk_") || r.JSON["success_token"] == "" || !strings.Contains(r.JSON["payment_url"].(string), id) {
				t.Fatalf("request: %s", r.Body)
			}
			a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn, valueCoin := a.JSON["address_in"].(string), a.JSON["value_coin"].(string)
			if addrIn == "" || valueCoin == "" || a.JSON["currency"] != "USD" || a.JSON["exchange_rate"] == "" {
				t.Fatalf("address: %s", a.Body)
			}
			// Asking again gives the same address and quote.
			if again := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA); again.JSON["address_in"] != addrIn || again.JSON["value_coin"] != valueCoin {
				t.Fatalf("address again: %s", again.Body)
			}
			// Another project: the same 404 as an unknown payment_id.
			other := e.in.Get(t, "/checkout/logs/", q("payment_id", id), e.in.KeyB)
			wantStatus(t, other, 404)
			wantStatus(t, e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyB), 404)

			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": valueCoin}), 200)
			e.mine(t, "btc", 1)
			if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatalf("webhooks that did not verify: %v", errs)
			}
			var events []string
			for _, w := range got {
				events = append(events, w.event)
				if w.get("event_type") != w.event || w.get("payment_id") != id || w.get("uuid") != w.id || w.method != http.MethodPost {
					t.Errorf("webhook %s: headers and payload disagree: %v", w.event, w.fields)
				}
				if w.get("invoice_status") != "paid" || w.get("value") != "100" || w.get("currency") != "USD" ||
					w.get("paid_coin") != "btc" || w.get("paid_amount") != valueCoin {
					t.Errorf("webhook %s: %v", w.event, w.fields)
				}
				types := map[string]string{"value": "string", "paid_amount": "string", "paid_amount_fiat": "string", "confirmations": "number",
					"invoice_status": "string", "payment_status": "string", "received_amount": "absent", "received_amount_fiat": "absent"}
				if w.event == "checkout.payment.completed" {
					types["received_amount"], types["received_amount_fiat"] = "string", "string"
				}
				wantJSONTypes(t, w, types)
			}
			if strings.Join(events, ",") != "checkout.payment.confirmed,checkout.payment.completed" {
				t.Fatalf("events %v", events)
			}

			l := e.in.Get(t, "/checkout/logs/", q("payment_id", id), e.in.KeyA)
			wantStatus(t, l, 200)
			var logs struct {
				InvoiceStatus string `json:"invoice_status"`
				Payments      []map[string]any
				Notifications []struct {
					UUID      string `json:"uuid"`
					EventType string `json:"event_type"`
					Status    string
					Logs      []map[string]any
				}
			}
			if err := json.Unmarshal(l.Body, &logs); err != nil {
				t.Fatal(err)
			}
			if logs.InvoiceStatus != "paid" || len(logs.Payments) != 1 || len(logs.Notifications) != 2 ||
				logs.Notifications[0].Status != "acknowledged" || len(logs.Notifications[1].Logs) != 1 {
				t.Fatalf("logs: %s", l.Body)
			}
		})
	}
}

// TestMerchantBadInput: every parameter error is a 400 naming the
// parameter, and nothing is stored.
func TestMerchantBadInput(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	notify := e.ms.URL + "/merchant"
	past := clock.Now().Add(-time.Hour).Unix()
	for _, c := range []struct {
		name, path string
		params     url.Values
		status     int
		want       string
	}{
		{"negative value", "/checkout/request/", q("notify_url", notify, "value", "-5"), 400, "value"},
		{"non-numeric value", "/checkout/request/", q("notify_url", notify, "value", "ten"), 400, "value"},
		{"too many decimals", "/checkout/request/", q("notify_url", notify, "value", "1.001"), 400, "value"},
		{"unknown currency", "/checkout/request/", q("notify_url", notify, "value", "1", "currency", "XYZ"), 400, "currency"},
		{"expire_at in the past", "/checkout/request/", q("notify_url", notify, "value", "1", "expire_at", strconv.FormatInt(past, 10)), 400, "expire_at"},
		{"private notify_url", "/checkout/request/", q("notify_url", "http://127.0.0.1:9/x", "value", "1"), 400, "notify_url"},
		{"malformed notify_url", "/checkout/request/", q("notify_url", "ftp://shop.example/x"), 400, "notify_url"},
		{"missing notify_url", "/deposit/request/", q("currency", "USD"), 400, "notify_url"},
		{"unknown payment_id", "/checkout/address/", q("payment_id", "chk_nope", "coin", "btc"), 404, "payment_id"},
		{"unknown payment_id in logs", "/deposit/logs/", q("payment_id", "dep_nope"), 404, "payment_id"},
	} {
		r := e.in.Get(t, c.path, c.params, e.in.KeyA)
		if r.Code != c.status || !strings.Contains(string(r.Body), c.want) || !strings.Contains(string(r.Body), `"status":"error"`) {
			t.Errorf("%s: HTTP %d %s, want %d naming %s", c.name, r.Code, r.Body, c.status, c.want)
		}
	}
	// A checkout exists; an unknown coin is named.
	r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "10"), e.in.KeyA)
	wantStatus(t, r, 200)
	id := r.JSON["payment_id"].(string)
	if r := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "nocoin"), e.in.KeyA); r.Code != 400 || !strings.Contains(string(r.Body), "coin") {
		t.Errorf("unknown coin: HTTP %d %s", r.Code, r.Body)
	}
	n, err := e.in.Server.DB().Client.Invoice.Query().Count(context.Background())
	if err != nil || n != 1 {
		t.Errorf("%d invoices stored, want only the valid one (%v)", n, err)
	}
	// The merchant paths are never read as ticker paths.
	for _, p := range []string{"/checkout/logs/", "/deposit/logs/"} {
		r := e.in.Get(t, p, nil, e.in.KeyA)
		if r.Code != 400 || strings.Contains(string(r.Body), "ticker") || strings.Contains(string(r.Body), "callback") {
			t.Errorf("%s without parameters: HTTP %d %s, want 400 naming payment_id", p, r.Code, r.Body)
		}
	}
}

// TestCustomPaymentCarriesMerchantHeaders: a low-level create with a
// project's key is a custom payment: its callbacks keep the low-level
// payload and x-ca-signature, and also carry the merchant headers, signed
// with the project's secret, with event custom.payment.<status>.
func TestCustomPaymentCarriesMerchantHeaders(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			r := e.in.Get(t, "/btc/create/", q("callback", e.ms.URL+"/merchant?custom=1", "json", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			addrIn := r.JSON["address_in"].(string)
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": "0.01"}), 200)
			e.mine(t, "btc", 1)
			got, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatalf("callbacks whose merchant signature did not verify: %v", errs)
			}
			var events []string
			for _, w := range got {
				events = append(events, w.event)
				if w.header.Get("x-ca-signature") == "" || w.get("address_in") != addrIn || w.get("uuid") != w.id || "custom.payment."+w.get("payment_status") != w.event {
					t.Errorf("custom callback %s: headers %v fields %v", w.event, w.header, w.fields)
				}
			}
			if strings.Join(events, ",") != "custom.payment.confirmed,custom.payment.completed" {
				t.Fatalf("events %v", events)
			}
		})
	}
}

// TestDepositRetriesAreSignedAnew: a deposit with form POST webhooks takes
// two payments of any amount; while the receiver fails, every retry (on the
// schedule, driven by the test clock) carries its own timestamp and a valid
// signature; after a secret rotation the next attempt verifies with the new
// secret and, during the grace, with the old one.
func TestDepositRetriesAreSignedAnew(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
			e := newMerchantEnv(t, d, func(c *server.Config) { c.Now = clk.Now })
			e.ms.now = clk.Now
			r := e.in.Get(t, "/deposit/request/", q("notify_url", e.ms.URL+"/merchant", "post", "1", "currency", "EUR"), e.in.KeyA)
			wantStatus(t, r, 200)
			id := r.JSON["payment_id"].(string)
			a := e.in.Get(t, "/deposit/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn := a.JSON["address_in"].(string)
			if a.JSON["value_coin"] != nil && a.JSON["value_coin"] != "" {
				t.Fatalf("a deposit quotes no amount: %s", a.Body)
			}

			e.ms.mu.Lock()
			e.ms.failing = true
			e.ms.mu.Unlock()
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": "0.01"}), 200)
			e.mine(t, "btc", 1)
			first, errs := e.ms.take()
			if len(errs) > 0 || len(first) == 0 {
				t.Fatalf("first attempts: %d, errors %v", len(first), errs)
			}
			w := first[0]
			if w.method != http.MethodPost || w.event != "deposit.payment.confirmed" || w.get("invoice_status") != "paid" ||
				w.get("currency") != "EUR" || w.form.Has("value") || w.get("paid_amount") != "0.01" || w.get("paid_amount_fiat") == "" {
				t.Fatalf("first deposit webhook %s %v", w.event, w.form)
			}

			// The retry after a minute: the same uuid and body, a new
			// timestamp, a valid signature.
			clk.Advance(time.Minute)
			if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
				t.Fatal(err)
			}
			retry, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatalf("retries that did not verify: %v", errs)
			}
			var again *webhook
			for i := range retry {
				if retry[i].id == w.id {
					again = &retry[i]
				}
			}
			if again == nil || again.timestamp == w.timestamp || again.get("paid_amount") != w.get("paid_amount") {
				t.Fatalf("retry of %s: %+v (first timestamp %s)", w.id, again, w.timestamp)
			}

			// Rotate: the next attempt verifies with the new secret alone,
			// and with the old one during the grace.
			secret, err := project.RotateSecret(context.Background(), e.in.Server.DB().Client, e.in.ProjectA, 24*time.Hour, clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			for _, secrets := range [][]string{{secret}, {e.ms.secrets[0]}} {
				e.ms.mu.Lock()
				old := e.ms.secrets
				e.ms.secrets = secrets
				e.ms.mu.Unlock()
				clk.Advance(5 * time.Minute)
				if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
					t.Fatal(err)
				}
				got, errs := e.ms.take()
				if len(errs) > 0 || len(got) == 0 {
					t.Fatalf("after rotation, verifying with %d secret(s): %d attempts, errors %v", len(secrets), len(got), errs)
				}
				e.ms.mu.Lock()
				e.ms.secrets = old
				e.ms.mu.Unlock()
				clk.Advance(10 * time.Minute)
			}

			// A second payment to the same deposit: another payment, its own
			// webhooks.
			e.ms.mu.Lock()
			e.ms.failing = false
			e.ms.secrets = []string{secret}
			e.ms.mu.Unlock()
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": "0.02"}), 200)
			e.mine(t, "btc", 1)
			l := e.in.Get(t, "/deposit/logs/", q("payment_id", id), e.in.KeyA)
			var logs struct {
				Payments []map[string]any
			}
			if err := json.Unmarshal(l.Body, &logs); err != nil || len(logs.Payments) != 2 {
				t.Fatalf("deposit logs: %s", l.Body)
			}
		})
	}
}

// TestPayoutWalletsReceiveUnaddressedFunds: with a payout wallet for btc,
// a low-level create without a forwarding address forwards to it, and so
// does a checkout's address; without one, a checkout's funds are held.
func TestPayoutWalletsReceiveUnaddressedFunds(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	btc, _ := family.DefaultRegistry().Lookup("btc")
	wallet, _ := destinations(t, btc)
	if err := admin.SetProjectWallet(context.Background(), e.in.DSN, "", e.in.ProjectA, "btc="+wallet); err != nil {
		t.Fatal(err)
	}
	r := e.in.Get(t, "/btc/create/", q("callback", e.ms.URL+"/merchant?low=1", "json", "1"), e.in.KeyA)
	wantStatus(t, r, 200)
	if out, _ := json.Marshal(r.JSON["address_out"]); string(out) != `{"`+wallet+`":1}` {
		t.Fatalf("address_out %s, want the project's wallet", out)
	}
	c := e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant", "value", "50", "json", "1"), e.in.KeyA)
	wantStatus(t, c, 200)
	a := e.in.Get(t, "/checkout/address/", q("payment_id", c.JSON["payment_id"].(string), "coin", "btc"), e.in.KeyA)
	wantStatus(t, a, 200)
	wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": a.JSON["value_coin"]}), 200)
	e.mine(t, "btc", 1)
	got, errs := e.ms.take()
	if len(errs) > 0 || len(got) != 2 || got[1].event != "checkout.payment.completed" || got[1].get("txid_out") == "" {
		t.Fatalf("checkout webhooks %v, errors %v; want completed with a forwarding txid", got, errs)
	}
	ch, _ := e.in.Server.Devnet().Chain("btc")
	fw := ch.Forwards()
	if len(fw) != 1 || !strings.Contains(fmt.Sprint(fw[0]), wallet) {
		t.Fatalf("forwards %v, want one to %s", fw, wallet)
	}
}

// TestDepositPaymentsBelowMinimumAreForwardedTogether: a deposit with a
// payout wallet takes two payments below btc's minimum transaction: both are
// credited and notified (deposit.payment.confirmed), neither is forwarded.
// A third payment makes the address's total forwardable: one forwarding
// transaction carries the three, and each payment gets exactly one
// completed webhook, with the one txid_out, whose received_amount values
// add up to what the transaction forwards. A low-level address still
// ignores a payment below the minimum.
func TestDepositPaymentsBelowMinimumAreForwardedTogether(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			btc, _ := family.DefaultRegistry().Lookup("btc")
			wallet, _ := destinations(t, btc)
			if err := admin.SetProjectWallet(context.Background(), e.in.DSN, "", e.in.ProjectA, "btc="+wallet); err != nil {
				t.Fatal(err)
			}
			r := e.in.Get(t, "/deposit/request/", q("notify_url", e.ms.URL+"/merchant", "json", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			a := e.in.Get(t, "/deposit/address/", q("payment_id", r.JSON["payment_id"].(string), "coin", "btc"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn := a.JSON["address_in"].(string)
			ch, _ := e.in.Server.Devnet().Chain("btc")
			pay := func(value string) []webhook {
				t.Helper()
				wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": value}), 200)
				e.mine(t, "btc", 1)
				got, errs := e.ms.take()
				if len(errs) > 0 {
					t.Fatalf("webhooks that did not verify: %v", errs)
				}
				return got
			}
			var txids []string
			for i, value := range []string{"0.00004", "0.00004"} {
				got := pay(value)
				if len(got) != 1 || got[0].event != "deposit.payment.confirmed" || got[0].get("paid_amount") != value {
					t.Fatalf("payment %d below the minimum: webhooks %v, want it confirmed", i+1, got)
				}
				txids = append(txids, got[0].get("txid_in"))
				if n := len(ch.Forwards()); n != 0 {
					t.Fatalf("payment %d below the minimum: %d forwards", i+1, n)
				}
			}

			// While they wait, the operator sees them among the held funds.
			funds, err := admin.HeldFunds(context.Background(), e.in.DSN, "")
			if err != nil || len(funds.GetTickers()) != 1 || funds.GetTickers()[0].GetTotal() != "0.00008" || funds.GetTickers()[0].GetPayments() != 2 {
				t.Fatalf("held funds while payments wait for the minimum: %v, %v", funds, err)
			}

			// A low-level address still ignores a payment below the minimum.
			low := e.in.Get(t, "/btc/create/", q("callback", e.ms.URL+"/merchant?low=1", "json", "1"), e.in.KeyA)
			wantStatus(t, low, 200)
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": low.JSON["address_in"], "value_coin": "0.00004"}), 200)
			e.mine(t, "btc", 1)
			if got, _ := e.ms.take(); len(got) != 0 || len(ch.Forwards()) != 0 {
				t.Fatalf("a low-level payment below the minimum: webhooks %v, forwards %v", got, ch.Forwards())
			}

			got := pay("0.00005")
			fw := ch.Forwards()
			if len(fw) != 1 || fw[0].From != addrIn || len(fw[0].Outputs) != 1 || fw[0].Outputs[0].Address != wallet {
				t.Fatalf("forwards %+v, want one from the deposit address to %s", fw, wallet)
			}
			completed := map[string]webhook{}
			var confirmed int
			for _, w := range got {
				switch w.event {
				case "deposit.payment.confirmed":
					confirmed++
				case "deposit.payment.completed":
					if _, dup := completed[w.get("txid_in")]; dup {
						t.Fatalf("two completed webhooks for %s", w.get("txid_in"))
					}
					completed[w.get("txid_in")] = w
				default:
					t.Fatalf("webhook %s", w.event)
				}
			}
			if confirmed != 1 || len(completed) != 3 {
				t.Fatalf("webhooks %v: want the third confirmed and the three completed", got)
			}
			sum := decimal.Zero
			for _, w := range completed {
				if w.get("txid_out") == "" || w.get("txid_out") != completed[txids[0]].get("txid_out") {
					t.Fatalf("completed webhook %v: want the one forwarding txid", w.fields)
				}
				recv, err := decimal.NewFromString(w.get("received_amount"))
				if err != nil || !recv.IsPositive() {
					t.Fatalf("received_amount %q", w.get("received_amount"))
				}
				sum = sum.Add(recv)
			}
			for _, id := range txids {
				if _, ok := completed[id]; !ok {
					t.Fatalf("no completed webhook for the held payment %s", id)
				}
			}
			if !sum.Equal(fw[0].Outputs[0].Amount) {
				t.Fatalf("received amounts add up to %s, the forward sends %s", sum, fw[0].Outputs[0].Amount)
			}

			// Nothing more, however many blocks follow.
			e.mine(t, "btc", 2)
			if got, _ := e.ms.take(); len(got) != 0 || len(ch.Forwards()) != 1 {
				t.Fatalf("after more blocks: webhooks %v, %d forwards", got, len(ch.Forwards()))
			}
		})
	}
}

// TestResendRules drives POST /notification/resend/ on the test clock:
// within the 48-hour window a resend makes one immediate attempt and the
// schedule continues after a failure with the deadline unchanged; after the
// deadline each resend makes exactly one attempt, and the notification
// stays failed unless that attempt is acknowledged. Every attempt carries a
// valid signature of its own time. Another project's key gets 404, and
// /notification/list/ shows the project's notifications only.
func TestResendRules(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
			e := newMerchantEnv(t, d, func(c *server.Config) { c.Now = clk.Now })
			e.ms.now = clk.Now
			e.ms.failing = true
			run := func() {
				t.Helper()
				if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			resend := func(key, id string, asQuery bool) servertest.Response {
				t.Helper()
				path, body := "/notification/resend/", `{"uuid":"`+id+`"}`
				if asQuery {
					path, body = path+"?uuid="+id, ""
				}
				req, _ := http.NewRequest(http.MethodPost, e.in.BaseURL+path, strings.NewReader(body))
				req.Header.Set("apikey", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				r := servertest.Response{Code: resp.StatusCode, Body: raw}
				_ = json.Unmarshal(raw, &r.JSON)
				return r
			}
			c := e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant", "value", "20", "json", "1"), e.in.KeyA)
			wantStatus(t, c, 200)
			a := e.in.Get(t, "/checkout/address/", q("payment_id", c.JSON["payment_id"].(string), "coin", "btc"), e.in.KeyA)
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": a.JSON["value_coin"]}), 200)
			e.mine(t, "btc", 1)
			got, errs := e.ms.take()
			if len(errs) > 0 || len(got) != 2 {
				t.Fatalf("first attempts %d, errors %v", len(got), errs)
			}
			id := got[0].id
			row := func() *entdb.Notification {
				t.Helper()
				n, err := e.in.Server.DB().Client.Notification.Query().Where(notification.UUID(id)).Only(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			deadline := row().ExpiresAt

			// Another project's key: 404, and nothing is scheduled.
			wantStatus(t, resend(e.in.KeyB, id, false), 404)

			// Within the window: one immediate attempt, the schedule goes on.
			clk.Advance(10 * time.Second)
			r := resend(e.in.KeyA, id, true)
			wantStatus(t, r, 200)
			run()
			if got, _ := e.ms.take(); len(got) != 1 || got[0].id != id || got[0].timestamp == "" {
				t.Fatalf("resend within the window: %d attempts, want 1", len(got))
			}
			n := row()
			if n.Attempts != 2 || n.Status.String() != "retrying" || n.NextAttemptAt == nil || !n.ExpiresAt.Equal(deadline) {
				t.Fatalf("after a failed resend within the window: %+v", n)
			}
			clk.Advance(time.Minute)
			run()
			if got, _ := e.ms.take(); len(got) == 0 {
				t.Fatalf("the schedule did not continue after the resend")
			}

			// After the deadline: failed; each resend is exactly one attempt.
			clk.Advance(49 * time.Hour)
			run()
			e.ms.take()
			if n := row(); n.Status.String() != "failed" || n.NextAttemptAt != nil {
				t.Fatalf("past the deadline: %+v", n)
			}
			before := row().Attempts
			wantStatus(t, resend(e.in.KeyA, id, false), 200)
			run()
			clk.Advance(4 * time.Hour)
			run()
			if got, errs := e.ms.take(); len(got) != 1 || len(errs) > 0 {
				t.Fatalf("resend after the deadline: %d attempts (%v), want exactly 1", len(got), errs)
			}
			if n := row(); n.Status.String() != "failed" || n.Attempts != before+1 || !n.ExpiresAt.Equal(deadline) {
				t.Fatalf("after a failed late resend: %+v", n)
			}
			e.ms.mu.Lock()
			e.ms.failing = false
			e.ms.mu.Unlock()
			wantStatus(t, resend(e.in.KeyA, id, false), 200)
			run()
			if got, _ := e.ms.take(); len(got) != 1 {
				t.Fatalf("second late resend: %d attempts", len(got))
			}
			if n := row(); n.Status.String() != "acknowledged" {
				t.Fatalf("an acknowledged late resend left %s", n.Status)
			}

			// The list shows the project's notifications, filtered; another
			// project sees none of them.
			l := e.in.Get(t, "/notification/list/", q("status", "acknowledged"), e.in.KeyA)
			wantStatus(t, l, 200)
			if !strings.Contains(string(l.Body), id) {
				t.Fatalf("list: %s", l.Body)
			}
			// Each listed notification carries its attempts, oldest first.
			for _, it := range l.JSON["notifications"].([]any) {
				ln := it.(map[string]any)
				if ln["uuid"] != id {
					continue
				}
				logs, _ := ln["logs"].([]any)
				if len(logs) != row().Attempts || len(logs) < 2 {
					t.Fatalf("list: %d attempts of %s listed, %d made: %v", len(logs), id, row().Attempts, ln)
				}
				first, last := logs[0].(map[string]any), logs[len(logs)-1].(map[string]any)
				if first["attempt"].(float64) != 1 || first["outcome"] != "failed" || last["outcome"] != "acknowledged" {
					t.Fatalf("list: attempts %v", logs)
				}
			}
			if l := e.in.Get(t, "/notification/list/", nil, e.in.KeyB); strings.Contains(string(l.Body), id) {
				t.Fatalf("another project lists %s: %s", id, l.Body)
			}
			wantStatus(t, e.in.Get(t, "/notification/list/", q("status", "lost"), e.in.KeyA), 400)

			// A test webhook reaches the receiver, signed.
			tr, _ := http.NewRequest(http.MethodPost, e.in.BaseURL+"/notification/test/?url="+url.QueryEscape(e.ms.URL+"/merchant"), nil)
			tr.Header.Set("apikey", e.in.KeyA)
			resp, err := http.DefaultClient.Do(tr)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("test webhook: %v %v", resp, err)
			}
			resp.Body.Close()
			run()
			if got, errs := e.ms.take(); len(got) != 1 || got[0].event != "test.webhook" || len(errs) > 0 {
				t.Fatalf("test webhook: %v %v", got, errs)
			}
		})
	}
}

// TestProjectIsolation: for every endpoint that names a project's object,
// another project's key gets the same 404 as for an id that does not
// exist, so ids leak nothing.
func TestProjectIsolation(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	notify := e.ms.URL + "/merchant"
	chk := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "100"), e.in.KeyA).JSON["payment_id"].(string)
	dep := e.in.Get(t, "/deposit/request/", q("notify_url", notify), e.in.KeyA).JSON["payment_id"].(string)
	sub := e.in.Get(t, "/subscription/create/", q("notify_url", notify, "option", "1m:100.00"), e.in.KeyA).JSON["token"].(string)
	wantStatus(t, e.in.Get(t, "/btc/create/", q("callback", notify+"?low=1"), e.in.KeyA), 200)
	for _, c := range []struct {
		path          string
		mine, unknown url.Values
	}{
		{"/checkout/logs/", q("payment_id", chk), q("payment_id", "chk_unknown")},
		{"/checkout/address/", q("payment_id", chk, "coin", "btc"), q("payment_id", "chk_unknown", "coin", "btc")},
		{"/deposit/logs/", q("payment_id", dep), q("payment_id", "dep_unknown")},
		{"/deposit/address/", q("payment_id", dep, "coin", "btc"), q("payment_id", "dep_unknown", "coin", "btc")},
		{"/subscription/fetch/", q("token", sub), q("token", "sub_unknown")},
		{"/subscription/address/", q("token", sub, "coin", "btc", "option", "1m"), q("token", "sub_unknown", "coin", "btc", "option", "1m")},
		{"/btc/logs/", q("callback", notify+"?low=1"), q("callback", notify+"?low=2")},
	} {
		if r := e.in.Get(t, c.path, c.mine, e.in.KeyA); r.Code != 200 {
			t.Errorf("%s: the owner gets HTTP %d %s", c.path, r.Code, r.Body)
			continue
		}
		other := e.in.Get(t, c.path, c.mine, e.in.KeyB)
		unknown := e.in.Get(t, c.path, c.unknown, e.in.KeyB)
		same := string(other.Body)
		for k := range c.mine {
			same = strings.ReplaceAll(same, c.mine.Get(k), c.unknown.Get(k))
		}
		if other.Code != 404 || unknown.Code != 404 || same != string(unknown.Body) {
			t.Errorf("%s: another project gets HTTP %d %s; an unknown id HTTP %d %s", c.path, other.Code, other.Body, unknown.Code, unknown.Body)
		}
	}
	if r := e.in.Get(t, "/subscription/list/", nil, e.in.KeyB); strings.Contains(string(r.Body), sub) {
		t.Errorf("another project lists the subscription: %s", r.Body)
	}
}

// TestCheckoutGETWebhooks: with neither post nor json the webhooks are GET
// requests whose signed data is the full URL, the notify_url's own query
// kept, every value text; an open amount has no value field (null has no
// text form) and is paid by any confirmed payment.
func TestCheckoutGETWebhooks(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	c := e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant?order=9"), e.in.KeyA)
	wantStatus(t, c, 200)
	a := e.in.Get(t, "/checkout/address/", q("payment_id", c.JSON["payment_id"].(string), "coin", "ltc"), e.in.KeyA)
	wantStatus(t, a, 200)
	if a.JSON["value_coin"] != nil && a.JSON["value_coin"] != "" {
		t.Fatalf("an open amount quotes no value: %s", a.Body)
	}
	wantStatus(t, e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": "0.5"}), 200)
	e.mine(t, "ltc", 6)
	got, errs := e.ms.take()
	if len(errs) > 0 || len(got) == 0 {
		t.Fatalf("%d webhooks, errors %v", len(got), errs)
	}
	for _, w := range got {
		if w.method != http.MethodGet || w.form.Get("order") != "9" || w.form.Has("value") || w.form.Get("paid_coin") != "ltc" ||
			w.form.Get("paid_amount") != "0.5" || w.form.Get("confirmations") == "" || w.form.Get("event_type") != w.event {
			t.Errorf("GET webhook %s: %v", w.event, w.form)
		}
	}
	last := got[len(got)-1]
	if last.event != "checkout.payment.completed" || last.form.Get("invoice_status") != "paid" || last.form.Get("received_amount") == "" {
		t.Errorf("last GET webhook %s: %v", last.event, last.form)
	}
}

// TestProjectServiceOverREST: an operator creates a project over REST with
// accepted coins and default confirmations; its key is refused other coins
// (low-level and checkout alike) and gets the project's confirmations; a
// merchant's key may not call the ProjectService.
func TestProjectServiceOverREST(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	opKey, _, err := apikey.CreateOperator(context.Background(), e.in.Server.DB().Client, "ops", clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The new project has no private endpoint (the operator's exceptions
	// name projects that exist at start): its webhooks go to a public URL,
	// which nothing calls here (delivery is manual).
	const shopHook = "https://shop.example/merchant"
	body := `{"name":"only btc","currency":"EUR","tickers":["btc"],"confirmations":["btc=3"]}`
	wantStatus(t, e.postKey(t, "/operator/project/create/", body, e.in.KeyA), 403)
	r := e.postKey(t, "/operator/project/create/", body, opKey)
	wantStatus(t, r, 200)
	key, _ := r.JSON["apikey"].(string)
	if !strings.HasPrefix(key, "ph_") || !strings.HasPrefix(r.JSON["ipn_secret"].(string), "whsec_") {
		t.Fatalf("create: %s", r.Body)
	}
	c := e.in.Get(t, "/btc/create/", q("callback", shopHook+"?p=2"), key)
	wantStatus(t, c, 200)
	if c.JSON["required_confirmations"].(float64) != 3 {
		t.Errorf("required_confirmations %v, want the project's 3", c.JSON["required_confirmations"])
	}
	if r := e.in.Get(t, "/eth/create/", q("callback", shopHook+"?p=2"), key); r.Code != 400 || !strings.Contains(string(r.Body), "does not accept eth") {
		t.Errorf("a coin the project does not accept: HTTP %d %s", r.Code, r.Body)
	}
	chk := e.in.Get(t, "/checkout/request/", q("notify_url", shopHook, "value", "100"), key)
	wantStatus(t, chk, 200)
	if r := e.in.Get(t, "/checkout/address/", q("payment_id", chk.JSON["payment_id"].(string), "coin", "eth"), key); r.Code != 400 || !strings.Contains(string(r.Body), "coin") {
		t.Errorf("checkout in a coin the project does not accept: HTTP %d %s", r.Code, r.Body)
	}
	list := e.in.Get(t, "/operator/project/list/", nil, opKey)
	wantStatus(t, list, 200)
	if !strings.Contains(string(list.Body), `"only btc"`) || strings.Contains(string(list.Body), "whsec_") {
		t.Errorf("list: %s", list.Body)
	}
}

// postKey POSTs a JSON body with an API key.
func (e *devEnv) postKey(t *testing.T, path, body, key string) servertest.Response {
	t.Helper()
	return e.in.PostJSON(t, path, body, key)
}

// TestDepositStagesPerFamily: merchant webhooks follow the states table:
// Solana emits confirmed and completed only (confirmations 1), TRON emits
// pending below its depth and completes only after distribution's depth.
func TestDepositStagesPerFamily(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		coin, value string
		steps       []int
		want        string
	}{
		{"sol", "1.5", []int{1, 1, 1}, "deposit.payment.confirmed,deposit.payment.completed"},
		{"trx", "250", []int{4, 1, 17, 1}, "deposit.payment.pending,deposit.payment.confirmed,deposit.payment.completed"},
	} {
		t.Run(c.coin, func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, store.SQLite)
			// TRX: the project's default of 5 confirmations, as the
			// low-level per-family test asks.
			if _, err := e.in.Server.DB().Client.Project.UpdateOneID(e.in.ProjectA).SetConfirmations(map[string]int32{"trx": 5}).Save(context.Background()); err != nil {
				t.Fatal(err)
			}
			r := e.in.Get(t, "/deposit/request/", q("notify_url", e.ms.URL+"/merchant", "json", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			a := e.in.Get(t, "/deposit/address/", q("payment_id", r.JSON["payment_id"].(string), "coin", c.coin), e.in.KeyA)
			wantStatus(t, a, 200)
			wantStatus(t, e.post(t, "/devnet/"+c.coin+"/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": c.value}), 200)
			for _, n := range c.steps {
				e.mine(t, c.coin, n)
			}
			got, errs := e.ms.take()
			var events []string
			for _, w := range got {
				if len(events) == 0 || events[len(events)-1] != w.event {
					events = append(events, w.event)
				}
				if c.coin == "sol" && string(w.fields["confirmations"]) != "1" {
					t.Errorf("solana %s: confirmations %s, want 1", w.event, w.fields["confirmations"])
				}
			}
			if len(errs) > 0 || strings.Join(events, ",") != c.want {
				t.Fatalf("events %v (errors %v), want %s", events, errs, c.want)
			}
		})
	}
}

// TestHugeAmountsAreNamed: amounts that would not fit the money columns are
// refused by name (a 400), never a 500: an invoice value, a subscription
// option, and a quote in a cheap coin of a large value.
func TestHugeAmountsAreNamed(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			notify := e.ms.URL + "/merchant"
			if r := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "1"+strings.Repeat("0", 25)), e.in.KeyA); r.Code != 400 || !strings.Contains(string(r.Body), "value") {
				t.Errorf("huge value: HTTP %d %s", r.Code, r.Body)
			}
			if r := e.in.Get(t, "/subscription/create/", q("notify_url", notify, "option", "1m:1"+strings.Repeat("0", 25)), e.in.KeyA); r.Code != 400 || !strings.Contains(string(r.Body), "option") {
				t.Errorf("huge option: HTTP %d %s", r.Code, r.Body)
			}
			c := e.in.Get(t, "/checkout/request/", q("notify_url", notify, "value", "999999999999.99"), e.in.KeyA)
			wantStatus(t, c, 200)
			for _, coin := range []string{"trx", "doge", "trc20_usdt", "btc"} {
				if a := e.in.Get(t, "/checkout/address/", q("payment_id", c.JSON["payment_id"].(string), "coin", coin), e.in.KeyA); a.Code >= 500 {
					t.Errorf("%s: HTTP %d %s", coin, a.Code, a.Body)
				}
			}
		})
	}
}

// TestLogsRoundFiatToTheCurrency: fiat amounts in the logs are rounded to
// the currency's minor unit (JPY has none), as in the webhooks.
func TestLogsRoundFiatToTheCurrency(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	c := e.in.Get(t, "/checkout/request/", q("notify_url", e.ms.URL+"/merchant", "value", "15000", "currency", "JPY", "json", "1"), e.in.KeyA)
	wantStatus(t, c, 200)
	id := c.JSON["payment_id"].(string)
	a := e.in.Get(t, "/checkout/address/", q("payment_id", id, "coin", "btc"), e.in.KeyA)
	wantStatus(t, a, 200)
	wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": "0.001234"}), 200)
	e.mine(t, "btc", 1)
	got, _ := e.ms.take()
	l := e.in.Get(t, "/checkout/logs/", q("payment_id", id), e.in.KeyA)
	wantStatus(t, l, 200)
	var logs struct {
		PaidAmountFiat string `json:"paid_amount_fiat"`
		Payments       []struct {
			PaidAmountFiat string `json:"paid_amount_fiat"`
		}
	}
	if err := json.Unmarshal(l.Body, &logs); err != nil || len(logs.Payments) != 1 || len(got) == 0 {
		t.Fatalf("logs %s (%v), %d webhooks", l.Body, err, len(got))
	}
	for _, v := range []string{logs.PaidAmountFiat, logs.Payments[0].PaidAmountFiat, got[0].get("paid_amount_fiat")} {
		if v == "" || strings.Contains(v, ".") {
			t.Errorf("a JPY amount %q, want whole yen (logs %s)", v, l.Body)
		}
	}
}
