package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/distribute"
	"github.com/payhook/payhook/chains/family"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/servertest"
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

// TestLitecoindHoldsWhatDustWouldStrand: an address whose split predates
// the creation-time check (written to the database as an older release
// stored it: 0.999@A|0.001@B) receives ltc's minimum payment on a real
// litecoind. Its forward would pay B 196 litoshis, below the dust litecoind
// relays, which the node would refuse for ever: instead the payment is
// held below dust — typed, journaled, listed by the operator API with its
// reason — no outgoing transaction is planned, and later polls neither sign
// nor send anything for it. The merchant was told confirmed and is not
// told completed.
func TestLitecoindHoldsWhatDustWouldStrand(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			e := newLTCEnv(t, d)
			ctx := context.Background()
			var a, b string
			e.n.Must(&a, "getnewaddress")
			e.n.Must(&b, "getnewaddress")
			der, err := chains.NewDeriver(servertest.Seed, family.All())
			if err != nil {
				t.Fatal(err)
			}
			const index = 9000
			addrIn, err := der.Address(e.tk, index)
			if err != nil {
				t.Fatal(err)
			}
			db := e.in.Server.DB().Client
			if err := db.Address.Create().SetAPIKeyID(1).SetProjectID(e.in.ProjectA).SetTicker("ltc").SetFamily("utxo").
				SetAddressIn(addrIn).SetDerivationIndex(index).SetCallbackURL(e.sink.URL + "/hook").SetCallbackKey(strings.Repeat("e", 64)).
				SetDestinations([]schema.Destination{{Address: a, Share: decimal.RequireFromString("0.999")}, {Address: b, Share: decimal.RequireFromString("0.001")}}).
				SetRequiredConfirmations(1).SetJSON(true).SetPost(true).Exec(ctx); err != nil {
				t.Fatal(err)
			}
			var txid string
			e.n.Must(&txid, "sendtoaddress", addrIn, json.Number("0.002"))
			e.step(t, 1)
			e.step(t, 1)

			p, err := db.Payment.Query().Where(entpayment.TxidIn(txid)).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != entpayment.StatusConfirmed || p.HoldReason != entpayment.HoldReasonBelowDust {
				t.Fatalf("payment %s held for %q; want confirmed and held below dust", p.Status, p.HoldReason)
			}
			if n, err := db.Outbound.Query().Count(ctx); err != nil || n != 0 {
				t.Fatalf("%d outgoing transactions planned (%v); want none", n, err)
			}
			if st := strings.Join(e.sink.statuses(), ","); st != "confirmed" {
				t.Fatalf("callbacks %s; want confirmed only", st)
			}
			opKey, _, err := apikey.CreateOperator(ctx, db, "ops", clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			f := e.in.Get(t, "/operator/funds", nil, opKey)
			if f.Code != 200 || !strings.Contains(string(f.Body), `"reason":"below_dust"`) || !strings.Contains(string(f.Body), `"address_in":"`+addrIn+`"`) ||
				!strings.Contains(string(f.Body), `"balance":"0.002"`) {
				t.Fatalf("held funds: %d %s; want the address listed, held below dust", f.Code, f.Body)
			}
			// Later blocks change nothing: nothing is retried.
			e.step(t, 2)
			if n, _ := db.Outbound.Query().Count(ctx); n != 0 {
				t.Fatalf("%d outgoing transactions after more blocks", n)
			}
		})
	}
}
