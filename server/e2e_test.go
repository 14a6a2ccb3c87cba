package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/receiver"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/servertest"
)

// callbackSink is a merchant receiver: it verifies every callback against
// the pinned /pubkey/ and keeps what it got.
type callbackSink struct {
	*httptest.Server
	mu   sync.Mutex
	got  []received
	errs []string
}

type received struct {
	method, contentType string
	fields              map[string]json.RawMessage // JSON transport
	form                url.Values                 // GET and form transports
}

func (r received) status() string {
	if r.fields != nil {
		var s string
		_ = json.Unmarshal(r.fields["payment_status"], &s)
		return s
	}
	return r.form.Get("payment_status")
}

func newSink(t *testing.T) *callbackSink {
	s := &callbackSink{}
	var v *receiver.Verifier
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pin" {
			body, _ := io.ReadAll(r.Body)
			pub, err := receiver.ParsePublicKeyPEM(body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			v = receiver.NewVerifier(pub)
			return
		}
		data, err := v.Verify(r)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.errs = append(s.errs, err.Error())
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		got := received{method: r.Method, contentType: r.Header.Get("Content-Type")}
		switch {
		case r.Method == http.MethodGet:
			got.form = r.URL.Query()
		case strings.HasPrefix(got.contentType, "application/json"):
			if err := json.Unmarshal(data, &got.fields); err != nil {
				s.errs = append(s.errs, "JSON body: "+err.Error())
			}
		default:
			got.form, _ = url.ParseQuery(string(data))
		}
		s.got = append(s.got, got)
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *callbackSink) statuses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.got))
	for i, g := range s.got {
		out[i] = g.status()
	}
	return out
}

// devEnv is a --dev server with manual delivery (unless mutate says
// otherwise) and a verifying sink.
type devEnv struct {
	in   *servertest.Instance
	sink *callbackSink
}

func newDevEnv(t *testing.T, d store.Dialect, mutate ...func(*server.Config)) *devEnv {
	t.Helper()
	sink := newSink(t)
	in := servertest.Start(t, d, append([]func(*server.Config){func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
		c.Delivery.AllowPrivateEndpoints = servertest.AllowPrivate(sink.URL+"/hook", servertest.A, servertest.B)
	}}, mutate...)...)
	pub := in.Get(t, "/pubkey/", nil, in.KeyA).JSON["pubkey"].(string)
	resp, err := http.Post(sink.URL+"/pin", "text/plain", strings.NewReader(pub))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return &devEnv{in: in, sink: sink}
}

func (e *devEnv) post(t *testing.T, path string, body any) servertest.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, e.in.BaseURL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return roundTrip(t, req)
}

// roundTrip sends req and reads the answer (its JSON when it is JSON).
func roundTrip(t *testing.T, req *http.Request) servertest.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := servertest.Response{Code: resp.StatusCode, Body: raw}
	_ = json.Unmarshal(raw, &r.JSON)
	return r
}

