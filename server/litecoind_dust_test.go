package server_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/ent/store/storetest"
)

// TestLitecoindRefusesDustSplit: over the REST API of a server backed by
// litecoind, a create whose split gives a destination less of ltc's
// minimum payment (0.002, of which 0.00196 is forwarded) than the network's
// dust limit for that address is a 400 naming the destination, its amount
// and the limit; the same destinations in a split the network carries are
// accepted.
func TestLitecoindRefusesDustSplit(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			e := newLTCEnv(t, d)
			var a, b string
			e.n.Must(&a, "getnewaddress")
			e.n.Must(&b, "getnewaddress")
			limit, err := e.tk.Rules().MinOutput(e.tk, b)
			if err != nil {
				t.Fatal(err)
			}
			// 1% of the 0.00196 forwarded is below any ltc dust limit.
			want := (&distribute.BelowNetworkMinimumError{Ticker: "ltc", Address: b, Amount: decimal.RequireFromString("0.0000196"), Payment: decimal.RequireFromString("0.002"), Limit: limit}).Error()
			cb := e.sink.URL + "/hook"
			r := e.in.Get(t, "/ltc/create/", url.Values{"callback": {cb}, "address": {"0.99@" + a + "|0.01@" + b}}, e.in.KeyA)
			if r.Code != 400 || !strings.Contains(string(r.Body), "address: "+want) {
				t.Fatalf("a split below dust: HTTP %d %s, want 400 saying %q", r.Code, r.Body, want)
			}
			if !strings.Contains(want, "below "+limit.String()+" ltc") {
				t.Fatalf("the refusal %q does not name the limit %s", want, limit)
			}
			ok := e.in.Get(t, "/ltc/create/", url.Values{"callback": {cb}, "address": {"0.9@" + a + "|0.1@" + b}}, e.in.KeyA)
			if ok.Code != 200 {
				t.Fatalf("a split the network carries: HTTP %d %s", ok.Code, ok.Body)
			}
		})
	}
}
