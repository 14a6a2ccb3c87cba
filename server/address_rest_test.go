package server_test

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/db/deliveryattempt"
	"github.com/payhook/payhook/ent/db/notification"
	entpayment "github.com/payhook/payhook/ent/db/payment"
	"github.com/payhook/payhook/ent/schema"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/address"
	"github.com/payhook/payhook/server/servertest"
)

// Known-valid mainnet destination addresses.
const (
	btcDest  = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
	btcDest2 = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa"
	ethDest  = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
	ethDest2 = "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0"
	trxDest  = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
	solDest  = "HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk"
)

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

func forEachServer(t *testing.T, fn func(t *testing.T, in *servertest.Instance), mutate ...func(*server.Config)) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			fn(t, servertest.Start(t, d, mutate...))
		})
	}
}

func wantStatus(t *testing.T, r servertest.Response, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("HTTP %d, want %d; body %s", r.Code, code, r.Body)
	}
	want := "success"
	if code >= 400 {
		want = "error"
	}
	if r.JSON["status"] != want {
		t.Fatalf("body status %v, want %q; body %s", r.JSON["status"], want, r.Body)
	}
}

func TestCreateAddressValidation(t *testing.T) {
	t.Parallel()
	long := "https://shop.example/" + strings.Repeat("a", 2048)
	many := make([]string, 21)
	for i := range many {
		many[i] = "0.01@" + btcDest
	}
	const cb = "https://shop.example/hook"
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		rows := []struct {
			name    string
			path    string
			query   url.Values
			key     string // "A", "" (none) or a literal key
			code    int
			errPart string
		}{
			{"missing api key", "/btc/create/", q("callback", cb, "address", btcDest), "", 401, "missing api key"},
			{"unknown api key", "/btc/create/", q("callback", cb, "address", btcDest), "ph_nope", 401, "unknown api key"},
			{"missing callback", "/btc/create/", q("address", btcDest), "A", 400, "callback: value is required"},
			{"ftp callback", "/btc/create/", q("callback", "ftp://shop.example/hook", "address", btcDest), "A", 400, "callback: must be an absolute http or https URL"},
			{"relative callback", "/btc/create/", q("callback", "/hook", "address", btcDest), "A", 400, "callback: must be an absolute http or https URL"},
			{"callback with credentials", "/btc/create/", q("callback", "https://user:pw@shop.example/hook", "address", btcDest), "A", 400, "callback: must not contain credentials"},
			{"callback with user only", "/btc/create/", q("callback", "https://user@shop.example/hook", "address", btcDest), "A", 400, "callback: must not contain credentials"},
			{"callback with fragment", "/btc/create/", q("callback", "https://shop.example/hook#frag", "address", btcDest), "A", 400, "callback: must not contain a fragment"},
			{"callback with empty fragment", "/btc/create/", q("callback", "https://shop.example/hook#", "address", btcDest), "A", 400, "callback: must not contain a fragment"},
			{"callback without host", "/btc/create/", q("callback", "http:///hook", "address", btcDest), "A", 400, "callback: must have a host"},
			{"callback bad port", "/btc/create/", q("callback", "http://shop.example:99999/hook", "address", btcDest), "A", 400, "callback: port \"99999\" is not valid"},
			{"callback too long", "/btc/create/", q("callback", long, "address", btcDest), "A", 400, "callback: must be at most 2048 characters"},
			{"callback bad query encoding", "/btc/create/", q("callback", "https://shop.example/hook?a=%zz", "address", btcDest), "A", 400, "callback: value of \"a\" is not URL-encoded correctly"},
			{"cb_params bad encoding", "/btc/create/", q("callback", cb, "cb_params", "order=%zz", "address", btcDest), "A", 400, "cb_params: value of \"order\" is not URL-encoded correctly"},
			{"cb_params with fragment", "/btc/create/", q("callback", cb, "cb_params", "order=1#x", "address", btcDest), "A", 400, "cb_params: must not contain '#'"},
			{"cb_params empty name", "/btc/create/", q("callback", cb, "cb_params", "=1", "address", btcDest), "A", 400, "cb_params: query parameter with an empty name"},
			{"callback query uses a payload field name", "/btc/create/", q("callback", "https://shop.example/hook?uuid=1", "address", btcDest), "A", 400, "callback: parameter \"uuid\" is reserved for payhook's callback fields"},
			{"cb_params use a payload field name", "/btc/create/", q("callback", cb, "cb_params", "value_coin=1", "address", btcDest), "A", 400, "cb_params: parameter \"value_coin\" is reserved"},
			{"callback a client would rewrite", "/btc/create/", q("callback", "https://shop.example/a b", "address", btcDest), "A", 400, "callback: has a space, control or non-ASCII byte at offset 22; percent-encode it"},
			{"callback with non-ASCII path", "/btc/create/", q("callback", "https://shop.example/caf\u00e9", "address", btcDest), "A", 400, "callback: "},
			{"bad btc checksum", "/btc/create/", q("callback", cb, "address", "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv"), "A", 400, "address: invalid btc address"},
			{"eth address on btc", "/btc/create/", q("callback", cb, "address", ethDest), "A", 400, "address: invalid btc address"},
			{"btc address on eth", "/eth/create/", q("callback", cb, "address", btcDest), "A", 400, "address: invalid eth address"},
			{"bad EIP-55 case", "/eth/create/", q("callback", cb, "address", "0x9858efFD232B4033E47d90003D41EC34EcaEda94"), "A", 400, "address: invalid eth address"},
			{"bad tron address", "/trc20/usdt/create/", q("callback", cb, "address", "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdX"), "A", 400, "address: invalid trc20/usdt address"},
			{"bad solana address", "/sol/create/", q("callback", cb, "address", "0OIl"), "A", 400, "address: invalid sol address"},
			{"shares not summing to 1", "/btc/create/", q("callback", cb, "address", "0.6@"+btcDest+"|0.3@"+btcDest2), "A", 400, "address: shares must sum to exactly 1, they sum to 0.9"},
			{"shares over 1", "/btc/create/", q("callback", cb, "address", "0.6@"+btcDest+"|0.5@"+btcDest2), "A", 400, "address: shares must sum to exactly 1, they sum to 1.1"},
			{"negative share", "/btc/create/", q("callback", cb, "address", "1.5@"+btcDest+"|-0.5@"+btcDest2), "A", 400, "address: share -0.5 of destination 2 must be positive"},
			{"zero share", "/btc/create/", q("callback", cb, "address", "1@"+btcDest+"|0@"+btcDest2), "A", 400, "address: share 0 of destination 2 must be positive"},
			{"share not a number", "/btc/create/", q("callback", cb, "address", "half@"+btcDest+"|0.5@"+btcDest2), "A", 400, "address: share \"half\" of destination 1 is not a decimal number"},
			{"share in exponent form", "/btc/create/", q("callback", cb, "address", "5e-1@"+btcDest+"|0.5@"+btcDest2), "A", 400, "is not a decimal number"},
			{"share too precise", "/btc/create/", q("callback", cb, "address", "0.123456789@"+btcDest+"|0.876543211@"+btcDest2), "A", 400, "has more than 8 decimal places"},
			{"destination without share", "/btc/create/", q("callback", cb, "address", btcDest+"|0.5@"+btcDest2), "A", 400, "must be SHARE@ADDRESS"},
			{"duplicate destination", "/btc/create/", q("callback", cb, "address", "0.5@"+btcDest+"|0.5@"+btcDest), "A", 400, "is listed twice"},
			{"same EVM wallet in two cases", "/eth/create/", q("callback", cb, "address", "0.5@"+ethDest+"|0.5@"+strings.ToLower(ethDest)), "A", 400, "is listed twice"},
			{"same bech32 wallet in two cases", "/btc/create/", q("callback", cb, "address", "0.5@"+btcDest+"|0.5@"+strings.ToUpper(btcDest)), "A", 400, "is listed twice"},
			{"same CashAddr with and without prefix", "/bch/create/", q("callback", cb, "address", "0.5@bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a|0.5@qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"), "A", 400, "is listed twice"},
			{"share of the minimum payment below dust", "/btc/create/", q("callback", cb, "address", "0.99999@"+btcDest+"|0.00001@"+btcDest2), "A", 400,
				"address: destination " + btcDest2 + " would receive 0 btc of the minimum payment of 0.0001 btc, below 0.00000546 btc, the smallest output the btc network carries to that address"},
			{"too many destinations", "/btc/create/", q("callback", cb, "address", strings.Join(many, "|")), "A", 400, "at most 20 destinations"},
			{"bad address among shares", "/btc/create/", q("callback", cb, "address", "0.5@"+btcDest+"|0.5@nope"), "A", 400, "address: invalid btc address"},
			{"confirmations zero", "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "0"), "A", 400, "confirmations: must be greater than or equal to 1 and less than or equal to 100"},
			{"confirmations 101", "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "101"), "A", 400, "confirmations: must be greater than or equal to 1"},
			{"confirmations not a number", "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "abc"), "A", 400, "confirmations: \"abc\" is not an integer"},
			{"confirmations below network minimum", "/bep20/usdt/create/", q("callback", cb, "address", ethDest, "confirmations", "2"), "A", 400, "confirmations: must be between 3 and 100 for bep20/usdt, got 2"},
			{"post not a boolean", "/btc/create/", q("callback", cb, "address", btcDest, "post", "yes"), "A", 400, "post: \"yes\" is not a boolean"},
			{"json not a boolean", "/btc/create/", q("callback", cb, "address", btcDest, "json", "2"), "A", 400, "json: \"2\" is not a boolean"},
			{"unknown ticker", "/xyz/create/", q("callback", cb, "address", btcDest), "A", 404, "unknown ticker: xyz"},
			{"unknown token ticker", "/trc20/xyz/create/", q("callback", cb, "address", trxDest), "A", 404, "unknown ticker: trc20/xyz"},
			{"ticker with bad characters", "/b_tc/create/", q("callback", cb, "address", btcDest), "A", 400, "ticker: must be a ticker such as btc or trc20/usdt"},
			{"too many ticker segments", "/a/b/c/create/", q("callback", cb, "address", btcDest), "A", 404, "no such endpoint"},
			{"logs without callback", "/btc/logs/", nil, "A", 400, "callback: value is required"},
			{"logs unknown ticker", "/xyz/logs/", q("callback", cb), "A", 404, "unknown ticker: xyz"},
			{"logs unknown callback", "/btc/logs/", q("callback", "https://shop.example/never"), "A", 404, "no address was created with this callback URL"},
			{"logs without key", "/btc/logs/", q("callback", cb), "", 401, "missing api key"},
			{"info unknown ticker", "/xyz/info/", nil, "", 404, "unknown ticker: xyz"},
		}
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				key := row.key
				if key == "A" {
					key = in.KeyA
				}
				r := in.Get(t, row.path, row.query, key)
				wantStatus(t, r, row.code)
				msg, _ := r.JSON["error"].(string)
				if !strings.Contains(msg, row.errPart) {
					t.Fatalf("error %q does not contain %q", msg, row.errPart)
				}
				if len(r.JSON) != 2 {
					t.Fatalf("error body has extra members: %s", r.Body)
				}
			})
		}
	})
}