func (e *devEnv) mine(t *testing.T, ticker string, blocks int) {
	t.Helper()
	wantStatus(t, e.post(t, "/devnet/"+ticker+"/mine/", map[string]any{"blocks": blocks}), 200)
	if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func destinations(t *testing.T, tk chains.Ticker) (string, string) {
	t.Helper()
	d, err := chains.NewDeriver(bytes.Repeat([]byte{0x42}, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := d.Address(tk, 1000)
	b, _ := d.Address(tk, 1001)
	return a, b
}

// TestEndToEndPerFamily pays every family on the devnet through the real
// server and checks the callbacks the merchant's receiver gets.
func TestEndToEndPerFamily(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	cases := []struct {
		ticker    string
		confs     string // requested confirmations ("" = default)
		value     string
		steps     []int    // blocks to mine, one call each
		want      []string // statuses received, in order
		transport string   // json, post or get
	}{
		{"btc", "3", "0.05", []int{1, 1, 1}, []string{"pending", "pending", "confirmed", "completed"}, "json"},
		{"ltc", "2", "0.5", []int{5}, []string{"confirmed", "completed"}, "post"},
		{"doge", "1", "100", []int{1}, []string{"confirmed", "completed"}, "get"},
		{"bch", "2", "0.1", []int{1, 1}, []string{"pending", "confirmed", "completed"}, "json"},
		{"eth", "3", "0.25", []int{1, 2}, []string{"pending", "confirmed", "completed"}, "json"},
		{"erc20/usdt", "3", "120.5", []int{3}, []string{"confirmed", "completed"}, "post"},
		{"bep20/usdt", "3", "50", []int{3}, []string{"confirmed", "completed"}, "json"},
		{"polygon/pol", "16", "30", []int{16}, []string{"confirmed", "completed"}, "get"},
		// TRON: credit at the configured depth, distribution at >= 23 (TRX)
		// / 20 (TRC20) with a solidified receipt.
		{"trx", "5", "250", []int{4, 1, 17, 1}, []string{"pending", "confirmed", "completed"}, "json"},
		{"trc20/usdt", "5", "99.99", []int{5, 14, 1}, []string{"confirmed", "completed"}, "json"},
		// Solana: no pending; SOL at finalized, SPL at confirmed.
		{"sol", "", "1.5", []int{1, 1, 1}, []string{"confirmed", "completed"}, "json"},
		{"sol/usdc", "", "25", []int{1, 1}, []string{"confirmed", "completed"}, "post"},
	}
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.ticker, func(t *testing.T) {
					e := newDevEnv(t, d)
					tk, _ := reg.Lookup(c.ticker)
					destA, destB := destinations(t, tk)
					params := q("callback", e.sink.URL+"/hook?order=77", "address", "0.6@"+destA+"|0.4@"+destB, "convert", "1")
					if c.confs != "" {
						params.Set("confirmations", c.confs)
					}
					switch c.transport {
					case "json":
						params.Set("json", "1")
					case "post":
						params.Set("post", "1")
					}
					r := e.in.Get(t, "/"+c.ticker+"/create/", params, e.in.KeyA)
					wantStatus(t, r, 200)
					addrIn := r.JSON["address_in"].(string)

					pay := e.post(t, "/devnet/"+c.ticker+"/pay/", map[string]any{"address_in": addrIn, "value_coin": c.value})
					wantStatus(t, pay, 200)
					txid := pay.JSON["txid_in"].(string)
					for i, n := range c.steps {
						e.mine(t, c.ticker, n)
						if i < len(c.steps)-1 && len(e.sink.statuses()) == len(c.want) {
							t.Fatalf("completed early, after step %d: %v", i+1, e.sink.statuses())
						}
					}
					if len(e.sink.errs) > 0 {
						t.Fatalf("receiver rejected callbacks: %v", e.sink.errs)
					}
					if got := e.sink.statuses(); strings.Join(got, ",") != strings.Join(c.want, ",") {
						t.Fatalf("callbacks %v, want %v", got, c.want)
					}
					checkCallbacks(t, e, tk, c.transport, addrIn, txid, c.value, destA, destB)
				})
			}
		})
	}
}

