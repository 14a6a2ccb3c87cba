package address

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/notifier/egress"
)

// FuzzParseCallback checks that ParseCallback never panics, refuses only
// with an *InvalidError, and accepts only what its contract promises: an
// absolute http(s) URL without credentials or fragment, that starts with the
// merchant's callback byte for byte, that payload accepts as sent on the
// wire, and whose query holds exactly the returned, unreserved parameters.
func FuzzParseCallback(f *testing.F) {
	for _, s := range [][2]string{
		{"https://s.example/hook", ""},
		{"https://s.example/h?b=2&a=%20x", ""},
		{"https://s.example/h", "order=1"},
		{"https://s.example/h?a=1", "b=2"},
		{"https://s.example/h?", "b=2"},
		{"https://s.example/h?a=1&", "?b=2&c=%41"},
		{"https://s.example", "a=1"},
		{"http://[2001:db8::1]:8443/h", ""},
		{"http://[fe80::1%25eth0]/h", ""},
		{"https://s.example:65535/", "x=+y"},
		{"https://s.example:65536/", ""},
		{"https://s.example:0/", ""},
		{"https://s.example:/", ""},
		{"HTTPS://s.example/", ""},
		{"https://S.EXAMPLE/%7e?q", ""},
		{"javascript:alert(1)", ""},
		{"https:opaque", ""},
		{"https:///nohost", ""},
		{"https://a@s.example/", ""},
		{"https://a:b@s.example/", ""},
		{"https://s.example/#x", ""},
		{"https://s.example/", "a=1#x"},
		{"https://s.example/", "a=%g1"},
		{"https://s.example/", "=1"},
		{"https://s.example/?uuid=1", ""},
		{"https://s.example/", "payment_status=paid"},
		{"https://s.example/", "Coin=x&coin2=y&&"},
		{"https://s.example/a b", ""},
		{"https://s.example/\x00", "a=\x7f"},
		{"https://s.example/p?x?y=1", "z?=2"},
		{"https://s.example/p;a=1?b=%2", ""},
		{"https://s.example/p", "a=1;b=2"},
		{"https://s.example\\@evil.example/", ""},
		{"https://s.example/ü", "ü=ü"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, callback, cbParams string) {
		got, err := ParseCallback(callback, cbParams)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || (inv.Param != "callback" && inv.Param != "cb_params") {
				t.Fatalf("ParseCallback(%q, %q) = %v (%T): want an *InvalidError naming callback or cb_params", callback, cbParams, err, err)
			}
			return
		}
		u, err := url.Parse(got.URL)
		if err != nil {
			t.Fatalf("accepted %q but net/url refuses it: %v", got.URL, err)
		}
		switch {
		case u.Scheme != "http" && u.Scheme != "https":
			t.Fatalf("accepted %q: scheme %q", got.URL, u.Scheme)
		case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
			t.Fatalf("accepted %q: not an absolute URL with a host", got.URL)
		case u.User != nil:
			t.Fatalf("accepted %q: has userinfo", got.URL)
		case u.Fragment != "" || strings.Contains(got.URL, "#"):
			t.Fatalf("accepted %q: has a fragment", got.URL)
		case !strings.HasPrefix(got.URL, callback):
			t.Fatalf("URL %q does not start with the callback %q", got.URL, callback)
		}
		if _, err := egress.CheckURL(got.URL); err != nil {
			t.Fatalf("accepted %q, which payload refuses: %v", got.URL, err)
		}
		for _, p := range got.Params {
			if p.Key == "" || IsReserved(p.Key) {
				t.Fatalf("accepted %q with parameter key %q", got.URL, p.Key)
			}
		}
		// What is stored and signed (the URL) and what is reported (Params)
		// agree: the URL's query decodes to exactly the parameters.
		fromURL, err := splitQuery("callback", u.RawQuery)
		if err != nil {
			t.Fatalf("query of accepted %q does not decode: %v", got.URL, err)
		}
		if len(fromURL) != len(got.Params) || (len(fromURL) > 0 && !reflect.DeepEqual(fromURL, got.Params)) {
			t.Fatalf("URL %q carries %+v, Params are %+v", got.URL, fromURL, got.Params)
		}
	})
}

// fuzzTickers are the networks FuzzParseDestinations exercises, one per
// address family; a fuzzed byte picks one.
var fuzzTickers = [...]string{"btc", "eth", "trc20/usdt", "sol"}

