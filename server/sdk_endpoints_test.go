package server_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"github.com/payhook/payhook/server/apikey"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"
	"google.golang.org/grpc/codes"

	"github.com/payhook/payhook/chains/price"
	entaddress "github.com/payhook/payhook/ent/db/address"
	"github.com/payhook/payhook/ent/db/payoutrequest"
	"github.com/payhook/payhook/ent/store"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// TestQRCodeEstimateConvert: the endpoints this API family's SDKs call
// besides create and logs, over REST (both path forms) and gRPC, with every
// parameter error named.
func TestQRCodeEstimateConvert(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite)
	btcUSD, _ := price.Default().USD("btc")

	t.Run("qrcode", func(t *testing.T) {
		for _, p := range []string{"/btc/qrcode/", "/btc/qrcode"} {
			r := in.Get(t, p, q("address", btcDest, "value", "0.01", "size", "128"), in.KeyA)
			wantStatus(t, r, 200)
			if r.JSON["payment_uri"] != "bitcoin:"+btcDest+"?amount=0.01" {
				t.Fatalf("payment_uri: %s", r.Body)
			}
			png, err := base64.StdEncoding.DecodeString(r.JSON["qr_code"].(string))
			if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("qr_code is not a base64 PNG: %v", err)
			}
		}
		r := in.Get(t, "/trc20/usdt/qrcode/", q("address", trxDest), in.KeyA)
		wantStatus(t, r, 200)
		if r.JSON["payment_uri"] != "tron:"+trxDest+"?token=TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t" {
			t.Fatalf("payment_uri: %s", r.Body)
		}
	})
	t.Run("estimate", func(t *testing.T) {
		// fast is 10 blocks: two and a half times the default's 25.
		r := in.Get(t, "/btc/estimate/", q("addresses", "3", "priority", "fast"), "")
		wantStatus(t, r, 200)
		fiat, _ := r.JSON["estimated_cost_currency"].(map[string]any)
		want := btcUSD.Mul(decimal.RequireFromString("0.00005")).StringFixed(2)
		if r.JSON["estimated_cost"] != "0.00005" || fiat["USD"] != want || len(fiat) < 100 {
			t.Fatalf("estimate (USD want %s): %s", want, r.Body)
		}
	})
	t.Run("convert", func(t *testing.T) {
		r := in.Get(t, "/trc20/usdt/convert/", q("value", "0.5", "from", "btc"), "")
		wantStatus(t, r, 200)
		if r.JSON["value_coin"] != btcUSD.Div(decimal.RequireFromString("2")).String() {
			t.Fatalf("convert: %s", r.Body)
		}
	})
	t.Run("errors", func(t *testing.T) {
		rows := []struct {
			name, path string
			query      []string
			key        string
			code       int
			want       string
		}{
			{"qrcode needs a key", "/btc/qrcode/", []string{"address", btcDest}, "", 401, "missing api key"},
			{"qrcode size too small", "/btc/qrcode/", []string{"address", btcDest, "size", "63"}, in.KeyA, 400, "size: "},
			{"qrcode size too large", "/btc/qrcode/", []string{"address", btcDest, "size", "1025"}, in.KeyA, 400, "size: "},
			{"qrcode size not a number", "/btc/qrcode/", []string{"address", btcDest, "size", "big"}, in.KeyA, 400, `size: "big" is not an integer`},
			{"qrcode without address", "/btc/qrcode/", nil, in.KeyA, 400, "address: value is required"},
			{"qrcode address of another network", "/btc/qrcode/", []string{"address", trxDest}, in.KeyA, 400, "address: "},
			{"qrcode value too precise", "/btc/qrcode/", []string{"address", btcDest, "value", "0.123456789"}, in.KeyA, 400, "value: \"0.123456789\" has more than 8 decimal places"},
			{"qrcode value negative", "/btc/qrcode/", []string{"address", btcDest, "value", "-1"}, in.KeyA, 400, "value: "},
			{"estimate addresses", "/btc/estimate/", []string{"addresses", "0"}, "", 400, "addresses: "},
			{"estimate addresses not a number", "/btc/estimate/", []string{"addresses", "x"}, "", 400, `addresses: "x" is not an integer`},
			{"estimate priority", "/btc/estimate/", []string{"priority", "warp"}, "", 400, "priority: must be one of fast, default, economic"},
			{"convert unknown from", "/btc/convert/", []string{"value", "1", "from", "XYZ"}, "", 400, `from: "XYZ" is neither a fiat currency code`},
			{"convert without from", "/btc/convert/", []string{"value", "1"}, "", 400, "from: value is required"},
			{"convert bad value", "/btc/convert/", []string{"value", "1e3", "from", "usd"}, "", 400, `value: "1e3" is not a decimal number`},
			{"convert zero", "/btc/convert/", []string{"value", "0", "from", "usd"}, "", 400, "value: must be positive"},
		}
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				resp := in.Get(t, r.path, q(r.query...), r.key)
				wantStatus(t, resp, r.code)
				if msg, _ := resp.JSON["error"].(string); !strings.Contains(msg, r.want) {
					t.Fatalf("error %q, want %q", msg, r.want)
				}
			})
		}
	})
	t.Run("grpc", func(t *testing.T) {
		ctx := servertest.WithKey(context.Background(), in.KeyA)
		c := payhookv1.NewAddressServiceClient(in.Conn)
		size := int32(64)
		qr, err := c.GetQrCode(ctx, &payhookv1.GetQrCodeRequest{Ticker: "sol/usdc", Address: solDest, Value: "2", Size: &size})
		if err != nil || qr.GetPaymentUri() != "solana:"+solDest+"?amount=2&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" {
			t.Fatalf("GetQrCode: %v %v", qr, err)
		}
		est, err := c.EstimateFee(context.Background(), &payhookv1.EstimateFeeRequest{Ticker: "eth"})
		if err != nil || est.GetEstimatedCost() != "0.0005" {
			t.Fatalf("EstimateFee: %v %v", est, err)
		}
		cv, err := c.Convert(context.Background(), &payhookv1.ConvertRequest{Ticker: "btc", Value: btcUSD.String(), From: "USD"})
		if err != nil || cv.GetValueCoin() != "1" || cv.GetExchangeRate() != btcUSD.String() {
			t.Fatalf("Convert: %v %v", cv, err)
		}
		_, err = c.Convert(context.Background(), &payhookv1.ConvertRequest{Ticker: "btc", Value: "1", From: "XYZ"})
		wantCode(t, err, codes.InvalidArgument, `from: "XYZ"`)
		big := int32(5000)
		_, err = c.GetQrCode(ctx, &payhookv1.GetQrCodeRequest{Ticker: "btc", Address: btcDest, Size: &big})
		wantCode(t, err, codes.InvalidArgument, "size: ")
	})
}

