package openapi_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/shopspring/decimal"

	"github.com/payhook/payhook/chains"
	"github.com/payhook/payhook/chains/family"
	entrefund "github.com/payhook/payhook/ent/db/refund"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/ledger/export"
	"github.com/payhook/payhook/server/openapi"
	"github.com/payhook/payhook/server/servertest"
)

const docURL = "https://payhook.invalid/openapi.json"

// contract is the parsed document with what the test needs to check an
// answer against it.
type contract struct {
	ops      map[string]*docOp // by operationId
	compiler *jsonschema.Compiler
	// responses and headers are the document's components.responses and
	// components.headers.
	responses map[string]docResponse
	headers   map[string]docHeader
	// exercised[operationId] records a success and an error answer.
	exercised map[string]*[2]bool
}

type docOp struct {
	method, path string
	pattern      *regexp.Regexp
	pointer      string // JSON pointer of the operation
	responses    map[string]docResponse
}

type docResponse struct {
	Ref     string `json:"$ref"`
	Content map[string]json.RawMessage
	Headers map[string]docHeader
}

type docHeader struct {
	Ref      string `json:"$ref"`
	Required bool
}

func loadContract(t *testing.T) *contract {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]docResponse
		}
		Components struct {
			Responses map[string]docResponse
			Headers   map[string]docHeader
		}
	}
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{ops: map[string]*docOp{}, compiler: jsonschema.NewCompiler(), responses: doc.Components.Responses, headers: doc.Components.Headers, exercised: map[string]*[2]bool{}}
	if err := c.compiler.AddResource(docURL, raw); err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`\\\{[a-z_]+\\\}`)
	for path, item := range doc.Paths {
		for method, op := range item {
			if _, dup := c.ops[op.OperationID]; dup {
				t.Fatalf("operationId %s twice", op.OperationID)
			}
			c.ops[op.OperationID] = &docOp{
				method: strings.ToUpper(method), path: path,
				pattern:   regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(path), "[^/]+") + "$"),
				pointer:   "#/paths/" + strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1") + "/" + method,
				responses: op.Responses,
			}
			c.exercised[op.OperationID] = &[2]bool{}
		}
	}
	return c
}

// request is one call of an operation.
type request struct {
	op     string     // operationId
	method string     // the operation's method when empty
	path   string     // concrete path, matching the operation's template
	query  url.Values // query parameters
	body   string     // JSON body (POST)
	form   url.Values // URL-encoded form body (POST), instead of body
	key    string     // API key, in the apikey header
	want   int        // expected HTTP status
}

// call makes r against the server and checks the answer against the
// document (see callRaw). It returns the decoded JSON object body.
func (c *contract) call(t *testing.T, base string, r request) map[string]any {
	t.Helper()
	var out map[string]any
	_ = json.Unmarshal(c.callRaw(t, base, r), &out)
	return out
}

