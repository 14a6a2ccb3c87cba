package address

import (
	"github.com/payhook/payhook/notifier/payload"

	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current encoder")

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }
func decp(s string) *decimal.Decimal {
	d := dec(s)
	return &d
}
func strp(s string) *string { return &s }

// goldenCases are the callbacks whose exact wire bytes are pinned in
// testdata/<name>.golden.
var goldenCases = []struct {
	name string
	url  string
	cb   Callback
}{
	{
		// Progress event: txid_out, forwarded amount, fees and the forwarded
		// conversion are set but must not be sent.
		name: "pending",
		url:  "https://shop.example/cb",
		cb: Callback{
			UUID:                      "7b1e5c1a-0d3e-4f8e-9a51-2d0c6f1b9e01",
			AddressIn:                 "bc1qin0000000000000000000000000000000000",
			AddressOut:                []Share{{"bc1qdest000000000000000000000000000000a", dec("0.6")}, {"bc1qdest000000000000000000000000000000b", dec("0.4")}},
			TxidIn:                    "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
			TxidOut:                   "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
			Confirmations:             1,
			RequiredConfirmations:     3,
			PaymentStatus:             StatusPending,
			Coin:                      "btc",
			Decimals:                  8,
			Price:                     decp("65000.12"),
			ValueCoin:                 dec("0.00120000"),
			ValueForwardedCoin:        payload.AmountOf(dec("0.00118")),
			FeeCoin:                   payload.AmountOf(dec("0.00001")),
			NetworkFee:                payload.AmountNull(),
			ValueForwardedCoinConvert: strp(`{"USD":"76.70"}`),
		},
	},
	{
		// Callback URL with its own query (merchant parameters), kept byte
		// for byte on the URL and repeated as fields in POST bodies.
		name: "confirmed_query",
		url:  "https://shop.example/ipn?order=1234&sig=a%2Fb+c",
		cb: Callback{
			UUID:                  "0c9a4d2e-51f7-4b7a-8f43-93f6a1d7c002",
			AddressIn:             "ltc1qin000000000000000000000000000000000",
			AddressOut:            []Share{{"ltc1qdest00000000000000000000000000000000", dec("1")}},
			TxidIn:                "0101010101010101010101010101010101010101010101010101010101010101",
			Confirmations:         3,
			RequiredConfirmations: 3,
			PaymentStatus:         StatusConfirmed,
			Coin:                  "ltc",
			Decimals:              8,
			Price:                 decp("84.5"),
			ValueCoin:             dec("2.5"),
			ValueCoinConvert:      strp(`{"USD":"211.25","EUR":"194.62"}`),
			Params:                []payload.Param{{Key: "order", Value: "1234"}, {Key: "sig", Value: "a/b c"}},
		},
	},
	{
		// Completed token event with conversion maps on both values.
		name: "completed_convert",
		url:  "https://shop.example/hooks/usdt?",
		cb: Callback{
			UUID:                      "5f0e2b8c-9c1d-4d6e-b7a2-6e3c4f5a6b03",
			AddressIn:                 "TXin00000000000000000000000000000a",
			AddressOut:                []Share{{"TXdest000000000000000000000000001", dec("0.75")}, {"TXdest000000000000000000000000002", dec("0.25")}},
			TxidIn:                    "0202020202020202020202020202020202020202020202020202020202020202",
			TxidOut:                   "0303030303030303030303030303030303030303030303030303030303030303",
			Confirmations:             20,
			RequiredConfirmations:     19,
			PaymentStatus:             StatusCompleted,
			Coin:                      "usdt",
			Decimals:                  6,
			Price:                     decp("1.0001"),
			ValueCoin:                 dec("150.000000"),
			ValueForwardedCoin:        payload.AmountOf(dec("148.5")),
			FeeCoin:                   payload.AmountOf(dec("1.5")),
			NetworkFee:                payload.AmountOf(dec("0")),
			ValueCoinConvert:          strp(`{"USD":"150.02","EUR":"138.21"}`),
			ValueForwardedCoinConvert: strp(`{"USD":"148.51","EUR":"136.83"}`),
			Params:                    []payload.Param{{Key: "invoice", Value: "INV-77"}},
		},
	},
	{
		// Completed event whose fees are unknown (JSON null; omitted in
		// GET and form), with a conversion that failed ({}) and a bare
		// numeric USD value instead of a map; no price.
		name: "completed_null_fees",
		url:  "http://merchant.example:8080/callback.php",
		cb: Callback{
			UUID:                      "e3b0c442-98fc-4c14-9afb-f4c8996fb904",
			AddressIn:                 "DIn000000000000000000000000000000",
			AddressOut:                []Share{{"DDest00000000000000000000000000000", dec("1")}},
			TxidIn:                    "0404040404040404040404040404040404040404040404040404040404040404",
			Confirmations:             6,
			RequiredConfirmations:     6,
			PaymentStatus:             StatusCompleted,
			Coin:                      "doge",
			Decimals:                  8,
			ValueCoin:                 dec("100"),
			ValueForwardedCoin:        payload.AmountOf(dec("99")),
			FeeCoin:                   payload.AmountNull(),
			NetworkFee:                payload.AmountNull(),
			ValueCoinConvert:          strp(`{}`),
			ValueForwardedCoinConvert: strp(`12.5`),
		},
	},
	{
		// 18-decimal coin: the smallest unit, and rounding of a value
		// given with more precision than the coin has.
		name: "eth_18_decimals",
		url:  "https://shop.example/eth",
		cb: Callback{
			UUID:                  "9d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b05",
			AddressIn:             "0x1111111111111111111111111111111111111111",
			AddressOut:            []Share{{"0x2222222222222222222222222222222222222222", dec("0.33333333")}, {"0x3333333333333333333333333333333333333333", dec("0.66666667")}},
			TxidIn:                "0x0505050505050505050505050505050505050505050505050505050505050505",
			TxidOut:               "0x0606060606060606060606060606060606060606060606060606060606060606",
			Confirmations:         12,
			RequiredConfirmations: 12,
			PaymentStatus:         StatusCompleted,
			Coin:                  "eth",
			Decimals:              18,
			Price:                 decp("3120.55"),
			ValueCoin:             dec("1.0000000000000000005"),
			ValueForwardedCoin:    payload.AmountOf(dec("0.000000000000000001")),
			FeeCoin:               payload.AmountOf(dec("0.9899999999999999995")),
			NetworkFee:            payload.AmountOf(dec("0.01")),
		},
	},
	{
		// Custom parameters that need escaping, one named like a payload
		// field (left out of bodies), one repeated (form keeps both, JSON
		// the first), and a callback URL without a path.
		name: "params_edge",
		url:  "https://shop.example?token=s3cr%C3%A9t&coin=spoof&tag=a&tag=b",
		cb: Callback{
			UUID:                  "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c06",
			AddressIn:             "So1In1111111111111111111111111111111111111",
			AddressOut:            []Share{{"So1Dest111111111111111111111111111111111111", dec("1")}},
			TxidIn:                "5xSolanaSignature111111111111111111111111111111111111111111111111111111111111111111",
			Confirmations:         1,
			RequiredConfirmations: 1,
			PaymentStatus:         StatusConfirmed,
			Coin:                  "sol",
			Decimals:              9,
			ValueCoin:             dec("0.5"),
			Params:                []payload.Param{{Key: "token", Value: "s3crét"}, {Key: "coin", Value: "spoof"}, {Key: "tag", Value: "a"}, {Key: "tag", Value: "b"}, {Key: "note", Value: `he said "hi" & left <ok>`}},
		},
	},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			fmt.Fprintf(&got, "# callback URL: %s\n", tc.url)
			for _, tr := range []payload.Transport{payload.TransportGET, payload.TransportForm, payload.TransportJSON} {
				req, err := EncodeCallback(tc.url, tr, tc.cb)
				if err != nil {
					t.Fatalf("Encode %s: %v", tr, err)
				}
				again, _ := EncodeCallback(tc.url, tr, tc.cb)
				if again.URL != req.URL || !bytes.Equal(again.Body, req.Body) {
					t.Fatalf("Encode %s is not deterministic", tr)
				}
				fmt.Fprintf(&got, "\n== %s\nmethod: %s\nurl: %s\ncontent-type: %s\nbody: %s\nsigned: %s\n",
					tr, req.Method, req.URL, req.ContentType, req.Body, payload.SignedData(req))
			}
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the encoder's output (go test -run TestGolden -update to accept):\n--- got\n%s\n--- want\n%s", path, got.Bytes(), want)
			}
		})
	}
}