// FuzzParseDestinations checks that ParseDestinations never panics, refuses
// only with an *InvalidError, and accepts only a valid split: 1 to
// MaxDestinations distinct, valid addresses with positive shares of at most
// 8 decimal places (which survive the JSON float round trip) summing to
// exactly 1.
func FuzzParseDestinations(f *testing.F) {
	const (
		btc1 = "12ZG96sFFMjvv4c2TyoaZS8Y1PMK6RR6Up"
		btc2 = "33FH4eMgoG4K1EJTb5UAz4VU9ue2eK8Ysu"
		btc3 = "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0"
		eth1 = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
		eth2 = "0x1111111111111111111111111111111111111111"
		eth3 = "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"
		trx1 = "TBFYWKikEjGSuookTS5v2XKpw7LnA8dfar"
		trx2 = "TCSYvcePwGWKwzsM4JgZb7p9s4HSuhQZtS"
		sol1 = "USxhdMQhkMoYC52vEK6giwuQeu2F5SWuXeqS3EeyidB"
		sol2 = "wt2hjcUqqSPWppayKbXirMF7mNRxXFFpPKRqhYrD3t8"
	)
	for _, s := range []struct {
		ticker byte
		raw    string
	}{
		{0, btc1},
		{0, "  " + btc3 + "\t"},
		{0, "0.5@" + btc1 + "|0.5@" + btc2},
		{0, "0.33333333@" + btc1 + "|0.33333333@" + btc2 + "|0.33333334@" + btc3},
		{0, "0.5@" + btc1 + "|0.5@" + btc1},
		{0, "1.0000000000@" + btc1},
		{0, "0.123456789@" + btc1 + "|0.876543211@" + btc2},
		{0, "1e0@" + btc1},
		{0, "+1@" + btc1},
		{0, "-0.5@" + btc1 + "|1.5@" + btc2},
		{0, "0@" + btc1 + "|1@" + btc2},
		{0, "@|"},
		{0, "1@"},
		{0, strings.Repeat("0.05@"+btc1+"|", 21)},
		{1, eth1},
		{1, "0.25@" + eth1 + "|0.75@" + eth2},
		{1, "0.5@" + eth1 + "|0.5@" + eth3},
		{1, "0.5@0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED|0.5@" + eth2},
		{1, "0x0000000000000000000000000000000000000000"},
		{2, trx1},
		{2, " 0.9 @ " + trx1 + " | 0.1 @ " + trx2 + " "},
		{2, "0.1@" + trx1 + "|0.9@" + trx2 + "|"},
		{3, sol1},
		{3, ".5@" + sol1 + "|.5@" + sol2},
		{3, "0.50000000@" + sol1 + "|0.50000000@" + sol2},
		{3, "1@" + sol1 + "@x"},
	} {
		f.Add(s.ticker, s.raw)
	}
	reg := family.DefaultRegistry()
	var tickers [len(fuzzTickers)]chains.Ticker
	for i, name := range fuzzTickers {
		t, err := reg.Get(name)
		if err != nil {
			f.Fatal(err)
		}
		tickers[i] = t
	}
	one := decimal.NewFromInt(1)
	f.Fuzz(func(t *testing.T, pick byte, raw string) {
		tk := tickers[int(pick)%len(tickers)]
		got, err := ParseDestinations(tk, raw)
		if err != nil {
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Param != "address" {
				t.Fatalf("ParseDestinations(%s, %q) = %v (%T): want an *InvalidError naming address", tk.Ticker, raw, err, err)
			}
			return
		}
		if strings.TrimSpace(raw) == "" {
			// No forwarding: the funds are held on the payment address.
			if got == nil || len(got) != 0 {
				t.Fatalf("ParseDestinations(%s, %q) = %#v, want no destinations (an empty, non-nil list)", tk.Ticker, raw, got)
			}
			return
		}
		if len(got) == 0 || len(got) > MaxDestinations {
			t.Fatalf("ParseDestinations(%s, %q): %d destinations", tk.Ticker, raw, len(got))
		}
		if trimmed := strings.TrimSpace(raw); !strings.ContainsAny(trimmed, "@|") {
			if len(got) != 1 || got[0].Address != trimmed || !got[0].Share.Equal(one) {
				t.Fatalf("ParseDestinations(%s, %q) = %+v: want the one address with share 1", tk.Ticker, raw, got)
			}
		}
		sum := decimal.Zero
		seen := map[string]bool{}
		for _, d := range got {
			if !d.Share.IsPositive() {
				t.Fatalf("ParseDestinations(%s, %q): share %s of %s is not positive", tk.Ticker, raw, d.Share, d.Address)
			}
			if d.Share.Exponent() < -shareScale {
				t.Fatalf("ParseDestinations(%s, %q): share %s has more than %d decimal places", tk.Ticker, raw, d.Share.String(), shareScale)
			}
			// Shares travel as JSON numbers: the shortest float64 rendering
			// must give back the exact decimal.
			if f, _ := d.Share.Float64(); !decimal.NewFromFloat(f).Equal(d.Share) {
				t.Fatalf("ParseDestinations(%s, %q): share %s does not survive float64 (%v)", tk.Ticker, raw, d.Share, f)
			}
			if err := chains.ValidateAddress(tk, d.Address); err != nil {
				t.Fatalf("ParseDestinations(%s, %q): accepted invalid address: %v", tk.Ticker, raw, err)
			}
			if seen[d.Address] {
				t.Fatalf("ParseDestinations(%s, %q): %s listed twice", tk.Ticker, raw, d.Address)
			}
			seen[d.Address] = true
			sum = sum.Add(d.Share)
		}
		if !sum.Equal(one) {
			t.Fatalf("ParseDestinations(%s, %q): shares sum to %s", tk.Ticker, raw, sum)
		}
	})
}