// checkCallbacks asserts field types per transport, conversion maps,
// forwarded amounts summing exactly, and the logs.
func checkCallbacks(t *testing.T, e *devEnv, tk chains.Ticker, transport, addrIn, txid, value, destA, destB string) {
	t.Helper()
	e.sink.mu.Lock()
	got := append([]received(nil), e.sink.got...)
	e.sink.mu.Unlock()
	uuids := map[string]bool{}
	for _, g := range got {
		var uuid, status string
		if transport == "json" {
			f := g.fields
			_ = json.Unmarshal(f["uuid"], &uuid)
			status = g.status()
			for _, name := range []string{"confirmations", "required_confirmations", "value_coin"} {
				if _, err := decimal.NewFromString(string(f[name])); err != nil || f[name][0] == '"' {
					t.Fatalf("%s %s is not a JSON number: %s", status, name, f[name])
				}
			}
			var out map[string]json.Number
			if err := json.Unmarshal(f["address_out"], &out); err != nil || out[destA] != "0.6" || out[destB] != "0.4" {
				t.Fatalf("address_out %s", f["address_out"])
			}
			var conv string
			if err := json.Unmarshal(f["value_coin_convert"], &conv); err != nil {
				t.Fatalf("value_coin_convert is not a JSON string: %s", f["value_coin_convert"])
			}
			var fiat map[string]string
			if err := json.Unmarshal([]byte(conv), &fiat); err != nil || fiat["USD"] == "" || fiat["EUR"] == "" || len(fiat) < 100 {
				t.Fatalf("value_coin_convert %s", conv)
			}
			if _, err := decimal.NewFromString(string(f["value_coin"])); err != nil || !decimal.RequireFromString(string(f["value_coin"])).Equal(decimal.RequireFromString(value)) {
				t.Fatalf("value_coin %s, want %s", f["value_coin"], value)
			}
			if string(f["order"]) != `"77"` {
				t.Fatalf("custom parameter order = %s", f["order"])
			}
			var conf int
			_ = json.Unmarshal(f["confirmations"], &conf)
			if tk.Family == chains.FamilySolana && (conf != 1 || string(f["required_confirmations"]) != "1") {
				t.Fatalf("solana confirmations %s/%s", f["confirmations"], f["required_confirmations"])
			}
			if status == "completed" {
				var txidOut string
				_ = json.Unmarshal(f["txid_out"], &txidOut)
				fwd := decimal.RequireFromString(string(f["value_forwarded_coin"]))
				fee := decimal.RequireFromString(string(f["fee_coin"]))
				nf := decimal.RequireFromString(string(f["network_fee"]))
				if txidOut == "" || !fwd.Add(fee).Add(nf).Equal(decimal.RequireFromString(value)) {
					t.Fatalf("completed: txid_out %q, %s + %s + %s != %s", txidOut, fwd, fee, nf, value)
				}
				if !fee.Equal(decimal.RequireFromString(value).Mul(tk.FeeRate).Round(tk.Decimals)) && fee.Sub(decimal.RequireFromString(value).Mul(tk.FeeRate)).Abs().GreaterThan(decimal.New(1, -tk.Decimals)) {
					t.Fatalf("fee %s is not %s x %s", fee, value, tk.FeeRate)
				}
				if _, ok := f["value_forwarded_coin_convert"]; !ok {
					t.Fatal("completed without value_forwarded_coin_convert")
				}
				checkForwardOutputs(t, e, tk, fwd, destA, destB)
			} else {
				for _, name := range []string{"txid_out", "value_forwarded_coin", "fee_coin", "network_fee", "value_forwarded_coin_convert"} {
					if _, has := f[name]; has {
						t.Fatalf("%s callback carries %s", status, name)
					}
				}
			}
		} else {
			uuid, status = g.form.Get("uuid"), g.form.Get("payment_status")
			if g.form.Get("order") != "77" || g.form.Get("address_in") != addrIn || g.form.Get("txid_in") != txid {
				t.Fatalf("%s fields %v", transport, g.form)
			}
			var out map[string]json.Number
			if err := json.Unmarshal([]byte(g.form.Get("address_out")), &out); err != nil || out[destA] != "0.6" {
				t.Fatalf("address_out %q is not a JSON-encoded object", g.form.Get("address_out"))
			}
			if !strings.HasPrefix(g.form.Get("value_coin_convert"), "{") {
				t.Fatalf("value_coin_convert %q", g.form.Get("value_coin_convert"))
			}
			if (transport == "get") != (g.method == http.MethodGet) {
				t.Fatalf("transport %s sent %s", transport, g.method)
			}
			if status == "completed" {
				fwd := decimal.RequireFromString(g.form.Get("value_forwarded_coin"))
				checkForwardOutputs(t, e, tk, fwd, destA, destB)
			}
		}
		if uuids[uuid] {
			t.Fatalf("uuid %s reused for another status", uuid)
		}
		uuids[uuid] = true
	}
	r := e.in.Get(t, "/"+tk.Ticker+"/logs/", q("callback", e.sink.URL+"/hook?order=77"), e.in.KeyA)
	wantStatus(t, r, 200)
	cbs := r.JSON["callbacks"].([]any)
	if len(cbs) != 1 {
		t.Fatalf("logs: %s", r.Body)
	}
	cb := cbs[0].(map[string]any)
	if cb["payment_status"] != "completed" || cb["txid_in"] != txid || cb["txid_out"] == nil || len(cb["deliveries"].([]any)) != len(got) {
		t.Fatalf("logs: %s", r.Body)
	}
}