func TestProgressOmitsDistribution(t *testing.T) {
	base := goldenCases[2].cb // completed, everything set
	for _, status := range []string{StatusPending, StatusConfirmed} {
		cb := base
		cb.PaymentStatus = status
		req, err := EncodeCallback("https://shop.example/cb", payload.TransportJSON, cb)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{fTxidOut, fValueForwardedCoin, fFeeCoin, fNetworkFee, fValueForwardedCoinConvert} {
			if bytes.Contains(req.Body, []byte(`"`+f+`"`)) {
				t.Errorf("%s event carries %s: %s", status, f, req.Body)
			}
		}
		if !bytes.Contains(req.Body, []byte(`"value_coin_convert"`)) {
			t.Errorf("%s event lost value_coin_convert: %s", status, req.Body)
		}
	}
}

func TestSignedData(t *testing.T) {
	get := payload.Request{Method: "GET", URL: "https://x.example/?a=1", Body: []byte("ignored")}
	if got := string(payload.SignedData(get)); got != get.URL {
		t.Errorf("GET signed data = %q, want the URL", got)
	}
	post := payload.Request{Method: "POST", URL: "https://x.example/", Body: []byte(`{"a":1}`)}
	if got := string(payload.SignedData(post)); got != `{"a":1}` {
		t.Errorf("POST signed data = %q, want the body", got)
	}
}