// callRaw makes r against the server and checks the answer against the
// document: status listed (400, 401 and 404 explicitly, others at least as
// default), a Content-Type the response lists, body valid against that
// content's schema (a JSON document, or a text body as a string), headers
// valid and the required ones present, no gRPC header. It returns the
// body.
func (c *contract) callRaw(t *testing.T, base string, r request) []byte {
	t.Helper()
	op := c.ops[r.op]
	if op == nil {
		t.Fatalf("%s: no such operation in the document", r.op)
	}
	method := op.method
	if r.method != "" {
		method = r.method
	}
	if !op.pattern.MatchString(r.path) {
		t.Fatalf("%s: %s does not match %s", r.op, r.path, op.path)
	}
	u := base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	body, contentType := r.body, "application/json"
	if r.form != nil {
		body, contentType = r.form.Encode(), "application/x-www-form-urlencoded"
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if r.key != "" {
		req.Header.Set("apikey", r.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	what := method + " " + u
	if resp.StatusCode != r.want {
		t.Fatalf("%s: %s answered %d, want %d: %s", r.op, what, resp.StatusCode, r.want, got)
	}
	for name := range resp.Header {
		if strings.HasPrefix(strings.ToLower(name), "grpc-") {
			t.Errorf("%s: %s answered the gRPC header %s: %s", r.op, what, name, resp.Header.Get(name))
		}
	}
	code := resp.Status[:3]
	pointer := op.pointer + "/responses/" + code
	dr, listed := op.responses[code]
	switch {
	case listed:
	case code == "400" || code == "401" || code == "404":
		t.Fatalf("%s: %s answered %s, which the document does not list", r.op, what, code)
	default:
		if dr, listed = op.responses["default"]; !listed {
			t.Fatalf("%s: %s answered %s; no such response nor default", r.op, what, code)
		}
		pointer = op.pointer + "/responses/default"
	}
	if dr.Ref != "" {
		pointer = "#" + strings.TrimPrefix(dr.Ref, "#")
		dr = c.responses[dr.Ref[strings.LastIndex(dr.Ref, "/")+1:]]
	}
	// JSON is application/json exactly; a text file names its charset,
	// which must be UTF-8.
	ct := resp.Header.Get("Content-Type")
	media, params, err := mime.ParseMediaType(ct)
	switch _, listed := dr.Content[media]; {
	case err != nil || !listed:
		t.Fatalf("%s: %s: Content-Type %q; response %s lists %v", r.op, what, ct, pointer, slices.Sorted(maps.Keys(dr.Content)))
	case media == "application/json" && ct != media:
		t.Errorf("%s: %s: Content-Type %q", r.op, what, ct)
	case strings.HasPrefix(media, "text/") && params["charset"] != "utf-8":
		t.Errorf("%s: %s: Content-Type %q: want charset=utf-8", r.op, what, ct)
	}
	var inst any = string(got)
	if media == "application/json" {
		if inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(got)); err != nil {
			t.Fatalf("%s: %s: body is not JSON: %v: %s", r.op, what, err, got)
		}
	}
	c.validate(t, r.op, pointer+"/content/"+strings.ReplaceAll(media, "/", "~1")+"/schema", inst,
		fmt.Sprintf("%s: the %s body (%s)", what, code, media), got)
	for name, h := range dr.Headers {
		hp := pointer + "/headers/" + name
		if h.Ref != "" {
			hp = "#" + strings.TrimPrefix(h.Ref, "#")
			h = c.headers[h.Ref[strings.LastIndex(h.Ref, "/")+1:]]
		}
		v, ok := resp.Header[http.CanonicalHeaderKey(name)]
		if !ok {
			if h.Required {
				t.Errorf("%s: %s: no %s header, which %s requires", r.op, what, name, pointer)
			}
			continue
		}
		c.validate(t, r.op, hp+"/schema", strings.Join(v, ", "), what+": the "+name+" header", []byte(strings.Join(v, ", ")))
	}
	c.exercised[r.op][min(resp.StatusCode/400, 1)] = true
	return got
}

// validate checks inst against the document's schema at pointer.
func (c *contract) validate(t *testing.T, op, pointer string, inst any, what string, raw []byte) {
	t.Helper()
	sch, err := c.compiler.Compile(docURL + pointer)
	if err != nil {
		t.Fatalf("%s: compile %s: %v", op, pointer, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: %s does not match the document:\n%v\nvalue: %s", op, what, err, raw)
	}
}

func str(t *testing.T, m map[string]any, k string) string {
	t.Helper()
	s, ok := m[k].(string)
	if !ok || s == "" {
		t.Fatalf("no %s in %v", k, m)
	}
	return s
}

func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// TestEveryOperationAnswersAsDocumented starts a --dev server and, for
// every operation of the document, makes a successful request and a
// failing one, and validates each answer (status, body, headers) against
// the document. An operation of the document that no request exercised
// fails the test.
func TestEveryOperationAnswersAsDocumented(t *testing.T) {
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			everyOperation(t, d)
		})
	}
}