// TestUnknownTickerIsNotFound: on every path that takes a ticker, an
// unknown (well-formed) ticker is 404 before the key or any parameter is
// checked, over REST and gRPC; `sol/sol` is the native coin `sol`.
func TestUnknownTickerIsNotFound(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite, func(c *server.Config) { c.Dev = true; c.ManualDelivery = true })
	// Parameters that are all wrong, so anything but the ticker check
	// answers something else.
	bad := q("callback", "ftp://x#y", "address", "nope", "confirmations", "many", "size", "big",
		"addresses", "x", "value", "-1", "from", "XYZ", "post", "maybe")
	for _, ticker := range []string{"xyz", "trc20/xyz", "abc/usdt", "btc/btc", "usdt"} {
		for _, op := range []string{"create", "logs", "info", "qrcode", "estimate", "convert", "payout"} {
			for _, slash := range []string{"/", ""} {
				path := "/" + ticker + "/" + op + slash
				t.Run(path, func(t *testing.T) {
					r := in.Get(t, path, bad, "")
					wantStatus(t, r, 404)
					if msg, _ := r.JSON["error"].(string); !strings.Contains(msg, "unknown ticker") {
						t.Fatalf("error %q", msg)
					}
				})
			}
		}
		for _, op := range []string{"pay", "mine", "reorg"} {
			path := "/devnet/" + ticker + "/" + op + "/"
			t.Run(path, func(t *testing.T) {
				wantStatus(t, in.Do(t, http.MethodPost, in.BaseURL+path, ""), 404)
			})
		}
	}
	t.Run("sol/sol is sol", func(t *testing.T) {
		r := in.Get(t, "/sol/sol/info/", nil, "")
		wantStatus(t, r, 200)
		if r.JSON["ticker_path"] != "sol" {
			t.Fatalf("%s", r.Body)
		}
		r = in.Get(t, "/sol/sol/create/", q("callback", "https://shop.example/sol", "address", solDest), in.KeyA)
		wantStatus(t, r, 200)
	})
	t.Run("grpc", func(t *testing.T) {
		c := payhookv1.NewAddressServiceClient(in.Conn)
		ctx := context.Background() // no key either
		calls := map[string]func() error{
			"CreateAddress": func() error {
				_, err := c.CreateAddress(ctx, &payhookv1.CreateAddressRequest{Ticker: "xyz"})
				return err
			},
			"GetLogs": func() error { _, err := c.GetLogs(ctx, &payhookv1.GetLogsRequest{Ticker: "xyz"}); return err },
			"GetInfo": func() error { _, err := c.GetInfo(ctx, &payhookv1.GetInfoRequest{Ticker: "xyz"}); return err },
			"GetQrCode": func() error {
				_, err := c.GetQrCode(ctx, &payhookv1.GetQrCodeRequest{Ticker: "xyz"})
				return err
			},
			"EstimateFee": func() error {
				_, err := c.EstimateFee(ctx, &payhookv1.EstimateFeeRequest{Ticker: "trc20/xyz"})
				return err
			},
			"Convert": func() error { _, err := c.Convert(ctx, &payhookv1.ConvertRequest{Ticker: "xyz"}); return err },
			"CreatePayout": func() error {
				_, err := c.CreatePayout(ctx, &payhookv1.CreatePayoutRequest{Ticker: "xyz"})
				return err
			},
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) { wantCode(t, call(), codes.NotFound, "unknown ticker") })
		}
	})
	t.Run("a malformed ticker is a parameter error", func(t *testing.T) {
		r := in.Get(t, "/b-c/info/", nil, "")
		wantStatus(t, r, 400)
	})
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent logging.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAPIKeyInQuery: the key is accepted in the apikey query parameter (as
// the BlockBee SDK sends it), and never reaches the stored callback URL,
// the server's logs or /metrics.
func TestAPIKeyInQuery(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	in := servertest.StartLogged(t, store.SQLite, logger)

	const cb = "https://shop.example/hook?order=1"
	r := in.Get(t, "/btc/create/", q("callback", cb, "address", btcDest, "apikey", in.KeyA), "")
	wantStatus(t, r, 200)
	// The key in the callback's own query stays part of the merchant's URL
	// only if the merchant put it there; the SDKs put it beside.
	r = in.Get(t, "/btc/logs/", q("apikey", in.KeyA, "callback", cb), "")
	wantStatus(t, r, 200)
	r = in.Do(t, http.MethodGet, in.BaseURL+"/btc/qrcode/?address="+btcDest+"&apikey="+in.KeyA+"&apikey="+in.KeyA, "")
	wantStatus(t, r, 200)
	// Unknown key in the query, and a query key that contradicts the header.
	r = in.Get(t, "/btc/logs/", q("apikey", "ph_nope", "callback", cb), "")
	wantStatus(t, r, 401)
	r = in.Get(t, "/btc/logs/", q("apikey", in.KeyB, "callback", cb), in.KeyA)
	wantStatus(t, r, 400)
	if msg := r.JSON["error"].(string); !strings.Contains(msg, "apikey: given more than once") {
		t.Fatalf("error %q", msg)
	}
	r = in.Do(t, http.MethodGet, in.BaseURL+"/btc/logs/?callback=x&apikey=%zz", "")
	wantStatus(t, r, 400)

	a, err := in.Server.DB().Client.Address.Query().Where(entaddress.AddressIn(r2s(t, in, cb))).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a.CallbackURL != cb {
		t.Fatalf("stored callback %q, want %q", a.CallbackURL, cb)
	}
	metrics := in.Get(t, "/metrics", nil, in.OperatorKey(t)).Body
	for what, text := range map[string]string{"callback URL": a.CallbackURL, "logs": logs.String(), "metrics": string(metrics)} {
		for _, key := range []string{in.KeyA, in.KeyB} {
			if strings.Contains(text, key) || strings.Contains(text, key[3:]) {
				t.Errorf("the %s contain an API key", what)
			}
		}
	}
	if !strings.Contains(logs.String(), "CreateAddress") {
		t.Fatalf("the test saw no request logs:\n%s", logs.String())
	}
}

// r2s returns the address_in of the address created with callback cb.
func r2s(t *testing.T, in *servertest.Instance, cb string) string {
	t.Helper()
	r := in.Get(t, "/btc/logs/", q("callback", cb), in.KeyA)
	wantStatus(t, r, 200)
	return r.JSON["address_in"].(string)
}

// TestCreatePayout: a payout request is recorded for its key, answered with
// its id and status, and every parameter error is named.
func TestCreatePayout(t *testing.T) {
	t.Parallel()
	forEachServer(t, func(t *testing.T, in *servertest.Instance) {
		r := in.Get(t, "/trc20/usdt/payout/", q("address", trxDest, "value", "12.345678"), in.KeyA)
		wantStatus(t, r, 200)
		if r.JSON["payout_status"] != "pending" || r.JSON["value"] != "12.345678" || r.JSON["address"] != trxDest {
			t.Fatalf("%s", r.Body)
		}
		id, _ := r.JSON["payout_id"].(string)
		p, err := in.Server.DB().Client.PayoutRequest.Query().Where(payoutrequest.UUID(id)).Only(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p.Ticker != "trc20/usdt" || !p.Value.Equal(decimal.RequireFromString("12.345678")) || p.Address != trxDest {
			t.Fatalf("stored %+v", p)
		}
		again := in.Get(t, "/trc20/usdt/payout", q("address", trxDest, "value", "12.345678"), in.KeyB)
		wantStatus(t, again, 200)
		if again.JSON["payout_id"] == id {
			t.Fatal("a second request got the first one's id")
		}
		// The operator sees both, oldest first; a merchant may not list them.
		opKey, _, err := apikey.CreateOperator(context.Background(), in.Server.DB().Client, "ops", clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, in.Get(t, "/operator/payouts", nil, in.KeyA), 403)
		list := in.Get(t, "/operator/payouts", nil, opKey)
		wantStatus(t, list, 200)
		reqs, _ := list.JSON["requests"].([]any)
		if len(reqs) != 2 || reqs[0].(map[string]any)["uuid"] != id || reqs[0].(map[string]any)["value"] != "12.345678" ||
			reqs[0].(map[string]any)["address"] != trxDest || reqs[0].(map[string]any)["status"] != "pending" {
			t.Fatalf("operator's payout requests: %s", list.Body)
		}
		rows := []struct {
			name  string
			query []string
			key   string
			code  int
			want  string
		}{
			{"no key", []string{"address", trxDest, "value", "1"}, "", 401, "missing api key"},
			{"no address", []string{"value", "1"}, in.KeyA, 400, "address: value is required"},
			{"address of another network", []string{"address", btcDest, "value", "1"}, in.KeyA, 400, "address: "},
			{"no value", []string{"address", trxDest}, in.KeyA, 400, "value: value is required"},
			{"value too precise", []string{"address", trxDest, "value", "1.0000001"}, in.KeyA, 400, "value: \"1.0000001\" has more than 6 decimal places"},
			{"value zero", []string{"address", trxDest, "value", "0"}, in.KeyA, 400, "value: must be positive"},
		}
		for _, row := range rows {
			t.Run(row.name, func(t *testing.T) {
				resp := in.Get(t, "/trc20/usdt/payout/", q(row.query...), row.key)
				wantStatus(t, resp, row.code)
				if msg, _ := resp.JSON["error"].(string); !strings.Contains(msg, row.want) {
					t.Fatalf("error %q, want %q", msg, row.want)
				}
			})
		}
	})
}