func TestEncodeErrors(t *testing.T) {
	ok := goldenCases[2].cb
	tests := []struct {
		name   string
		url    string
		tr     payload.Transport
		mutate func(*Callback)
		field  string
	}{
		{name: "empty uuid", mutate: func(c *Callback) { c.UUID = "" }, field: "uuid"},
		{name: "empty address_in", mutate: func(c *Callback) { c.AddressIn = "" }, field: "address_in"},
		{name: "empty txid_in", mutate: func(c *Callback) { c.TxidIn = "" }, field: "txid_in"},
		{name: "empty coin", mutate: func(c *Callback) { c.Coin = "" }, field: "coin"},
		{name: "bad utf-8 uuid", mutate: func(c *Callback) { c.UUID = "\xff" }, field: "uuid"},
		{name: "unknown status", mutate: func(c *Callback) { c.PaymentStatus = "done" }, field: "payment_status"},
		{name: "upper-case status", mutate: func(c *Callback) { c.PaymentStatus = "Completed" }, field: "payment_status"},
		{name: "empty status", mutate: func(c *Callback) { c.PaymentStatus = "" }, field: "payment_status"},
		{name: "negative confirmations", mutate: func(c *Callback) { c.Confirmations = -1 }, field: "confirmations"},
		{name: "zero required confirmations", mutate: func(c *Callback) { c.RequiredConfirmations = 0 }, field: "required_confirmations"},
		{name: "negative decimals", mutate: func(c *Callback) { c.Decimals = -1 }, field: "decimals"},
		{name: "too many decimals", mutate: func(c *Callback) { c.Decimals = payload.MaxDecimals + 1 }, field: "decimals"},
		{name: "negative value", mutate: func(c *Callback) { c.ValueCoin = dec("-1") }, field: "value_coin"},
		{name: "huge value", mutate: func(c *Callback) { c.ValueCoin = dec("1e100") }, field: "value_coin"},
		{name: "absurd exponent", mutate: func(c *Callback) { c.ValueCoin = decimal.New(5, 999_999_999) }, field: "value_coin"},
		{name: "too many places", mutate: func(c *Callback) { c.ValueCoin = dec("1e-65") }, field: "value_coin"},
		{name: "negative price", mutate: func(c *Callback) { c.Price = decp("-0.01") }, field: "price"},
		{name: "negative forwarded", mutate: func(c *Callback) { c.ValueForwardedCoin = payload.AmountOf(dec("-2")) }, field: "value_forwarded_coin"},
		{name: "null forwarded", mutate: func(c *Callback) { c.ValueForwardedCoin = payload.AmountNull() }, field: "value_forwarded_coin"},
		{name: "negative fee", mutate: func(c *Callback) { c.FeeCoin = payload.AmountOf(dec("-0.1")) }, field: "fee_coin"},
		{name: "negative network fee", mutate: func(c *Callback) { c.NetworkFee = payload.AmountOf(dec("-0.1")) }, field: "network_fee"},
		{name: "null and valid", mutate: func(c *Callback) { c.NetworkFee = payload.Amount{Valid: true, Null: true} }, field: "network_fee"},
		{name: "convert not JSON", mutate: func(c *Callback) { c.ValueCoinConvert = strp(`{"USD":`) }, field: "value_coin_convert"},
		{name: "convert empty", mutate: func(c *Callback) { c.ValueCoinConvert = strp(``) }, field: "value_coin_convert"},
		{name: "forwarded convert not JSON", mutate: func(c *Callback) { c.ValueForwardedCoinConvert = strp(`USD=1`) }, field: "value_forwarded_coin_convert"},
		{name: "destination without address", mutate: func(c *Callback) { c.AddressOut = []Share{{"", dec("1")}} }, field: "address_out"},
		{name: "destination twice", mutate: func(c *Callback) { c.AddressOut = []Share{{"a", dec("0.5")}, {"a", dec("0.5")}} }, field: "address_out"},
		{name: "zero share", mutate: func(c *Callback) { c.AddressOut = []Share{{"a", dec("0")}} }, field: "address_out"},
		{name: "negative share", mutate: func(c *Callback) { c.AddressOut = []Share{{"a", dec("-1")}} }, field: "address_out"},
		{name: "param without name", mutate: func(c *Callback) { c.Params = []payload.Param{{Key: "a", Value: "1"}, {Key: "", Value: "2"}} }, field: "params[1]"},
		{name: "unknown transport", tr: payload.Transport(7), field: "transport"},
		{name: "empty url", url: "-", field: "callback_url"},
		{name: "ftp url", url: "ftp://shop.example/cb", field: "callback_url"},
		{name: "relative url", url: "/cb", field: "callback_url"},
		{name: "no host", url: "https:///cb", field: "callback_url"},
		{name: "opaque url", url: "https:shop.example", field: "callback_url"},
		{name: "upper-case scheme", url: "HTTPS://shop.example/cb", field: "callback_url"},
		{name: "credentials", url: "https://user:pw@shop.example/cb", field: "callback_url"},
		{name: "fragment", url: "https://shop.example/cb#x", field: "callback_url"},
		{name: "space", url: "https://shop.example/a b", field: "callback_url"},
		{name: "non-ascii", url: "https://shop.example/café", field: "callback_url"},
		{name: "bad escape in path", url: "https://shop.example/%zz", field: "callback_url"},
		{name: "path a client re-encodes", url: `https://shop.example/a\b`, field: "callback_url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cb := ok
			if tc.mutate != nil {
				tc.mutate(&cb)
			}
			u := "https://shop.example/cb"
			switch tc.url {
			case "":
			case "-":
				u = ""
			default:
				u = tc.url
			}
			tr := payload.TransportJSON
			if tc.tr != 0 {
				tr = tc.tr
			}
			_, err := EncodeCallback(u, tr, cb)
			if !errors.Is(err, payload.ErrInvalid) {
				t.Fatalf("err = %v, want payload.ErrInvalid", err)
			}
			var fe *payload.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err = %v, want a payload.FieldError on %s", err, tc.field)
			}
			if strings.TrimSpace(fe.Reason) == "" {
				t.Fatal("empty reason")
			}
		})
	}
}