// checkForwardOutputs asserts the devnet received one forward whose outputs
// sum exactly to the forwarded value, split 0.6/0.4.
func checkForwardOutputs(t *testing.T, e *devEnv, tk chains.Ticker, forwarded decimal.Decimal, destA, destB string) {
	t.Helper()
	c, _ := e.in.Server.Devnet().Chain(tk.Ticker)
	fwds := c.Forwards()
	if len(fwds) != 1 {
		t.Fatalf("%d forwards broadcast, want exactly 1", len(fwds))
	}
	sum := decimal.Zero
	for _, o := range fwds[0].Outputs {
		sum = sum.Add(o.Amount)
		if -o.Amount.Exponent() > tk.Decimals && !o.Amount.Equal(o.Amount.Round(tk.Decimals)) {
			t.Fatalf("output %s finer than %d decimals", o.Amount, tk.Decimals)
		}
	}
	if !sum.Equal(forwarded) {
		t.Fatalf("outputs sum to %s, forwarded %s", sum, forwarded)
	}
	if fwds[0].Outputs[0].Address != destA || fwds[0].Outputs[1].Address != destB {
		t.Fatalf("outputs %+v", fwds[0].Outputs)
	}
}

// TestDevnetEdgeCases: execution failure, reorg before credit, several
// payments to one address, below-minimum payments.
func TestDevnetEdgeCases(t *testing.T) {
	t.Parallel()
	reg := family.DefaultRegistry()
	e := newDevEnv(t, store.SQLite)
	create := func(ticker, cb, confs string) string {
		tk, _ := reg.Lookup(ticker)
		dest, _ := destinations(t, tk)
		r := e.in.Get(t, "/"+ticker+"/create/", q("callback", e.sink.URL+"/hook?case="+cb, "address", dest, "confirmations", confs, "json", "1"), e.in.KeyA)
		wantStatus(t, r, 200)
		return r.JSON["address_in"].(string)
	}
	logs := func(ticker, cb string) []any {
		r := e.in.Get(t, "/"+ticker+"/logs/", q("callback", e.sink.URL+"/hook?case="+cb), e.in.KeyA)
		wantStatus(t, r, 200)
		return r.JSON["callbacks"].([]any)
	}

	t.Run("failed execution is never credited", func(t *testing.T) {
		a := create("erc20/usdt", "revert", "3")
		wantStatus(t, e.post(t, "/devnet/erc20/usdt/pay", map[string]any{"address_in": a, "value_coin": "10", "fail_execution": true}), 200)
		before := len(e.sink.statuses())
		e.mine(t, "erc20/usdt", 10)
		if len(e.sink.statuses()) != before {
			t.Fatalf("a reverted transfer caused callbacks: %v", e.sink.statuses()[before:])
		}
		cbs := logs("erc20/usdt", "revert")
		if len(cbs) != 1 || cbs[0].(map[string]any)["payment_status"] != "reverted" {
			t.Fatalf("logs %v", cbs)
		}
	})

	t.Run("reorg before credit drops the payment", func(t *testing.T) {
		a := create("btc", "reorg", "3")
		wantStatus(t, e.post(t, "/devnet/btc/pay", map[string]any{"address_in": a, "value_coin": "0.01"}), 200)
		before := len(e.sink.statuses())
		e.mine(t, "btc", 1)
		wantStatus(t, e.post(t, "/devnet/btc/reorg", map[string]any{"depth": 1}), 200)
		e.mine(t, "btc", 5)
		if got := e.sink.statuses()[before:]; strings.Join(got, ",") != "pending" {
			t.Fatalf("callbacks after the reorg: %v", got)
		}
		cbs := logs("btc", "reorg")
		if len(cbs) != 1 || cbs[0].(map[string]any)["payment_status"] != "dropped" {
			t.Fatalf("logs %v", cbs)
		}
	})

	t.Run("several payments to one address", func(t *testing.T) {
		a := create("ltc", "multi", "1")
		before := len(e.sink.statuses())
		for _, v := range []string{"0.2", "0.3"} {
			wantStatus(t, e.post(t, "/devnet/ltc/pay", map[string]any{"address_in": a, "value_coin": v}), 200)
		}
		e.mine(t, "ltc", 1)
		if got := e.sink.statuses()[before:]; len(got) != 4 {
			t.Fatalf("callbacks %v, want confirmed and completed for each payment", got)
		}
		if cbs := logs("ltc", "multi"); len(cbs) != 2 {
			t.Fatalf("%d payments in the logs, want 2", len(cbs))
		}
	})

	t.Run("below the minimum: recorded, no callbacks, not forwarded", func(t *testing.T) {
		a := create("doge", "small", "1")
		before := len(e.sink.statuses())
		wantStatus(t, e.post(t, "/devnet/doge/pay", map[string]any{"address_in": a, "value_coin": "0.001"}), 200)
		e.mine(t, "doge", 3)
		if len(e.sink.statuses()) != before {
			t.Fatalf("a below-minimum payment caused callbacks")
		}
		c, _ := e.in.Server.Devnet().Chain("doge")
		if len(c.Forwards()) != 0 {
			t.Fatal("a below-minimum payment was forwarded")
		}
		cbs := logs("doge", "small")
		if len(cbs) != 1 || !strings.Contains(string(mustJSON(t, cbs[0])), "minimum") {
			t.Fatalf("logs %v", cbs)
		}
	})

	t.Run("devnet routes validate", func(t *testing.T) {
		r := e.post(t, "/devnet/btc/pay", map[string]any{"address_in": "nope", "value_coin": "1"})
		if r.Code != 400 {
			t.Fatalf("bad address: %d %s", r.Code, r.Body)
		}
		r = e.post(t, "/devnet/btc/pay", map[string]any{"address_in": "x", "value_coin": "-1"})
		wantStatus(t, r, 400)
		r = e.post(t, "/devnet/btc/mine", map[string]any{"blocks": 5000})
		wantStatus(t, r, 400)
		r = e.post(t, "/devnet/nope/mine", map[string]any{"blocks": 1})
		wantStatus(t, r, 404)
	})
}

