package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
)

// subView is a subscription as fetch and list answer it; value and
// received_fiat stay raw to check their JSON types.
type subView struct {
	Token       string `json:"token"`
	Status      string `json:"status"`
	ExpiresAt   any    `json:"expires_at"`
	Currency    string `json:"currency"`
	Customer    string `json:"customer"`
	Options     []struct{ Period, Value string }
	PaymentList []struct {
		PaymentID    string          `json:"payment_id"`
		Option       string          `json:"option"`
		Value        json.RawMessage `json:"value"`
		ReceivedFiat json.RawMessage `json:"received_fiat"`
		Coin         string          `json:"coin"`
		Txid         string          `json:"txid"`
		Status       string          `json:"status"`
		Time         any             `json:"time"`
	} `json:"payment_list"`
}

func unixOf(t *testing.T, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatalf("not unix seconds: %v", v)
	}
	return n
}

func fetchSub(t *testing.T, e *merchantEnv, token string) subView {
	t.Helper()
	r := e.in.Get(t, "/subscription/fetch/", q("token", token), e.in.KeyA)
	wantStatus(t, r, 200)
	var out struct{ Subscription subView }
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Subscription
}

// TestSubscriptionEndToEnd: a subscription with two options is created, the
// customer gets a btc address for a renewal of option 1m and pays it on the
// devnet; the project's receiver verifies subscription.payment.confirmed
// then completed, with the spec's JSON types (amounts are numbers); the
// subscription becomes active until the paid time plus one month; fetch
// and list show the renewal with value and received_fiat as strings; the
// paid renewal is not reused; another project sees nothing of it.
func TestSubscriptionEndToEnd(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			clk := clock.NewManual(time.Date(2026, 1, 31, 9, 0, 0, 0, time.UTC))
			e := newMerchantEnv(t, d, func(c *server.Config) { c.Now = clk.Now })
			e.ms.now = clk.Now
			r := e.in.Get(t, "/subscription/create/", q("notify_url", e.ms.URL+"/merchant?plan=gold", "currency", "USD",
				"option", "1m:50.00", "option", "12m:500.00", "customer", "cust-42", "json", "1"), e.in.KeyA)
			wantStatus(t, r, 200)
			token, _ := r.JSON["token"].(string)
			if !strings.HasPrefix(token, "sub_") || !strings.Contains(fmt.Sprint(r.JSON["subscription_url"]), token) {
				t.Fatalf("create: %s", r.Body)
			}
			if s := fetchSub(t, e, token); s.Status != "pending" || unixOf(t, s.ExpiresAt) != 0 || len(s.PaymentList) != 0 ||
				s.Customer != "cust-42" || len(s.Options) != 2 || s.Options[0].Period != "1m" || s.Options[1].Value != "500" {
				t.Fatalf("new subscription: %+v", s)
			}

			a := e.in.Get(t, "/subscription/address/", q("token", token, "coin", "btc", "option", "1m"), e.in.KeyA)
			wantStatus(t, a, 200)
			addrIn, valueCoin, renewal := a.JSON["address_in"].(string), a.JSON["value_coin"].(string), a.JSON["payment_id"].(string)
			if addrIn == "" || valueCoin == "" || a.JSON["currency"] != "USD" || a.JSON["option"] != "1m" || a.JSON["value"] != "50" ||
				a.JSON["exchange_rate"] == "" || !strings.HasPrefix(renewal, "ren_") {
				t.Fatalf("address: %s", a.Body)
			}
			// Asking again: the same open renewal, address and quote.
			again := e.in.Get(t, "/subscription/address", q("token", token, "coin", "btc", "option", "1m"), e.in.KeyA)
			if again.JSON["address_in"] != addrIn || again.JSON["payment_id"] != renewal || again.JSON["value_coin"] != valueCoin {
				t.Fatalf("address again: %s", again.Body)
			}
			// Another project: the same 404 as an unknown token.
			for _, p := range []struct {
				path string
				v    url.Values
			}{
				{"/subscription/fetch/", q("token", token)},
				{"/subscription/address/", q("token", token, "coin", "btc", "option", "1m")},
			} {
				r := e.in.Get(t, p.path, p.v, e.in.KeyB)
				if r.Code != 404 || !strings.Contains(string(r.Body), "token") {
					t.Errorf("%s with another project's key: HTTP %d %s", p.path, r.Code, r.Body)
				}
			}
			if l := e.in.Get(t, "/subscription/list/", nil, e.in.KeyB); l.Code != 200 || strings.Contains(string(l.Body), token) {
				t.Errorf("another project's list: %s", l.Body)
			}

			paidAt := clk.Now()
			wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": addrIn, "value_coin": valueCoin}), 200)
			e.mine(t, "btc", 1)
			got, errs := e.ms.take()
			if len(errs) > 0 {
				t.Fatalf("webhooks that did not verify: %v", errs)
			}
			var events []string
			paidFiat := ""
			for _, w := range got {
				events = append(events, w.event)
				if w.get("event_type") != w.event || w.get("uuid") != w.id || w.method != http.MethodPost || w.get("token") != token ||
					w.get("payment_id") != renewal || w.get("subscription_option") != "1m" {
					t.Errorf("webhook %s: headers and payload disagree: %v", w.event, w.fields)
				}
				if w.get("invoice_status") != "paid" || w.get("subscription_option_value") != "50" || w.get("payment_currency") != "USD" ||
					w.get("payment_paid_coin") != "btc" || w.get("payment_paid_amount") != valueCoin || w.get("txid_in") == "" {
					t.Errorf("webhook %s: %v", w.event, w.fields)
				}
				paidFiat = w.get("payment_paid_amount_fiat")
				types := map[string]string{
					"subscription_option_value": "number", "payment_paid_amount": "number", "payment_paid_amount_fiat": "number",
					"payment_received_amount": "absent", "payment_received_amount_fiat": "absent", "payment_value": "absent",
					"confirmations": "number", "token": "string", "uuid": "string", "event_type": "string",
					"payment_status": "string", "invoice_status": "string", "txid_in": "string",
					"payment_currency": "string", "payment_paid_coin": "string",
				}
				if w.event == "subscription.payment.completed" {
					types["payment_received_amount"], types["payment_received_amount_fiat"] = "number", "number"
				}
				wantJSONTypes(t, w, types)
			}
			if strings.Join(events, ",") != "subscription.payment.confirmed,subscription.payment.completed" {
				t.Fatalf("events %v", events)
			}

			s := fetchSub(t, e, token)
			wantEnd := time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC) // Jan 31 + 1m, as time.AddDate normalises
			if !paidAt.AddDate(0, 1, 0).Equal(wantEnd) || s.Status != "active" || unixOf(t, s.ExpiresAt) != wantEnd.Unix() {
				t.Fatalf("paid subscription: status %s expires_at %v, want active until %s", s.Status, s.ExpiresAt, wantEnd)
			}
			if len(s.PaymentList) != 1 {
				t.Fatalf("payment_list: %+v", s.PaymentList)
			}
			p := s.PaymentList[0]
			if string(p.Value) != `"50"` || string(p.ReceivedFiat) != strconv.Quote(paidFiat) || p.Coin != "btc" || p.Txid == "" ||
				p.Status != "paid" || p.PaymentID != renewal || p.Option != "1m" || unixOf(t, p.Time) != paidAt.Unix() {
				t.Fatalf("payment_list[0]: %+v (value %s, received_fiat %s; webhook paid fiat %s)", p, p.Value, p.ReceivedFiat, paidFiat)
			}

			// A paid renewal is never reused: the next one is new.
			next := e.in.Get(t, "/subscription/address/", q("token", token, "coin", "btc", "option", "1m"), e.in.KeyA)
			wantStatus(t, next, 200)
			if next.JSON["payment_id"] == renewal || next.JSON["address_in"] == addrIn {
				t.Fatalf("paid renewal reused: %s", next.Body)
			}

			// Time passes beyond the paid month: expired.
			clk.Advance(wantEnd.Sub(clk.Now()))
			if s := fetchSub(t, e, token); s.Status != "expired" {
				t.Fatalf("after the paid month: %s", s.Status)
			}

			// List: newest first, paged.
			r2 := e.in.Get(t, "/subscription/create/", q("notify_url", e.ms.URL+"/merchant", "option", "1w:2.50"), e.in.KeyA)
			wantStatus(t, r2, 200)
			l := e.in.Get(t, "/subscription/list/", q("limit", "1"), e.in.KeyA)
			wantStatus(t, l, 200)
			var page struct {
				Subscriptions []subView
				NextCursor    string `json:"next_cursor"`
			}
			if err := json.Unmarshal(l.Body, &page); err != nil || len(page.Subscriptions) != 1 || page.Subscriptions[0].Token != r2.JSON["token"] || page.NextCursor == "" {
				t.Fatalf("list page 1: %s", l.Body)
			}
			l = e.in.Get(t, "/subscription/list/", q("limit", "1", "cursor", page.NextCursor), e.in.KeyA)
			wantStatus(t, l, 200)
			page.NextCursor = "x"
			if err := json.Unmarshal(l.Body, &page); err != nil || len(page.Subscriptions) != 1 || page.Subscriptions[0].Token != token ||
				page.NextCursor != "" || len(page.Subscriptions[0].PaymentList) != 1 || string(page.Subscriptions[0].PaymentList[0].Value) != `"50"` {
				t.Fatalf("list page 2: %s", l.Body)
			}
		})
	}
}