func TestCreateAddress(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		ctx := context.Background()
		reg := family.DefaultRegistry()
		der, err := chains.NewDeriver(servertest.Seed, family.All())
		if err != nil {
			t.Fatal(err)
		}
		db := in.Server.DB().Client

		checkDerived := func(t *testing.T, ticker, addrIn string) {
			t.Helper()
			tk, _ := reg.Lookup(ticker)
			if err := chains.ValidateAddress(tk, addrIn); err != nil {
				t.Fatalf("address_in %s is not a valid %s address: %v", addrIn, ticker, err)
			}
			row, err := db.Address.Query().Where(entaddress.AddressIn(addrIn)).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := der.Address(tk, uint32(*row.DerivationIndex))
			if err != nil || want != addrIn {
				t.Fatalf("address_in %s is not the seed's address at index %d (%s, %v): funds would be unrecoverable", addrIn, *row.DerivationIndex, want, err)
			}
		}

		t.Run("single destination, documented path", func(t *testing.T) {
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/hook?order=42", "address", btcDest), in.KeyA)
			wantStatus(t, r, 200)
			var body struct {
				AddressIn   string             `json:"address_in"`
				AddressOut  map[string]float64 `json:"address_out"`
				CallbackURL string             `json:"callback_url"`
				MinTx       string             `json:"minimum_transaction_coin"`
				Priority    string             `json:"priority"`
				Confs       int                `json:"required_confirmations"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			checkDerived(t, "btc", body.AddressIn)
			if len(body.AddressOut) != 1 || body.AddressOut[btcDest] != 1 {
				t.Fatalf("address_out = %v", body.AddressOut)
			}
			if body.CallbackURL != "https://shop.example/hook?order=42" {
				t.Fatalf("callback_url = %q", body.CallbackURL)
			}
			btc, _ := reg.Lookup("btc")
			if body.MinTx != btc.MinTransaction.String() || body.Priority != "default" || int32(body.Confs) != btc.DefaultConfirmations {
				t.Fatalf("body = %s", r.Body)
			}
			// JSON types: the minimum is a string, shares and counts are numbers.
			var raw map[string]json.RawMessage
			_ = json.Unmarshal(r.Body, &raw)
			if raw["minimum_transaction_coin"][0] != '"' || raw["required_confirmations"][0] == '"' {
				t.Fatalf("wrong JSON types: %s", r.Body)
			}
		})

		t.Run("slash-less path and upper-case ticker reach the same address", func(t *testing.T) {
			a := in.Get(t, "/btc/create/", q("callback", "https://shop.example/same", "address", btcDest), in.KeyA)
			b := in.Get(t, "/btc/create", q("callback", "https://shop.example/same", "address", btcDest), in.KeyA)
			c := in.Get(t, "/BTC/create/", q("callback", "https://shop.example/same", "address", btcDest), in.KeyA)
			for _, r := range []servertest.Response{a, b, c} {
				wantStatus(t, r, 200)
			}
			if a.JSON["address_in"] != b.JSON["address_in"] || a.JSON["address_in"] != c.JSON["address_in"] {
				t.Fatalf("different addresses: %v %v %v", a.JSON["address_in"], b.JSON["address_in"], c.JSON["address_in"])
			}
		})

		t.Run("token tickers take two segments on every path", func(t *testing.T) {
			cases := []struct{ ticker, dest string }{
				{"trc20/usdt", trxDest}, {"erc20/usdt", ethDest}, {"erc20/usdc", ethDest},
				{"bep20/usdt", ethDest}, {"polygon/pol", ethDest}, {"sol/usdc", solDest},
			}
			for _, c := range cases {
				cb := "https://shop.example/" + c.ticker
				for _, p := range []string{"/" + c.ticker + "/create/", "/" + c.ticker + "/create"} {
					r := in.Get(t, p, q("callback", cb, "address", c.dest), in.KeyA)
					wantStatus(t, r, 200)
					checkDerived(t, c.ticker, r.JSON["address_in"].(string))
				}
				for _, p := range []string{"/" + c.ticker + "/logs/", "/" + c.ticker + "/logs"} {
					wantStatus(t, in.Get(t, p, q("callback", cb), in.KeyA), 200)
				}
				for _, p := range []string{"/" + c.ticker + "/info/", "/" + c.ticker + "/info"} {
					r := in.Get(t, p, nil, "")
					wantStatus(t, r, 200)
					if r.JSON["ticker_path"] != c.ticker {
						t.Fatalf("%s: %s", p, r.Body)
					}
				}
			}
		})

		t.Run("every native ticker derives valid, distinct addresses", func(t *testing.T) {
			dests := map[chains.FamilyName]string{chains.FamilyEVM: ethDest, chains.FamilyTron: trxDest, chains.FamilySolana: solDest}
			seen := map[string]bool{}
			for _, tk := range reg.All() {
				dest := dests[tk.Family]
				if tk.Family == chains.FamilyUTXO {
					// A destination of the coin's own network, derived at a far index.
					dest, err = der.Address(tk, 1<<30)
					if err != nil {
						t.Fatal(err)
					}
				}
				r := in.Get(t, "/"+tk.Ticker+"/create/", q("callback", "https://shop.example/all/"+tk.Ticker, "address", dest), in.KeyA)
				wantStatus(t, r, 200)
				a := r.JSON["address_in"].(string)
				checkDerived(t, tk.Ticker, a)
				if seen[a] {
					t.Fatalf("address_in %s handed out twice", a)
				}
				seen[a] = true
			}
		})

		t.Run("several destinations by share", func(t *testing.T) {
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/split", "address", "0.6@"+btcDest+"|0.4@"+btcDest2), in.KeyA)
			wantStatus(t, r, 200)
			var body struct {
				AddressOut map[string]json.Number `json:"address_out"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.AddressOut[btcDest] != "0.6" || body.AddressOut[btcDest2] != "0.4" {
				t.Fatalf("address_out = %s", r.Body)
			}
			row, err := db.Address.Query().Where(entaddress.AddressIn(r.JSON["address_in"].(string))).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []schema.Destination{{Address: btcDest, Share: decimal.RequireFromString("0.6")}, {Address: btcDest2, Share: decimal.RequireFromString("0.4")}}
			if len(row.Destinations) != 2 || row.Destinations[0].Address != want[0].Address || !row.Destinations[0].Share.Equal(want[0].Share) || !row.Destinations[1].Share.Equal(want[1].Share) {
				t.Fatalf("stored destinations %+v", row.Destinations)
			}
		})

		t.Run("small shares render exactly", func(t *testing.T) {
			cb := "https://shop.example/tiny"
			// eth: no dust limit refuses so small a share.
			r := in.Get(t, "/eth/create/", q("callback", cb, "address", "0.99999@"+ethDest+"|0.00001@"+ethDest2), in.KeyA)
			wantStatus(t, r, 200)
			var body struct {
				AddressOut map[string]json.Number `json:"address_out"`
			}
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			if f, _ := body.AddressOut[ethDest2].Float64(); f != 0.00001 {
				t.Fatalf("address_out %s", r.Body)
			}
			wantStatus(t, in.Get(t, "/eth/logs/", q("callback", cb), in.KeyA), 200)
		})

		t.Run("cb_params are appended and kept in order", func(t *testing.T) {
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/hook?order=42", "cb_params", "sig=a%2Bb&user=7", "address", btcDest, "json", "1", "convert", "1"), in.KeyA)
			wantStatus(t, r, 200)
			if got := r.JSON["callback_url"]; got != "https://shop.example/hook?order=42&sig=a%2Bb&user=7" {
				t.Fatalf("callback_url = %v", got)
			}
			row, err := db.Address.Query().Where(entaddress.AddressIn(r.JSON["address_in"].(string))).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []schema.Param{{Key: "order", Value: "42"}, {Key: "sig", Value: "a+b"}, {Key: "user", Value: "7"}}
			if len(row.CustomParams) != len(want) {
				t.Fatalf("custom params %+v", row.CustomParams)
			}
			for i := range want {
				if row.CustomParams[i] != want[i] {
					t.Fatalf("custom params %+v, want %+v", row.CustomParams, want)
				}
			}
			if !row.JSON || !row.Post || !row.Convert {
				t.Fatalf("flags json=%v post=%v convert=%v", row.JSON, row.Post, row.Convert)
			}
			// The logs find the address by the URL callbacks use.
			wantStatus(t, in.Get(t, "/btc/logs/", q("callback", "https://shop.example/hook?order=42&sig=a%2Bb&user=7"), in.KeyA), 200)
		})

		t.Run("confirmations: default, explicit, forced to 1 on Solana", func(t *testing.T) {
			eth, _ := reg.Lookup("eth")
			r := in.Get(t, "/eth/create/", q("callback", "https://shop.example/c1", "address", ethDest), in.KeyA)
			wantStatus(t, r, 200)
			if int32(r.JSON["required_confirmations"].(float64)) != eth.DefaultConfirmations {
				t.Fatalf("default: %s", r.Body)
			}
			r = in.Get(t, "/eth/create/", q("callback", "https://shop.example/c2", "address", ethDest, "confirmations", "42"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["required_confirmations"].(float64) != 42 {
				t.Fatalf("explicit: %s", r.Body)
			}
			r = in.Get(t, "/sol/create/", q("callback", "https://shop.example/c3", "address", solDest, "confirmations", "30"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["required_confirmations"].(float64) != 1 {
				t.Fatalf("solana: %s", r.Body)
			}
		})

		t.Run("parameters of client libraries that payhook does not use are accepted", func(t *testing.T) {
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/libs", "address", btcDest, "pending", "1", "priority", "fast", "prices", "0", "multi_token", "1", "email", "a@b.c"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["priority"] != "fast" {
				t.Fatalf("priority = %v, want btc's fast level", r.JSON["priority"])
			}
			// A coin without levels takes the names the libraries send as its default.
			r = in.Get(t, "/trc20/usdt/create/", q("callback", "https://shop.example/libs", "address", trxDest, "priority", "Fast"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["priority"] != "default" {
				t.Fatalf("trc20 priority = %v", r.JSON["priority"])
			}
			r = in.Get(t, "/btc/create/", q("callback", "https://shop.example/warp", "address", btcDest, "priority", "warp"), in.KeyA)
			if r.Code != 400 || !strings.Contains(fmt.Sprint(r.JSON["error"]), "priority: must be one of fast, default, economic") {
				t.Fatalf("an unknown priority: HTTP %d %s", r.Code, r.Body)
			}
			// The same callback at another priority is another setting.
			r = in.Get(t, "/btc/create/", q("callback", "https://shop.example/libs", "address", btcDest, "priority", "economic", "multi_token", "1"), in.KeyA)
			if r.Code != 409 || !strings.Contains(fmt.Sprint(r.JSON["error"]), "priority") {
				t.Fatalf("the same callback at another priority: HTTP %d %s", r.Code, r.Body)
			}
		})

		t.Run("same key, ticker and callback return the original address", func(t *testing.T) {
			cb := "https://shop.example/idem"
			a := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "3"), in.KeyA)
			b := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "3"), in.KeyA)
			wantStatus(t, a, 200)
			wantStatus(t, b, 200)
			if a.JSON["address_in"] != b.JSON["address_in"] || string(mustJSON(t, a.JSON["address_out"])) != string(mustJSON(t, b.JSON["address_out"])) || b.JSON["required_confirmations"].(float64) != 3 {
				t.Fatalf("second create changed the address: %s vs %s", a.Body, b.Body)
			}
			other := in.Get(t, "/eth/create/", q("callback", cb, "address", ethDest), in.KeyA)
			wantStatus(t, other, 200)
			if other.JSON["address_in"] == a.JSON["address_in"] {
				t.Fatal("another ticker shared the address")
			}
			// One destination spelled another way (bech32 in capitals,
			// CashAddr without its prefix) is the same setting: the same
			// address, not a conflict.
			upper := in.Get(t, "/btc/create/", q("callback", cb, "address", strings.ToUpper(btcDest), "confirmations", "3"), in.KeyA)
			wantStatus(t, upper, 200)
			if upper.JSON["address_in"] != a.JSON["address_in"] {
				t.Fatalf("the destination in capitals gave another address: %s", upper.Body)
			}
			const cash = "qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a"
			bch1 := in.Get(t, "/bch/create/", q("callback", cb, "address", "bitcoincash:"+cash), in.KeyA)
			bch2 := in.Get(t, "/bch/create/", q("callback", cb, "address", cash), in.KeyA)
			wantStatus(t, bch1, 200)
			wantStatus(t, bch2, 200)
			if bch1.JSON["address_in"] != bch2.JSON["address_in"] {
				t.Fatalf("a CashAddr with and without its prefix gave two addresses: %s, %s", bch1.Body, bch2.Body)
			}
		})

		t.Run("same callback with other settings is a conflict naming them", func(t *testing.T) {
			cb := "https://shop.example/settings"
			wantStatus(t, in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "3"), in.KeyA), 200)
			for _, tc := range []struct {
				name   string
				params url.Values
				fields string
			}{
				{"forwarding", q("callback", cb, "address", btcDest2, "confirmations", "3"), "(address differ)"},
				{"no forwarding", q("callback", cb, "confirmations", "3"), "(address differ)"},
				{"confirmations", q("callback", cb, "address", btcDest, "confirmations", "6"), "(confirmations differ)"},
				{"transport", q("callback", cb, "address", btcDest, "confirmations", "3", "json", "1"), "(json, post differ)"},
				{"form", q("callback", cb, "address", btcDest, "confirmations", "3", "post", "1"), "(post differ)"},
				{"convert", q("callback", cb, "address", btcDest, "confirmations", "3", "convert", "1"), "(convert differ)"},
			} {
				r := in.Get(t, "/btc/create/", tc.params, in.KeyA)
				wantStatus(t, r, 409)
				if msg, _ := r.JSON["error"].(string); !strings.Contains(msg, tc.fields) || r.JSON["status"] != "error" {
					t.Errorf("%s: %s, want the error to name %s", tc.name, r.Body, tc.fields)
				}
			}
			// Nothing changed: the original settings still answer.
			r := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest, "confirmations", "3"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["required_confirmations"].(float64) != 3 {
				t.Fatalf("settings changed: %s", r.Body)
			}
		})

		t.Run("without a forwarding address the funds are held", func(t *testing.T) {
			r := in.Get(t, "/btc/create/", q("callback", "https://shop.example/held"), in.KeyA)
			wantStatus(t, r, 200)
			if out, ok := r.JSON["address_out"].(map[string]any); !ok || len(out) != 0 {
				t.Fatalf("address_out = %v, want {}: %s", r.JSON["address_out"], r.Body)
			}
		})

		t.Run("another key gets its own address for the same callback", func(t *testing.T) {
			cb := "https://shop.example/owners"
			a := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest), in.KeyA)
			b := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest), in.KeyB)
			wantStatus(t, a, 200)
			wantStatus(t, b, 200)
			if a.JSON["address_in"] == b.JSON["address_in"] {
				t.Fatal("two keys share an address")
			}
		})
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLogs(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		ctx := context.Background()
		db := in.Server.DB().Client
		cb := "https://shop.example/logs?order=1"
		r := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest), in.KeyA)
		wantStatus(t, r, 200)
		addrIn := r.JSON["address_in"].(string)

		r = in.Get(t, "/btc/logs/", q("callback", cb), in.KeyA)
		wantStatus(t, r, 200)
		if string(mustJSON(t, r.JSON["callbacks"])) != "[]" || r.JSON["address_in"] != addrIn || r.JSON["callback_url"] != cb || r.JSON["notify_confirmations"].(float64) != 1 {
			t.Fatalf("empty logs: %s", r.Body)
		}

		// Another key of the same project reads the project's address, and
		// creating again with it finds the same address.
		if r := in.Get(t, "/btc/logs/", q("callback", cb), in.KeyA2); r.Code != 200 || r.JSON["address_in"] != addrIn {
			t.Fatalf("a second key of the project reads logs: HTTP %d %s", r.Code, r.Body)
		}
		if r := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest), in.KeyA2); r.Code != 200 || r.JSON["address_in"] != addrIn {
			t.Fatalf("a second key of the project creates again: HTTP %d %s", r.Code, r.Body)
		}

		// A key of another project asking for this callback gets the same
		// 404 as for an unknown callback.
		other := in.Get(t, "/btc/logs/", q("callback", cb), in.KeyB)
		unknown := in.Get(t, "/btc/logs/", q("callback", "https://shop.example/unknown"), in.KeyB)
		wantStatus(t, other, 404)
		if string(other.Body) != string(unknown.Body) {
			t.Fatalf("another key's callback is distinguishable: %s vs %s", other.Body, unknown.Body)
		}

		// Rows as the notifier and the chain watcher will write them.
		a, err := db.Address.Query().Where(entaddress.AddressIn(addrIn)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
		fwd := decimal.RequireFromString("0.00098")
		p, err := db.Payment.Create().SetAddressID(a.ID).SetAPIKeyID(a.APIKeyID).SetTxidIn("aa11").
			SetValueCoin(decimal.RequireFromString("0.00100000")).SetConfirmations(3).
			SetStatus(entpayment.StatusCompleted).SetTxidOut("bb22").SetValueForwardedCoin(fwd).
			SetCreatedAt(t0).SetUpdatedAt(t0.Add(time.Hour)).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := t0.Add(2 * time.Minute)
		n, err := db.Notification.Create().SetUUID("8d1c6b5e-0000-4000-8000-000000000001").SetOwnerID(a.APIKeyID).
			SetService(address.ServiceLabel).SetSubject(a.AddressIn).SetTopic(a.Ticker).SetSequence(address.Sequence(p.ID)).
			SetEvent("completed").SetMethod("GET").SetURL(cb + "&uuid=x").SetBody([]byte{}).
			SetStatus(notification.StatusRetrying).SetAttempts(1).SetNextAttemptAt(next).SetExpiresAt(t0.Add(48 * time.Hour)).
			SetCreatedAt(t0).SetUpdatedAt(t0).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fin := t0.Add(time.Second)
		if _, err := db.DeliveryAttempt.Create().SetNotificationID(n.ID).SetNumber(1).SetStartedAt(t0).SetFinishedAt(fin).
			SetRequestMethod("GET").SetRequestURL(cb + "&uuid=x").SetResponseStatus(500).SetResponseBody("boom").
			SetOutcome(deliveryattempt.OutcomeFailed).SetDurationMs(1000).SetNextAttemptAt(next).Save(ctx); err != nil {
			t.Fatal(err)
		}

		r = in.Get(t, "/btc/logs/", q("callback", cb), in.KeyA)
		wantStatus(t, r, 200)
		var body struct {
			Callbacks []struct {
				TxidIn        string          `json:"txid_in"`
				TxidOut       string          `json:"txid_out"`
				ValueCoin     json.RawMessage `json:"value_coin"`
				ValueFwd      json.RawMessage `json:"value_forwarded_coin"`
				Confirmations json.RawMessage `json:"confirmations"`
				PaymentStatus string          `json:"payment_status"`
				LastUpdate    time.Time       `json:"last_update"`
				Logs          []struct {
					UUID           string    `json:"uuid"`
					Attempt        int       `json:"attempt"`
					ResponseStatus int       `json:"response_status"`
					ResponseBody   string    `json:"response_body"`
					Outcome        string    `json:"outcome"`
					NextAttemptAt  time.Time `json:"next_attempt_at"`
				} `json:"logs"`
				Deliveries []struct {
					UUID          string    `json:"uuid"`
					Status        string    `json:"status"`
					Attempts      int       `json:"attempts"`
					NextAttemptAt time.Time `json:"next_attempt_at"`
					ExpiresAt     time.Time `json:"expires_at"`
				} `json:"deliveries"`
			} `json:"callbacks"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Callbacks) != 1 {
			t.Fatalf("callbacks: %s", r.Body)
		}
		c := body.Callbacks[0]
		if c.TxidIn != "aa11" || c.TxidOut != "bb22" || string(c.ValueCoin) != `"0.001"` || string(c.ValueFwd) != `"0.00098"` ||
			string(c.Confirmations) != "3" || c.PaymentStatus != "completed" || !c.LastUpdate.Equal(t0.Add(time.Hour)) {
			t.Fatalf("callback: %s", r.Body)
		}
		if len(c.Logs) != 1 || c.Logs[0].Attempt != 1 || c.Logs[0].ResponseStatus != 500 || c.Logs[0].ResponseBody != "boom" ||
			c.Logs[0].Outcome != "failed" || c.Logs[0].UUID != n.UUID || !c.Logs[0].NextAttemptAt.Equal(next) {
			t.Fatalf("logs: %s", r.Body)
		}
		if len(c.Deliveries) != 1 || c.Deliveries[0].Status != "retrying" || c.Deliveries[0].Attempts != 1 ||
			!c.Deliveries[0].NextAttemptAt.Equal(next) || !c.Deliveries[0].ExpiresAt.Equal(t0.Add(48*time.Hour)) {
			t.Fatalf("deliveries: %s", r.Body)
		}
		// Still invisible to the other key.
		wantStatus(t, in.Get(t, "/btc/logs/", q("callback", cb), in.KeyB), 404)
	}, func(c *server.Config) {
		// The rows are written by hand, due and past their expiry: a
		// running dispatcher may mark the notification failed before it
		// is read back (seen under load).
		c.ManualDelivery = true
	})
}

func TestPublicEndpoints(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		t.Run("pubkey", func(t *testing.T) {
			for _, p := range []string{"/pubkey/", "/pubkey"} {
				r := in.Get(t, p, nil, "")
				wantStatus(t, r, 200)
				block, _ := pem.Decode([]byte(r.JSON["pubkey"].(string)))
				if block == nil || block.Type != "PUBLIC KEY" {
					t.Fatalf("pubkey is not a PEM public key: %s", r.Body)
				}
				k, err := x509.ParsePKIXPublicKey(block.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				rk, ok := k.(*rsa.PublicKey)
				if !ok || rk.N.BitLen() < 2048 {
					t.Fatalf("pubkey is not RSA >= 2048 bits: %T", k)
				}
			}
		})
		t.Run("info", func(t *testing.T) {
			r := in.Get(t, "/info/", nil, "")
			if r.Code != 200 {
				t.Fatalf("HTTP %d %s", r.Code, r.Body)
			}
			var info map[string]map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &info); err != nil {
				t.Fatalf("info is not an object of objects: %v", err)
			}
			if string(info["btc"]["ticker"]) != `"btc"` || string(info["btc"]["decimals"]) != "8" || string(info["btc"]["family"]) != `"utxo"` {
				t.Fatalf("btc: %s", r.Body)
			}
			for _, tk := range family.DefaultRegistry().All() {
				if !strings.Contains(tk.Ticker, "/") && tk.Network != "sol" {
					if _, ok := info[tk.Ticker]["ticker"]; !ok {
						t.Fatalf("%s is not a coin object at top level", tk.Ticker)
					}
					continue
				}
				var c map[string]any
				if err := json.Unmarshal(info[tk.Network][tk.Coin], &c); err != nil || c["ticker"] != tk.Coin || c["ticker_path"] != tk.Ticker {
					t.Fatalf("%s not nested under %s: %s", tk.Ticker, tk.Network, info[tk.Network][tk.Coin])
				}
				if _, ok := c["minimum_transaction_coin"].(string); !ok {
					t.Fatalf("%s minimum_transaction_coin is not a string", tk.Ticker)
				}
			}
			one := in.Get(t, "/btc/info/", nil, "")
			wantStatus(t, one, 200)
			if one.JSON["ticker"] != "btc" || one.JSON["fee_rate"] == nil || one.JSON["default_confirmations"] == nil {
				t.Fatalf("btc info: %s", one.Body)
			}
		})
		t.Run("unknown endpoints and methods", func(t *testing.T) {
			r := in.Get(t, "/nope/", nil, "")
			wantStatus(t, r, 404)
			r = in.Do(t, http.MethodPost, in.BaseURL+"/btc/create/", in.KeyA)
			wantStatus(t, r, 405)
		})
		t.Run("healthz", func(t *testing.T) {
			r := in.Get(t, "/healthz", nil, "")
			wantStatus(t, r, 200)
		})
	})
}

// TestConcurrentCreates: many clients creating addresses at once all
// succeed, each with its own derivation index.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		const clients, each = 20, 3
		var wg sync.WaitGroup
		addrs := make(chan string, clients*each)
		errs := make(chan string, clients*each)
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					r := in.Get(t, "/btc/create/", q("callback", fmt.Sprintf("https://shop.example/c%d/%d", c, i), "address", btcDest), in.KeyA)
					if r.Code != 200 {
						errs <- string(r.Body)
						continue
					}
					addrs <- r.JSON["address_in"].(string)
				}
			}()
		}
		wg.Wait()
		close(addrs)
		close(errs)
		for e := range errs {
			t.Errorf("create failed: %s", e)
		}
		seen := map[string]bool{}
		for a := range addrs {
			if seen[a] {
				t.Fatalf("address %s handed out twice", a)
			}
			seen[a] = true
		}
		if len(seen) != clients*each {
			t.Fatalf("%d addresses, want %d", len(seen), clients*each)
		}
	})
}