// TestDevnetOnlyWithDev: without --dev the devnet routes do not exist.
func TestDevnetOnlyWithDev(t *testing.T) {
	t.Parallel()
	in := servertest.Start(t, store.SQLite)
	resp, err := http.Post(in.BaseURL+"/devnet/btc/mine/", "application/json", strings.NewReader(`{"blocks":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("devnet route without --dev: HTTP %d", resp.StatusCode)
	}
	_ = time.Second
}

// TestEndToEndOverGRPC drives the same flow through the typed gRPC API.
func TestEndToEndOverGRPC(t *testing.T) {
	t.Parallel()
	e := newDevEnv(t, store.SQLite)
	ctx := servertest.WithKey(context.Background(), e.in.KeyA)
	tk, _ := family.DefaultRegistry().Lookup("trc20/usdt")
	dest, _ := destinations(t, tk)
	created, err := payhookv1.NewAddressServiceClient(e.in.Conn).CreateAddress(ctx, &payhookv1.CreateAddressRequest{
		Ticker: "trc20/usdt", Callback: e.sink.URL + "/hook", Address: dest, Json: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	dn := payhookv1.NewDevnetServiceClient(e.in.Conn)
	if _, err := dn.Pay(ctx, &payhookv1.PayRequest{Ticker: "trc20/usdt", AddressIn: created.GetAddressIn(), ValueCoin: "42"}); err != nil {
		t.Fatal(err)
	}
	blocks := int32(25)
	if _, err := dn.Mine(ctx, &payhookv1.MineRequest{Ticker: "trc20/usdt", Blocks: &blocks}); err != nil {
		t.Fatal(err)
	}
	if err := e.in.Server.Notifier().Dispatcher.RunDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(e.sink.statuses(), ","); got != "confirmed,completed" {
		t.Fatalf("callbacks %s", got)
	}
	logs, err := payhookv1.NewAddressServiceClient(e.in.Conn).GetLogs(ctx, &payhookv1.GetLogsRequest{Ticker: "trc20/usdt", Callback: created.GetCallbackUrl()})
	if err != nil || len(logs.GetCallbacks()) != 1 || logs.GetCallbacks()[0].GetPaymentStatus() != "completed" {
		t.Fatalf("logs %v %v", logs, err)
	}
	_, err = dn.Mine(ctx, &payhookv1.MineRequest{Ticker: "nope", Blocks: &blocks})
	wantCode(t, err, 5 /* NotFound */, "unknown ticker")
}