// TestSubscriptionGETWebhooks: without post or json the renewal webhooks
// are GETs whose values are all text, the notify_url's own query kept.
func TestSubscriptionGETWebhooks(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	r := e.in.Get(t, "/subscription/create/", q("notify_url", e.ms.URL+"/merchant?shop=1", "option", "1m:50", "currency", "EUR"), e.in.KeyA)
	wantStatus(t, r, 200)
	token := r.JSON["token"].(string)
	a := e.in.Get(t, "/subscription/address/", q("token", token, "coin", "btc", "option", "1m"), e.in.KeyA)
	wantStatus(t, a, 200)
	wantStatus(t, e.post(t, "/devnet/btc/pay/", map[string]any{"address_in": a.JSON["address_in"], "value_coin": a.JSON["value_coin"]}), 200)
	e.mine(t, "btc", 1)
	got, errs := e.ms.take()
	if len(errs) > 0 || len(got) != 2 {
		t.Fatalf("%d webhooks, errors %v", len(got), errs)
	}
	for _, w := range got {
		if w.method != http.MethodGet || w.form.Get("shop") != "1" || w.form.Get("token") != token || w.form.Get("payment_currency") != "EUR" ||
			w.form.Get("subscription_option_value") != "50" || w.form.Get("payment_paid_amount") != a.JSON["value_coin"] {
			t.Errorf("GET webhook %s: %v", w.event, w.form)
		}
		names := []string{"subscription_option_value", "payment_paid_amount", "payment_paid_amount_fiat", "confirmations"}
		if w.event == "subscription.payment.completed" {
			names = append(names, "payment_received_amount", "payment_received_amount_fiat")
		}
		for _, n := range names {
			if v := w.form.Get(n); v == "" || strings.ContainsAny(v, `"{}`) {
				t.Errorf("GET webhook %s: %s is %q, want the number as text", w.event, n, v)
			}
		}
	}
	if s := fetchSub(t, e, token); len(s.PaymentList) != 1 || string(s.PaymentList[0].ReceivedFiat) != strconv.Quote(got[0].form.Get("payment_paid_amount_fiat")) {
		t.Fatalf("payment_list: %+v", s.PaymentList)
	}
	// A credited payment whose valuation is unknown: received_fiat is
	// null (no fallback in the history), value still the requested amount.
	db := e.in.Server.DB().Client
	if err := db.Payment.Update().ClearValueFiat().Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := e.in.Get(t, "/subscription/fetch/", q("token", token), e.in.KeyA)
	wantStatus(t, f, 200)
	var raw struct {
		Subscription struct {
			PaymentList []map[string]json.RawMessage `json:"payment_list"`
		}
	}
	if err := json.Unmarshal(f.Body, &raw); err != nil || len(raw.Subscription.PaymentList) != 1 {
		t.Fatalf("fetch: %s", f.Body)
	}
	if p := raw.Subscription.PaymentList[0]; string(p["value"]) != `"50"` || string(p["received_fiat"]) != "null" || string(p["status"]) != `"paid"` {
		t.Fatalf("fetch with an unknown valuation: %s", f.Body)
	}
}