func everyOperation(t *testing.T, d store.Dialect) {
	in := servertest.Start(t, d, func(c *server.Config) {
		c.Dev = true
		c.ManualDelivery = true
	})
	c := loadContract(t)
	call := func(r request) map[string]any { t.Helper(); return c.call(t, in.BaseURL, r) }
	key := in.KeyA
	const cb = "https://shop.example/cb?order=1"
	const notify = "https://shop.example/hook"

	// The low-level API, native coin and token forms.
	call(request{op: "AddressService_GetPublicKey", path: "/pubkey/", want: 200})
	call(request{op: "AddressService_GetPublicKey", method: http.MethodPost, path: "/pubkey/", want: 405})
	info := call(request{op: "AddressService_GetInfo", path: "/info/", want: 200})
	if _, ok := info["status"]; ok {
		t.Errorf("/info/ has a status member: %v", info)
	}
	call(request{op: "AddressService_GetInfo", method: http.MethodDelete, path: "/info/", want: 405})
	call(request{op: "AddressService_GetInfoForTicker", path: "/btc/info/", want: 200})
	call(request{op: "AddressService_GetInfoForTicker", path: "/nocoin/info/", want: 404})
	call(request{op: "AddressService_GetInfoForToken", path: "/trc20/usdt/info/", want: 200})
	call(request{op: "AddressService_GetInfoForToken", path: "/trc20/nocoin/info/", want: 404})

	btc := call(request{op: "AddressService_CreateAddress", path: "/btc/create/", query: q("callback", cb), key: key, want: 200})
	call(request{op: "AddressService_CreateAddress", path: "/btc/create/", query: q("callback", cb), want: 401})
	call(request{op: "AddressService_CreateAddress", path: "/btc/create/", key: key, want: 400})
	// The key in the query (the apikeyQuery scheme).
	usdt := call(request{op: "AddressService_CreateAddressForToken", path: "/trc20/usdt/create/", query: q("callback", cb, "apikey", key), want: 200})
	call(request{op: "AddressService_CreateAddressForToken", path: "/trc20/usdt/create/", query: q("callback", "ftp://x"), key: key, want: 400})
	btcIn, usdtIn := str(t, btc, "address_in"), str(t, usdt, "address_in")

	call(request{op: "AddressService_GetLogs", path: "/btc/logs/", query: q("callback", str(t, btc, "callback_url")), key: key, want: 200})
	call(request{op: "AddressService_GetLogs", path: "/btc/logs/", query: q("callback", "https://shop.example/other"), key: key, want: 404})
	call(request{op: "AddressService_GetLogsForToken", path: "/trc20/usdt/logs/", query: q("callback", str(t, usdt, "callback_url")), key: key, want: 200})
	call(request{op: "AddressService_GetLogsForToken", path: "/trc20/usdt/logs/", query: q("callback", cb), want: 401})

	call(request{op: "AddressService_GetQrCode", path: "/btc/qrcode/", query: q("address", btcIn, "value", "0.001"), key: key, want: 200})
	call(request{op: "AddressService_GetQrCode", path: "/btc/qrcode/", key: key, want: 400})
	call(request{op: "AddressService_GetQrCodeForToken", path: "/trc20/usdt/qrcode/", query: q("address", usdtIn), key: key, want: 200})
	call(request{op: "AddressService_GetQrCodeForToken", path: "/trc20/usdt/qrcode/", query: q("address", usdtIn), want: 401})

	call(request{op: "AddressService_EstimateFee", path: "/btc/estimate/", want: 200})
	call(request{op: "AddressService_EstimateFee", path: "/btc/estimate/", query: q("addresses", "0"), want: 400})
	call(request{op: "AddressService_EstimateFeeForToken", path: "/trc20/usdt/estimate/", want: 200})
	call(request{op: "AddressService_EstimateFeeForToken", path: "/trc20/nocoin/estimate/", want: 404})

	call(request{op: "AddressService_CreatePayout", path: "/btc/payout/", query: q("address", btcIn, "value", "0.001"), key: key, want: 200})
	call(request{op: "AddressService_CreatePayout", path: "/btc/payout/", query: q("address", btcIn), key: key, want: 400})
	call(request{op: "AddressService_CreatePayoutForToken", path: "/trc20/usdt/payout/", query: q("address", usdtIn, "value", "1"), key: key, want: 200})
	call(request{op: "AddressService_CreatePayoutForToken", path: "/trc20/usdt/payout/", query: q("address", usdtIn, "value", "1"), want: 401})

	call(request{op: "AddressService_Convert", path: "/btc/convert/", query: q("value", "100", "from", "usd"), want: 200})
	call(request{op: "AddressService_Convert", path: "/btc/convert/", query: q("value", "100"), want: 400})
	call(request{op: "AddressService_ConvertForToken", path: "/trc20/usdt/convert/", query: q("value", "100", "from", "usd"), want: 200})
	call(request{op: "AddressService_ConvertForToken", path: "/trc20/nocoin/convert/", query: q("value", "100", "from", "usd"), want: 404})

	// The event catalogue: public, every event type or one by name.
	types := call(request{op: "EventService_ListEventTypes", path: "/events/types/", want: 200})
	if l, _ := types["event_types"].([]any); len(l) < 20 {
		t.Errorf("GET /events/types/ lists %d event types", len(l))
	}
	call(request{op: "EventService_ListEventTypes", path: "/events/types/", query: q("name", "checkout.payment.confirmed"), want: 200})
	call(request{op: "EventService_ListEventTypes", path: "/events/types/", query: q("name", "checkout.payment.lost"), want: 404})

	// The merchant API.
	chk := call(request{op: "CheckoutService_RequestCheckout", path: "/checkout/request/", query: q("notify_url", notify, "value", "100", "currency", "USD"), key: key, want: 200})
	call(request{op: "CheckoutService_RequestCheckout", path: "/checkout/request/", query: q("value", "10"), key: key, want: 400})
	chkID := str(t, chk, "payment_id")
	call(request{op: "CheckoutService_GetCheckoutAddress", path: "/checkout/address/", query: q("payment_id", chkID, "coin", "btc"), key: key, want: 200})
	call(request{op: "CheckoutService_GetCheckoutAddress", path: "/checkout/address/", query: q("payment_id", chkID, "coin", "btc"), key: in.KeyB, want: 404})
	call(request{op: "CheckoutService_GetCheckoutLogs", path: "/checkout/logs/", query: q("payment_id", chkID), key: key, want: 200})
	call(request{op: "CheckoutService_GetCheckoutLogs", path: "/checkout/logs/", query: q("payment_id", "chk_nope"), key: key, want: 404})

	dep := call(request{op: "DepositService_RequestDeposit", path: "/deposit/request/", query: q("notify_url", notify), key: key, want: 200})
	call(request{op: "DepositService_RequestDeposit", path: "/deposit/request/", query: q("notify_url", notify), want: 401})
	depID := str(t, dep, "payment_id")
	call(request{op: "DepositService_GetDepositAddress", path: "/deposit/address/", query: q("payment_id", depID, "coin", "trc20/usdt"), key: key, want: 200})
	call(request{op: "DepositService_GetDepositAddress", path: "/deposit/address/", query: q("payment_id", depID), key: key, want: 400})
	call(request{op: "DepositService_GetDepositLogs", path: "/deposit/logs/", query: q("payment_id", depID), key: key, want: 200})
	call(request{op: "DepositService_GetDepositLogs", path: "/deposit/logs/", query: q("payment_id", depID), key: in.KeyB, want: 404})

	sub := call(request{op: "SubscriptionService_CreateSubscription", path: "/subscription/create/", query: q("notify_url", notify, "currency", "USD", "option", "1m:100", "option", "12m:1000"), key: key, want: 200})
	call(request{op: "SubscriptionService_CreateSubscription", path: "/subscription/create/", query: q("notify_url", notify, "option", "1x:10"), key: key, want: 400})
	token := str(t, sub, "token")
	call(request{op: "SubscriptionService_GetSubscriptionAddress", path: "/subscription/address/", query: q("token", token, "coin", "btc", "option", "1m"), key: key, want: 200})
	call(request{op: "SubscriptionService_GetSubscriptionAddress", path: "/subscription/address/", query: q("token", "sub_nope", "coin", "btc", "option", "1m"), key: key, want: 404})
	call(request{op: "SubscriptionService_FetchSubscription", path: "/subscription/fetch/", query: q("token", token), key: key, want: 200})
	call(request{op: "SubscriptionService_FetchSubscription", path: "/subscription/fetch/", query: q("token", token), key: in.KeyB, want: 404})
	call(request{op: "SubscriptionService_ListSubscriptions", path: "/subscription/list/", key: key, want: 200})
	call(request{op: "SubscriptionService_ListSubscriptions", path: "/subscription/list/", query: q("limit", "501"), key: key, want: 400})

	test := call(request{op: "NotificationService_TestNotification", path: "/notification/test/", body: `{"url":"` + notify + `"}`, key: key, want: 200})
	call(request{op: "NotificationService_TestNotification", path: "/notification/test/", body: `{}`, key: key, want: 400})
	call(request{op: "NotificationService_ResendNotification", path: "/notification/resend/", body: `{"uuid":"` + str(t, test, "uuid") + `"}`, key: key, want: 200})
	call(request{op: "NotificationService_ResendNotification", path: "/notification/resend/", body: `{"uuid":"` + str(t, test, "uuid") + `"}`, key: in.KeyB, want: 404})
	call(request{op: "NotificationService_ListNotifications", path: "/notification/list/", key: key, want: 200})
	call(request{op: "NotificationService_ListNotifications", path: "/notification/list/", query: q("status", "lost"), key: key, want: 400})
	call(request{op: "EventService_ListEvents", path: "/events/", query: q("limit", "10"), key: key, want: 200})
	call(request{op: "EventService_ListEvents", path: "/events/", query: q("after", "not-a-cursor"), key: key, want: 400})

	// Webhook endpoints.
	ep := call(request{op: "EndpointService_CreateEndpoint", path: "/endpoint/create/", body: `{"url":"` + notify + `","event_types":["checkout.*"],"description":"orders"}`, key: key, want: 200})
	call(request{op: "EndpointService_CreateEndpoint", path: "/endpoint/create/", body: `{"url":"` + notify + `","event_types":["nope.*"]}`, key: key, want: 400})
	epObj, _ := ep["endpoint"].(map[string]any)
	epID := str(t, epObj, "endpoint_id")
	idBody := `{"endpoint_id":"` + epID + `"}`
	call(request{op: "EndpointService_ListEndpoints", path: "/endpoint/list/", key: key, want: 200})
	call(request{op: "EndpointService_ListEndpoints", path: "/endpoint/list/", want: 401})
	call(request{op: "EndpointService_GetEndpoint", path: "/endpoint/get/", query: q("endpoint_id", epID), key: key, want: 200})
	call(request{op: "EndpointService_GetEndpoint", path: "/endpoint/get/", query: q("endpoint_id", epID), key: in.KeyB, want: 404})
	call(request{op: "EndpointService_UpdateEndpoint", path: "/endpoint/update/", body: `{"endpoint_id":"` + epID + `","max_per_second":5}`, key: key, want: 200})
	call(request{op: "EndpointService_UpdateEndpoint", path: "/endpoint/update/", body: `{"endpoint_id":"` + epID + `","max_per_second":5000}`, key: key, want: 400})
	call(request{op: "EndpointService_RotateEndpointSecret", path: "/endpoint/rotate-secret/", body: idBody, key: key, want: 200})
	call(request{op: "EndpointService_RotateEndpointSecret", path: "/endpoint/rotate-secret/", body: idBody, key: in.KeyB, want: 404})
	call(request{op: "EndpointService_TestEndpoint", path: "/endpoint/test/", body: idBody, key: key, want: 200})
	call(request{op: "EndpointService_TestEndpoint", path: "/endpoint/test/", body: `{}`, key: key, want: 400})
	call(request{op: "EndpointService_PauseEndpoint", path: "/endpoint/pause/", body: idBody, key: key, want: 200})
	call(request{op: "EndpointService_PauseEndpoint", path: "/endpoint/pause/", body: idBody, key: in.KeyB, want: 404})
	call(request{op: "EndpointService_ResumeEndpoint", path: "/endpoint/resume/", body: idBody, key: key, want: 200})
	call(request{op: "EndpointService_ResumeEndpoint", path: "/endpoint/resume/", body: idBody, key: key, want: 400})
	call(request{op: "EndpointService_ReplayEndpoint", path: "/endpoint/replay/", body: `{"endpoint_id":"` + epID + `","since":"2026-01-01T00:00:00Z"}`, key: key, want: 200})
	call(request{op: "EndpointService_ReplayEndpoint", path: "/endpoint/replay/", body: idBody, key: key, want: 400})
	call(request{op: "EndpointService_DeleteEndpoint", path: "/endpoint/delete/", body: idBody, key: key, want: 200})
	call(request{op: "EndpointService_DeleteEndpoint", path: "/endpoint/delete/", body: idBody, key: key, want: 404})

	payoutsAndRefunds(t, c, in)
	ledgerExport(t, c, in)
	psbtPayouts(t, c, d)

	for _, id := range slices.Sorted(maps.Keys(c.exercised)) {
		if e := c.exercised[id]; !e[0] || !e[1] {
			t.Errorf("operation %s was not exercised (success %v, error %v)", id, e[0], e[1])
		}
	}
}

