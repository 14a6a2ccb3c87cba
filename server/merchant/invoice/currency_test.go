package invoice

import (
	"testing"
	"time"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/internal/clock"
)

// TestStaleRatesKeepCurrenciesKnown: when the live rates are older than
// their limit (a provider outage), EUR is still a currency a checkout may be
// priced in, with its minor unit; only its rate is missing.
func TestStaleRatesKeepCurrenciesKnown(t *testing.T) {
	fr, err := price.NewFrankfurter(price.FrankfurterConfig{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	later := clock.Now().Add(10 * 365 * 24 * time.Hour) // the table is years old by then
	live, err := price.NewLive(price.LiveConfig{Providers: []price.Provider{fr}, Fallback: price.Default(), Now: func() time.Time { return later }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range live.Fiat() {
		if c.Code == "EUR" {
			t.Fatal("the stale EUR rate is still served: the test does not test staleness")
		}
	}
	c, err := ParseCurrency(live, "eur", "USD")
	if err != nil || c.Code != "EUR" || c.Decimals != 2 {
		t.Errorf("ParseCurrency(EUR) with stale rates: %+v, %v", c, err)
	}
	if c, err := ParseCurrency(live, "JPY", "USD"); err != nil || c.Decimals != 0 {
		t.Errorf("ParseCurrency(JPY): %+v, %v", c, err)
	}
	if _, err := ParseCurrency(live, "XYZ", "USD"); err == nil {
		t.Error("an unknown code was accepted")
	}
	if FiatPlaces(live, "JPY") != 0 || FiatPlaces(live, "BHD") != 3 {
		t.Error("minor units lost with stale rates")
	}
}