func TestGETSeparator(t *testing.T) {
	cb := goldenCases[0].cb
	for base, prefix := range map[string]string{
		"https://s.example/cb":      "https://s.example/cb?uuid=",
		"https://s.example/cb?":     "https://s.example/cb?uuid=",
		"https://s.example/cb?a=1":  "https://s.example/cb?a=1&uuid=",
		"https://s.example/cb?a=1&": "https://s.example/cb?a=1&uuid=",
	} {
		req, err := EncodeCallback(base, payload.TransportGET, cb)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(req.URL, prefix) {
			t.Errorf("%s: URL %s, want prefix %s", base, req.URL, prefix)
		}
		if req.Body != nil || req.ContentType != "" {
			t.Errorf("GET has a body or content type: %+v", req)
		}
	}
}

func TestReservedFields(t *testing.T) {
	if len(ReservedFields) != len(fieldOrder) {
		t.Fatalf("ReservedFields has %d names, the encoder writes %d", len(ReservedFields), len(fieldOrder))
	}
	for i, f := range fieldOrder {
		if ReservedFields[i] != f || !IsReserved(f) {
			t.Errorf("field %d: %s not reserved", i, f)
		}
	}
	if IsReserved("order_id") || IsReserved("UUID") {
		t.Error("IsReserved is too broad")
	}
	fo := FieldOrder()
	fo[0] = "changed"
	if fieldOrder[0] != "uuid" {
		t.Error("FieldOrder returned the package's own array")
	}
}
