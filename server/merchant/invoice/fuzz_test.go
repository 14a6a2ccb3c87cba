package invoice

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/price"
	"github.com/payhook/payhook/notifier/egress"
)

// FuzzRequestParams feeds arbitrary parameters to the checkout request's
// parsers: each either accepts (and what it accepts is well-formed) or
// refuses with an *InvalidError naming its parameter; none panics.
func FuzzRequestParams(f *testing.F) {
	for _, s := range [][4]string{
		{"https://shop.example/hook", "10.50", "usd", "0"},
		{"http://127.0.0.1/x", "-1", "XYZ", "-5"},
		{"ftp://x", "1e5", "", "99999999999"},
		{"https://a.example/#f", "0.001", "JPY", "1"},
		{"", "", "eur", ""},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	prices := price.Default()
	rules := &egress.Rules{}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, notify, value, currency, expire string) {
		check := func(param string, err error) {
			t.Helper()
			var ie *InvalidError
			if err != nil && (!errors.As(err, &ie) || ie.Param != param || ie.Reason == "") {
				t.Fatalf("%s: error %v does not name the parameter", param, err)
			}
		}
		u, err := CheckNotifyURL(rules, 1, "notify_url", notify)
		check("notify_url", err)
		if err == nil && !strings.HasPrefix(u, "http") {
			t.Fatalf("accepted notify_url %q as %q", notify, u)
		}
		c, err := ParseCurrency(prices, currency, "USD")
		check("currency", err)
		if err != nil {
			return
		}
		v, err := ParseValue(value, c)
		check("value", err)
		if err == nil && v != nil && (!v.IsPositive() || -v.Exponent() > c.Decimals && !v.Round(c.Decimals).Equal(*v)) {
			t.Fatalf("accepted value %q as %s", value, v)
		}
		var n int64
		for _, r := range expire {
			if r < '0' || r > '9' || n > 1<<40 {
				break
			}
			n = n*10 + int64(r-'0')
		}
		exp, err := ParseExpiry(n, now, DefaultExpiry)
		check("expire_at", err)
		if err == nil && (!exp.After(now) || exp.After(now.Add(MaxExpiry))) {
			t.Fatalf("accepted expire_at %d as %s", n, exp)
		}
		check("item_description", CheckDescription(value+notify))
	})
}
