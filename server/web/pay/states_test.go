package pay_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
	"github.com/payhook/payhook/server/web/webtest"
)

// TestCheckoutPageStates walks one checkout's page through every state a
// customer sees on the devnet: waiting, confirming n of N (ltc needs 3),
// partly paid with the fiat still due, paid, and another one expired on
// the injected clock. Each state is checked in the HTML (no script) and in
// status.json (what the script shows).
func TestCheckoutPageStates(t *testing.T) {
	t.Parallel()
	clk := clock.NewManual(clock.UTC().Truncate(time.Second))
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.Now = clk.Now
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(notifyURL, servertest.A)
	})
	e := &env{in: in}
	r := e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "40", "currency", "USD")
	pageURL := r["payment_url"].(string)
	a := e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "ltc")
	addr := a["address_in"].(string)
	amount, err := decimal.NewFromString(a["value_coin"].(string))
	if err != nil {
		t.Fatal(err)
	}
	state := func(wantCode, wantText string, final bool) map[string]any {
		t.Helper()
		st := status(t, pageURL+"status.json?coin=ltc")
		if st["status"] != wantCode || st["final"] != final {
			t.Fatalf("status.json: %v, want %s (final %v)", st, wantCode, final)
		}
		webtest.Fetch(t, http.MethodGet, pageURL+"?coin=ltc", nil).Want(t, 200, wantText)
		return st
	}
	state("waiting", "Waiting for your payment.", false)

	half := amount.Div(decimal.NewFromInt(2)).Round(8)
	e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addr, "value_coin": half.String()})
	e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 1})
	st := state("confirming", "Payment detected: 1 of 3 confirmations.", false)
	if st["confirmations"] != float64(1) || st["required"] != float64(3) {
		t.Fatalf("confirmations in status.json: %v", st)
	}
	e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 1})
	state("confirming", "Payment detected: 2 of 3 confirmations.", false)
	e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 1})
	st = state("partial", "still due.", false)
	due, _ := st["due"].(string)
	if due == "" || due == "40.00 USD" {
		t.Fatalf("partial: due %q", due)
	}
	webtest.Fetch(t, http.MethodGet, pageURL+"?coin=ltc", nil).Want(t, 200, "Partly paid: "+due+" still due.")

	e.post(t, "/devnet/ltc/pay/", map[string]any{"address_in": addr, "value_coin": amount.Sub(half).String()})
	e.post(t, "/devnet/ltc/mine/", map[string]any{"blocks": 3})
	state("paid", "Paid. Thank you!", true)

	// Another checkout, never paid, seen after its expiry.
	r = e.request(t, "/checkout/request/", "notify_url", notifyURL, "value", "50", "currency", "USD",
		"expire_at", itoa(clk.Now().Add(30*time.Minute).Unix()))
	other := r["payment_url"].(string)
	e.request(t, "/checkout/address/", "payment_id", r["payment_id"].(string), "coin", "btc")
	if st := status(t, other+"status.json?coin=btc"); st["status"] != "waiting" {
		t.Fatalf("before expiry: %v", st)
	}
	clk.Advance(31 * time.Minute)
	if st := status(t, other+"status.json?coin=btc"); st["status"] != "expired" || st["final"] != true {
		t.Fatalf("after expiry: %v", st)
	}
	webtest.Fetch(t, http.MethodGet, other+"?coin=btc", nil).Want(t, 200, "This payment request has expired.")
}

func itoa(n int64) string { return decimal.NewFromInt(n).String() }