// TestSubscriptionBadInput: every parameter error is a 4xx naming the
// parameter, and nothing is stored.
func TestSubscriptionBadInput(t *testing.T) {
	t.Parallel()
	e := newMerchantEnv(t, store.SQLite)
	notify := e.ms.URL + "/merchant"
	many := []string{"notify_url", notify}
	for i := 1; i <= 21; i++ {
		many = append(many, "option", fmt.Sprintf("%dd:1", i))
	}
	for _, c := range []struct {
		name   string
		params url.Values
		want   string
	}{
		{"no option", q("notify_url", notify), "option"},
		{"period syntax", q("notify_url", notify, "option", "1x:10"), "option"},
		{"no colon", q("notify_url", notify, "option", "1m"), "option"},
		{"zero value", q("notify_url", notify, "option", "1m:0"), "option"},
		{"negative value", q("notify_url", notify, "option", "1m:-5"), "option"},
		{"non-numeric value", q("notify_url", notify, "option", "1m:ten"), "option"},
		{"duplicate period", q("notify_url", notify, "option", "1m:10", "option", "1m:12"), "option"},
		{"more than 20", q(many...), "option"},
		{"unknown currency", q("notify_url", notify, "option", "1m:10", "currency", "XYZ"), "currency"},
		{"private notify_url", q("notify_url", "http://127.0.0.1:9/x", "option", "1m:10"), "notify_url"},
		{"malformed notify_url", q("notify_url", "ftp://shop.example/x", "option", "1m:10"), "notify_url"},
		{"missing notify_url", q("option", "1m:10"), "notify_url"},
	} {
		r := e.in.Get(t, "/subscription/create/", c.params, e.in.KeyA)
		if r.Code != 400 || !strings.Contains(string(r.Body), c.want) || !strings.Contains(string(r.Body), `"status":"error"`) {
			t.Errorf("%s: HTTP %d %s, want 400 naming %s", c.name, r.Code, r.Body, c.want)
		}
	}
	r := e.in.Get(t, "/subscription/create/", q("notify_url", notify, "option", "1m:10"), e.in.KeyA)
	wantStatus(t, r, 200)
	token := r.JSON["token"].(string)
	for _, c := range []struct {
		name, path string
		params     url.Values
		status     int
		want       string
	}{
		{"unknown token", "/subscription/address/", q("token", "sub_nope", "coin", "btc", "option", "1m"), 404, "token"},
		{"unknown token in fetch", "/subscription/fetch/", q("token", "sub_nope"), 404, "token"},
		{"unknown option", "/subscription/address/", q("token", token, "coin", "btc", "option", "12m"), 400, "option"},
		{"unknown coin", "/subscription/address/", q("token", token, "coin", "nocoin", "option", "1m"), 400, "coin"},
		{"missing option", "/subscription/address/", q("token", token, "coin", "btc"), 400, "option"},
		{"bad cursor", "/subscription/list/", q("cursor", "abc"), 400, "cursor"},
		{"limit too large", "/subscription/list/", q("limit", "501"), 400, "limit"},
	} {
		r := e.in.Get(t, c.path, c.params, e.in.KeyA)
		if r.Code != c.status || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: HTTP %d %s, want %d naming %s", c.name, r.Code, r.Body, c.status, c.want)
		}
	}
	db := e.in.Server.DB().Client
	if n, err := db.Subscription.Query().Count(context.Background()); err != nil || n != 1 {
		t.Errorf("%d subscriptions stored, want only the valid one (%v)", n, err)
	}
	if n, err := db.Invoice.Query().Count(context.Background()); err != nil || n != 0 {
		t.Errorf("%d renewals stored by refused requests (%v)", n, err)
	}
	// The subscription paths are never read as ticker paths.
	for _, p := range []string{"/subscription/fetch/", "/subscription/address/"} {
		r := e.in.Get(t, p, nil, e.in.KeyA)
		if r.Code != 400 || strings.Contains(string(r.Body), "ticker") || strings.Contains(string(r.Body), "callback") {
			t.Errorf("%s without parameters: HTTP %d %s, want 400 naming token", p, r.Code, r.Body)
		}
	}
}

