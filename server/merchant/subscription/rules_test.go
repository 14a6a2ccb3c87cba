package subscription

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/invoice"
)

func dec(s string) *decimal.Decimal {
	d := decimal.RequireFromString(s)
	return &d
}

var btc = chains.Ticker{Ticker: "btc", Coin: "BTC", Family: chains.FamilyUTXO, Decimals: 8}

// stage is a renewal of option 1m at 10 USD paid with 0.1 BTC valued at
// 10 USD; at completed 0.098 BTC was forwarded (fees 0.002 BTC, 0.20 USD).
func stage(st chains.Status) Stage {
	s := Stage{
		UUID: "u-1", Token: "sub_x", PaymentID: "ren_x", Option: "1m", PaymentStatus: st,
		InvoiceStatus: invoice.Paid, OptionValue: dec("10.00"), Currency: "USD", FiatPlaces: 2,
		Ticker: btc, PaidCoin: decimal.RequireFromString("0.1"), PaidFiat: dec("10"), TxidIn: "tx-in", Confirmations: 1,
	}
	if st == chains.StatusCompleted {
		s.ReceivedCoin, s.TxidOut = dec("0.098"), "tx-out"
	}
	return s
}

// jsonOf encodes fields as the JSON transport does.
func jsonOf(t *testing.T, fields []payload.Field) map[string]json.RawMessage {
	t.Helper()
	req, err := payload.Encode("https://shop.example/hook", payload.TransportJSON, fields, nil)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(req.Body, &m); err != nil {
		t.Fatalf("%s: %v", req.Body, err)
	}
	return m
}

// TestFiatExample is the spec's rule 6 as a test vector: a customer pays 10
// in fiat and the fees total 0.20. The subscription's payment_list shows
// received_fiat 10, the completed renewal webhook shows
// payment_received_amount_fiat 9.8, and completed adds no further 10 to the
// history.
func TestFiatExample(t *testing.T) {
	t.Parallel()
	completed := jsonOf(t, Fields(stage(chains.StatusCompleted)))
	for name, want := range map[string]string{
		"subscription_option_value":    "10",
		"payment_paid_amount":          "0.1",
		"payment_paid_amount_fiat":     "10",
		"payment_received_amount":      "0.098",
		"payment_received_amount_fiat": "9.8",
		"confirmations":                "1",
		"payment_currency":             `"USD"`,
		"payment_paid_coin":            `"btc"`,
		"token":                        `"sub_x"`,
		"event_type":                   `"subscription.payment.completed"`,
		"payment_status":               `"completed"`,
		"invoice_status":               `"paid"`,
		"txid_in":                      `"tx-in"`,
		"txid_out":                     `"tx-out"`,
	} {
		if got := string(completed[name]); got != want {
			t.Errorf("completed webhook: %s is %s, want %s", name, got, want)
		}
	}
	if _, ok := completed["payment_value"]; ok {
		t.Error("renewal webhooks have no payment_value")
	}
	confirmed := jsonOf(t, Fields(stage(chains.StatusConfirmed)))
	for _, name := range []string{"payment_received_amount", "payment_received_amount_fiat", "txid_out"} {
		if raw, ok := confirmed[name]; ok {
			t.Errorf("confirmed webhook carries %s %s; it is for completed only", name, raw)
		}
	}
	if string(confirmed["payment_paid_amount_fiat"]) != "10" {
		t.Errorf("confirmed webhook: payment_paid_amount_fiat %s", confirmed["payment_paid_amount_fiat"])
	}

	// The history: the one payment counts once, at confirmed and at
	// completed alike (completed is the same payment, not another 10).
	paid := invoice.PaymentState{Confirmed: true, Fiat: dec("10")}
	for _, ps := range [][]invoice.PaymentState{{paid}} {
		got := ReceivedFiat(ps)
		if got == nil || payload.FormatAmount(*got, 2) != "10" {
			t.Errorf("received_fiat %v, want 10", got)
		}
	}
}

// TestFallbacks: rules 1-3 in the webhooks, rule 5 (none) in the history.
func TestFallbacks(t *testing.T) {
	t.Parallel()
	unknown := stage(chains.StatusCompleted)
	unknown.PaidFiat = nil
	m := jsonOf(t, Fields(unknown))
	// Rule 1: missing incoming fiat uses the requested amount; rule 2:
	// missing net fiat uses the incoming fiat (or its fallback).
	if string(m["payment_paid_amount_fiat"]) != "10" || string(m["payment_received_amount_fiat"]) != "10" {
		t.Errorf("fallbacks: paid %s received %s, want 10 and 10", m["payment_paid_amount_fiat"], m["payment_received_amount_fiat"])
	}
	// Rule 3: both can be null; the option value is then 0.
	unknown.OptionValue = nil
	m = jsonOf(t, Fields(unknown))
	if string(m["payment_paid_amount_fiat"]) != "null" || string(m["payment_received_amount_fiat"]) != "null" || string(m["subscription_option_value"]) != "0" {
		t.Errorf("no fiat at all: paid %s received %s option %s", m["payment_paid_amount_fiat"], m["payment_received_amount_fiat"], m["subscription_option_value"])
	}
	// Two decimals for the option value.
	odd := stage(chains.StatusConfirmed)
	odd.OptionValue = dec("9.999")
	if m := jsonOf(t, Fields(odd)); string(m["subscription_option_value"]) != "10" {
		t.Errorf("9.999 rounds to %s, want 10", m["subscription_option_value"])
	}
	odd.OptionValue = dec("10.5")
	if m := jsonOf(t, Fields(odd)); string(m["subscription_option_value"]) != "10.5" {
		t.Errorf("10.5 renders as %s", m["subscription_option_value"])
	}

	// Rule 5: the history has no fallbacks.
	for _, c := range []struct {
		name string
		ps   []invoice.PaymentState
		want string // "null" for nil
	}{
		{"none", nil, "0"},
		{"only pending", []invoice.PaymentState{{Confirmed: false, Fiat: dec("10")}}, "0"},
		{"pending unknown does not qualify", []invoice.PaymentState{{Confirmed: false}, {Confirmed: true, Fiat: dec("4")}}, "4"},
		{"two confirmed", []invoice.PaymentState{{Confirmed: true, Fiat: dec("4")}, {Confirmed: true, Fiat: dec("6")}}, "10"},
		{"one unknown", []invoice.PaymentState{{Confirmed: true, Fiat: dec("4")}, {Confirmed: true}}, "null"},
	} {
		got := "null"
		if r := ReceivedFiat(c.ps); r != nil {
			got = payload.FormatAmount(*r, 2)
		}
		if got != c.want {
			t.Errorf("received_fiat %s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestGETIsText: in GET (and form) payloads every value is text, and null
// fields are left out.
func TestGETIsText(t *testing.T) {
	t.Parallel()
	s := stage(chains.StatusCompleted)
	req, err := payload.Encode("https://shop.example/hook?order=7", payload.TransportGET, Fields(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("order") != "7" || q.Get("subscription_option_value") != "10" || q.Get("payment_received_amount_fiat") != "9.8" ||
		q.Get("payment_paid_amount") != "0.1" || q.Get("confirmations") != "1" {
		t.Errorf("GET payload %s", req.URL)
	}
	s.PaidFiat, s.OptionValue = nil, nil
	req, _ = payload.Encode("https://shop.example/hook", payload.TransportGET, Fields(s), nil)
	u, _ = url.Parse(req.URL)
	if u.Query().Has("payment_paid_amount_fiat") || u.Query().Has("payment_received_amount_fiat") {
		t.Errorf("null fiat in GET: %s", req.URL)
	}
}