// devnet POSTs body to a devnet path (not in the document) and returns its
// answer, which must be a 200.
func devnet(t *testing.T, in *servertest.Instance, path string, body map[string]any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(in.BaseURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s: HTTP %d %s", path, resp.StatusCode, raw)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// asList is v as a JSON array, nil when it is none.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// destination is an address of ticker that payhook does not watch.
func destination(t *testing.T, ticker string) string {
	t.Helper()
	tk, ok := family.DefaultRegistry().Lookup(ticker)
	if !ok {
		t.Fatalf("no %s in the registry", ticker)
	}
	d, err := chains.NewDeriver(bytes.Repeat([]byte{0x42}, 32), family.All())
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Address(tk, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// payoutsAndRefunds exercises the payout and refund operations on the
// devnet: the project's payout wallets (ltc, and trc20/usdt for the token
// forms) funded and paying out; ltc checkout and deposit payments, held
// (the project has no ltc wallet) and refunded, one at the payer's request
// on the hosted page; USDT sent to ETH addresses (wrong_asset), forwarded
// and refunded.
func payoutsAndRefunds(t *testing.T, c *contract, in *servertest.Instance) {
	call := func(r request) map[string]any { t.Helper(); return c.call(t, in.BaseURL, r) }
	key := in.KeyA
	ltcTo, usdtTo, ethTo := destination(t, "ltc"), destination(t, "trc20/usdt"), destination(t, "eth")
	outputs := func(addr, value string) string { return fmt.Sprintf(`{"outputs": {%q: %q}}`, addr, value) }
	mine := func(ticker string, blocks int) {
		t.Helper()
		devnet(t, in, "/devnet/"+ticker+"/mine/", map[string]any{"blocks": blocks})
	}

	// The payout wallets, funded.
	ltcWallet := str(t, call(request{op: "PayoutService_GetPayoutWallet", path: "/ltc/payout/address/", key: key, want: 200}), "address")
	call(request{op: "PayoutService_GetPayoutWallet", path: "/nocoin/payout/address/", key: key, want: 404})
	usdtWallet := str(t, call(request{op: "PayoutService_GetPayoutWalletForToken", path: "/trc20/usdt/payout/address/", key: key, want: 200}), "address")
	call(request{op: "PayoutService_GetPayoutWalletForToken", path: "/trc20/usdt/payout/address/", want: 401})
	devnet(t, in, "/devnet/ltc/pay/", map[string]any{"address_in": ltcWallet, "value_coin": "1"})
	devnet(t, in, "/devnet/trc20/usdt/pay/", map[string]any{"address_in": usdtWallet, "value_coin": "100"})
	mine("ltc", 6)
	mine("trc20/usdt", 25)
	if b := call(request{op: "PayoutService_GetPayoutBalance", path: "/ltc/payout/balance/", key: key, want: 200}); b["balance"] != "1" {
		t.Fatalf("ltc payout balance %v, want 1", b)
	}
	call(request{op: "PayoutService_GetPayoutBalance", path: "/ltc/payout/balance/", want: 401})
	call(request{op: "PayoutService_GetPayoutBalanceForToken", path: "/trc20/usdt/payout/balance/", key: key, want: 200})
	call(request{op: "PayoutService_GetPayoutBalanceForToken", path: "/trc20/nocoin/payout/balance/", key: key, want: 404})

	// Requests, a payout of them (its forms as the family's payout clients
	// send them), and payouts of new requests at once.
	reqs := call(request{op: "PayoutService_CreatePayoutRequests", path: "/ltc/payout/request/bulk/", body: outputs(ltcTo, "0.1"), key: key, want: 200})
	call(request{op: "PayoutService_CreatePayoutRequests", path: "/ltc/payout/request/bulk/", body: `{"outputs": {}}`, key: key, want: 400})
	// An amount as a JSON number, as this API family's libraries send it.
	call(request{op: "PayoutService_CreatePayoutRequestsForToken", path: "/trc20/usdt/payout/request/bulk/", body: fmt.Sprintf(`{"outputs": {%q: 5}}`, usdtTo), key: key, want: 200})
	call(request{op: "PayoutService_CreatePayoutRequestsForToken", path: "/trc20/usdt/payout/request/bulk/", body: outputs(usdtTo, "5"), want: 401})
	ids := asList(reqs["request_ids"])
	if len(ids) != 1 {
		t.Fatalf("request ids %v", reqs)
	}
	created := call(request{op: "PayoutService_CreatePayoutFromRequests", path: "/payout/create/", form: q("request_ids", fmt.Sprint(ids[0])), key: key, want: 200})
	call(request{op: "PayoutService_CreatePayoutFromRequests", path: "/payout/create/", body: `{"request_ids": "twelve"}`, key: key, want: 400})
	info, _ := created["payout_info"].(map[string]any)
	payoutID := str(t, info, "id")
	call(request{op: "PayoutService_ProcessPayout", path: "/payout/process/", form: q("payout_id", payoutID), key: key, want: 200})
	call(request{op: "PayoutService_ProcessPayout", path: "/payout/process/", body: `{"payout_id": ` + payoutID + `}`, key: in.KeyB, want: 404})
	call(request{op: "PayoutService_GetPayoutStatus", path: "/payout/status/", body: `{"payout_id": "` + payoutID + `"}`, key: key, want: 200})
	call(request{op: "PayoutService_GetPayoutStatus", path: "/payout/status/", body: `{}`, key: key, want: 400})
	mine("ltc", 6) // the payout's change is credited to the wallet
	call(request{op: "PayoutService_ProcessPayoutRequests", path: "/ltc/payout/request/bulk/process/", body: outputs(ltcTo, "0.2"), key: key, want: 200})
	call(request{op: "PayoutService_ProcessPayoutRequests", path: "/ltc/payout/request/bulk/process/", body: outputs(ltcTo, "1000"), key: key, want: 400})
	call(request{op: "PayoutService_ProcessPayoutRequestsForToken", path: "/trc20/usdt/payout/request/bulk/process/", body: outputs(usdtTo, "10"), key: key, want: 200})
	call(request{op: "PayoutService_ProcessPayoutRequestsForToken", path: "/trc20/usdt/payout/request/bulk/process/", body: outputs(usdtTo, "1000000"), key: key, want: 400})
	if l := call(request{op: "PayoutService_ListPayoutRequestPage", path: "/ltc/payout/request/list/", key: key, want: 200}); len(asList(l["payout_requests"])) != 2 {
		t.Errorf("ltc payout requests: %v", l)
	}
	call(request{op: "PayoutService_ListPayoutRequestPage", path: "/ltc/payout/request/list/", query: q("p", "-1"), key: key, want: 400})
	call(request{op: "PayoutService_ListPayoutRequestPageForToken", path: "/trc20/usdt/payout/request/list/", query: q("status", "pending"), key: key, want: 200})
	call(request{op: "PayoutService_ListPayoutRequestPageForToken", path: "/trc20/usdt/payout/request/list/", want: 401})
	call(request{op: "PayoutService_ListPayouts", path: "/ltc/payout/list/", key: key, want: 200})
	call(request{op: "PayoutService_ListPayouts", path: "/ltc/payout/list/", query: q("p", "-1"), key: key, want: 400})
	call(request{op: "PayoutService_ListPayoutsForToken", path: "/trc20/usdt/payout/list/", key: key, want: 200})
	call(request{op: "PayoutService_ListPayoutsForToken", path: "/trc20/nocoin/payout/list/", key: key, want: 404})

	// A checkout and a deposit paid in ltc, held, refunded.
	const notify = "https://shop.example/hook"
	paidIn := func(kind, extra string) (id, txid string) {
		t.Helper()
		svc := map[string]string{"checkout": "CheckoutService_RequestCheckout", "deposit": "DepositService_RequestDeposit"}[kind]
		query := q("notify_url", notify, "value", "100", "currency", "USD")
		if kind == "deposit" {
			query.Del("value") // any amount
		}
		inv := call(request{op: svc, path: "/" + kind + "/request/", query: query, key: key, want: 200})
		id = str(t, inv, "payment_id")
		addrOp := map[string]string{"checkout": "CheckoutService_GetCheckoutAddress", "deposit": "DepositService_GetDepositAddress"}[kind]
		a := call(request{op: addrOp, path: "/" + kind + "/address/", query: q("payment_id", id, "coin", "ltc"), key: key, want: 200})
		value := "0.5"
		if v, ok := a["value_coin"].(string); ok && v != "" {
			value = v
		}
		if extra != "" {
			value = decimal.RequireFromString(value).Add(decimal.RequireFromString(extra)).String()
		}
		p := devnet(t, in, "/devnet/ltc/pay/", map[string]any{"address_in": str(t, a, "address_in"), "value_coin": value})
		return id, str(t, p, "txid_in")
	}
	chkID, chkTx := paidIn("checkout", "")
	depID, depTx := paidIn("deposit", "")
	overID, _ := paidIn("checkout", "0.1")
	mine("ltc", 6)

	refund := func(id, tx, value string) url.Values {
		return q("payment_id", id, "txid_in", tx, "address", ltcTo, "value", value)
	}
	r := call(request{op: "RefundService_RefundCheckout", path: "/checkout/refund/", form: refund(chkID, chkTx, "0.01"), key: key, want: 200})
	call(request{op: "RefundService_RefundCheckout", path: "/checkout/refund/", form: refund(chkID, chkTx, "0.01"), key: in.KeyB, want: 404})
	rf, _ := r["refund"].(map[string]any)
	refundID := str(t, rf, "refund_id")
	call(request{op: "RefundService_GetRefund", path: "/refund/status/", query: q("refund_id", refundID), key: key, want: 200})
	call(request{op: "RefundService_GetRefund", path: "/refund/status/", query: q("refund_id", refundID), key: in.KeyB, want: 404})
	call(request{op: "RefundService_RefundDeposit", path: "/deposit/refund/", body: fmt.Sprintf(`{"payment_id": %q, "txid_in": %q, "address": %q}`, depID, depTx, ltcTo), key: key, want: 200})
	call(request{op: "RefundService_RefundDeposit", path: "/deposit/refund/", body: fmt.Sprintf(`{"payment_id": %q, "txid_in": %q}`, depID, depTx), key: key, want: 400})

	// The payer of the overpaid checkout asks for the overpayment back on
	// the hosted page; the merchant approves.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(in.BaseURL+"/payment/"+overID+"/refund", q("address", ltcTo))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the payer's refund request: HTTP %d", resp.StatusCode)
	}
	asked, err := in.Server.DB().Client.Refund.Query().Where(entrefund.StatusEQ(entrefund.StatusRequested)).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	approve := fmt.Sprintf(`{"refund_id": %q}`, asked.UUID)
	call(request{op: "RefundService_ApproveRefund", path: "/refund/approve/", body: approve, key: in.KeyB, want: 404})
	call(request{op: "RefundService_ApproveRefund", path: "/refund/approve/", body: approve, key: key, want: 200})

	// USDT sent to ETH addresses created without multi_token is held as
	// wrong_asset: one forwarded to its address's destination, one (whose
	// address has none) refunded.
	withDest := call(request{op: "AddressService_CreateAddress", path: "/eth/create/", query: q("callback", "https://shop.example/cb?w=1", "address", ethTo), key: key, want: 200})
	bare := call(request{op: "AddressService_CreateAddress", path: "/eth/create/", query: q("callback", "https://shop.example/cb?w=2"), key: key, want: 200})
	fwdTx := str(t, devnet(t, in, "/devnet/erc20/usdt/pay/", map[string]any{"address_in": str(t, withDest, "address_in"), "value_coin": "50"}), "txid_in")
	backTx := str(t, devnet(t, in, "/devnet/erc20/usdt/pay/", map[string]any{"address_in": str(t, bare, "address_in"), "value_coin": "50"}), "txid_in")
	mine("erc20/usdt", 20)
	mine("erc20/usdt", 20)
	forward := fmt.Sprintf(`{"coin": "erc20_usdt", "txid_in": %q}`, fwdTx)
	call(request{op: "RefundService_ForwardWrongAsset", path: "/wrong_asset/forward/", body: forward, key: in.KeyB, want: 404})
	call(request{op: "RefundService_ForwardWrongAsset", path: "/wrong_asset/forward/", body: forward, key: key, want: 200})
	back := q("coin", "erc20_usdt", "txid_in", backTx, "address", ethTo, "value", "40")
	call(request{op: "RefundService_RefundWrongAsset", path: "/wrong_asset/refund/", form: back, key: in.KeyB, want: 404})
	call(request{op: "RefundService_RefundWrongAsset", path: "/wrong_asset/refund/", form: back, key: key, want: 200})
}

// ledgerExport exercises the accounting export, after payoutsAndRefunds
// gave the project ledger lines: the CSV file and the JSON one carry the
// same rows; a reversed range is a 400 error body.
func ledgerExport(t *testing.T, c *contract, in *servertest.Instance) {
	now := clock.Now().UTC()
	rng := q("from", now.AddDate(0, 0, -1).Format(time.DateOnly), "to", now.AddDate(0, 0, 2).Format(time.DateOnly))
	file := c.callRaw(t, in.BaseURL, request{op: "ExportService_ExportLedger", path: "/ledger/export/", query: rng, key: in.KeyA, want: 200})
	recs, err := csv.NewReader(bytes.NewReader(file)).ReadAll()
	if err != nil || len(recs) < 2 || !slices.Equal(recs[0], export.Columns) {
		t.Fatalf("the CSV export (%v):\n%s", err, file)
	}
	rng.Set("format", "json")
	var rows []map[string]string
	if err := json.Unmarshal(c.callRaw(t, in.BaseURL, request{op: "ExportService_ExportLedger", path: "/ledger/export/", query: rng, key: in.KeyA, want: 200}), &rows); err != nil || len(rows) != len(recs)-1 {
		t.Errorf("the JSON export has %d rows (%v), the CSV one %d", len(rows), err, len(recs)-1)
	}
	c.call(t, in.BaseURL, request{op: "ExportService_ExportLedger", path: "/ledger/export/", query: q("from", "2026-03-01", "to", "2026-02-01"), key: in.KeyA, want: 400})
	c.call(t, in.BaseURL, request{op: "ExportService_ExportLedger", path: "/ledger/export/", query: rng, want: 401})
}

// TestContractRejectsUntruthfulBodies: the checks above can fail. Bodies in
// the shapes the Swagger 2.0 document used to describe are refused, and so
// are export files and names in other shapes than the server's.
func TestContractRejectsUntruthfulBodies(t *testing.T) {
	c := loadContract(t)
	const export = "#/paths/~1ledger~1export~1/get/responses/200"
	rows := []struct{ name, schema, body string }{
		{"success without status", "#/paths/~1{ticker}~1create~1/get/responses/200", `{"address_in":"a","address_out":{},"callback_url":"u","minimum_transaction_coin":"1","priority":"default","required_confirmations":1}`},
		{"count as a string", "#/paths/~1{ticker}~1create~1/get/responses/200", `{"status":"success","address_in":"a","address_out":{},"callback_url":"u","minimum_transaction_coin":"1","priority":"default","required_confirmations":"1"}`},
		{"int64 as a number", "#/paths/~1checkout~1request~1/get/responses/200", `{"status":"success","payment_id":"p","payment_url":"u","success_token":"s","expires_at":1700000000}`},
		{"gRPC error shape", "#/components/responses/BadRequest", `{"code":3,"message":"bad"}`},
		{"info list", "#/paths/~1info~1/get/responses/200", `{"coins":[{"ticker":"btc"}]}`},
		// The export's file, as the JSON string of a CSV body.
		{"CSV without its header row", export + "/content/text~1csv/schema", `"1,2026-03-01T00:00:00Z,payment,ltc,1,,,,tx,,,\n"`},
		{"CSV with other columns", export + "/content/text~1csv/schema", `"entry_id,time,kind,coin,amount\n"`},
		{"the gRPC HttpBody", export + "/content/application~1json/schema", `{"content_type":"application/json","data":"W10="}`},
		{"a JSON row with a number", export + "/content/application~1json/schema", `[{"entry_id":1,"time":"t","kind":"payment","coin":"ltc","amount":"1","fiat_value":"","fiat_currency":"","fiat_source":"","txid":"x","invoice_id":"","payout_id":"","refund_id":""}]`},
		{"a JSON row without a column", export + "/content/application~1json/schema", `[{"entry_id":"1","time":"t","kind":"payment","coin":"ltc","amount":"1"}]`},
		{"a file name of another kind", export + "/headers/Content-Disposition/schema", `"attachment; filename=ledger.xml"`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			pointer := r.schema
			if !strings.Contains(pointer, "/schema") {
				pointer += "/content/application~1json/schema"
			}
			sch, err := c.compiler.Compile(docURL + pointer)
			if err != nil {
				t.Fatal(err)
			}
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(r.body))
			if err != nil {
				t.Fatal(err)
			}
			if sch.Validate(inst) == nil {
				t.Fatalf("%s accepted", r.body)
			}
		})
	}
}