// TestSubscriptionOneOpenRenewal: concurrent requests for an option's
// address all get the same open renewal.
func TestSubscriptionOneOpenRenewal(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newMerchantEnv(t, d)
			r := e.in.Get(t, "/subscription/create/", q("notify_url", e.ms.URL+"/merchant", "option", "1m:50", "option", "1y:500"), e.in.KeyA)
			wantStatus(t, r, 200)
			token := r.JSON["token"].(string)
			const n = 8
			ids := make(chan string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					coin := []string{"btc", "ltc"}[i%2]
					a := e.in.Get(t, "/subscription/address/", q("token", token, "coin", coin, "option", "1m"), e.in.KeyA)
					id, _ := a.JSON["payment_id"].(string)
					if a.Code != 200 {
						id = fmt.Sprintf("HTTP %d %s", a.Code, a.Body)
					}
					ids <- id
				}()
			}
			wg.Wait()
			close(ids)
			seen := map[string]int{}
			for id := range ids {
				seen[id]++
			}
			if len(seen) != 1 {
				t.Fatalf("concurrent requests got %v, want one renewal", seen)
			}
			// Another option has its own renewal.
			y := e.in.Get(t, "/subscription/address/", q("token", token, "coin", "btc", "option", "1y"), e.in.KeyA)
			wantStatus(t, y, 200)
			if seen[y.JSON["payment_id"].(string)] != 0 {
				t.Fatalf("option 1y shares the renewal of 1m: %s", y.Body)
			}
		})
	}
}
