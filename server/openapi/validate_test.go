package openapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server"
	"github.com/payhook/payhook/server/openapi"
	"github.com/payhook/payhook/server/servertest"
)

const docURL = "https://payhook.invalid/openapi.json"

// contract is the parsed document with what the test needs to check an
// answer against it.
type contract struct {
	ops      map[string]*docOp // by operationId
	compiler *jsonschema.Compiler
	// responses are the document's components.responses.
	responses map[string]docResponse
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
}

func loadContract(t *testing.T) *contract {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]docResponse
		}
		Components struct{ Responses map[string]docResponse }
	}
	if err := json.Unmarshal(openapi.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(openapi.Document()))
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{ops: map[string]*docOp{}, compiler: jsonschema.NewCompiler(), responses: doc.Components.Responses, exercised: map[string]*[2]bool{}}
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
	key    string     // API key, in the apikey header
	want   int        // expected HTTP status
}

// call makes r against the server and checks the answer against the
// document: status listed (400, 401 and 404 explicitly, others at least as
// default), body valid against the response's schema, no gRPC header. It
// returns the decoded body.
func (c *contract) call(t *testing.T, base string, r request) map[string]any {
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
	req, err := http.NewRequest(method, u, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		req.Header.Set("apikey", r.key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	what := method + " " + u
	if resp.StatusCode != r.want {
		t.Fatalf("%s: %s answered %d, want %d: %s", r.op, what, resp.StatusCode, r.want, body)
	}
	for name := range resp.Header {
		if strings.HasPrefix(strings.ToLower(name), "grpc-") {
			t.Errorf("%s: %s answered the gRPC header %s: %s", r.op, what, name, resp.Header.Get(name))
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: %s: Content-Type %q", r.op, what, ct)
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
	if _, ok := dr.Content["application/json"]; !ok {
		t.Fatalf("%s: response %s has no application/json content", r.op, pointer)
	}
	sch, err := c.compiler.Compile(docURL + pointer + "/content/application~1json/schema")
	if err != nil {
		t.Fatalf("%s: compile %s: %v", r.op, pointer, err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %s: body is not JSON: %v: %s", r.op, what, err, body)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s: %s: the %s body does not match the document:\n%v\nbody: %s", r.op, what, code, err, body)
	}
	c.exercised[r.op][min(resp.StatusCode/400, 1)] = true
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return out
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
	in := servertest.Start(t, store.SQLite, func(c *server.Config) {
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

	for _, id := range slices.Sorted(maps.Keys(c.exercised)) {
		if e := c.exercised[id]; !e[0] || !e[1] {
			t.Errorf("operation %s was not exercised (success %v, error %v)", id, e[0], e[1])
		}
	}
}

// TestContractRejectsUntruthfulBodies: the checks above can fail. Bodies in
// the shapes the Swagger 2.0 document used to describe are refused.
func TestContractRejectsUntruthfulBodies(t *testing.T) {
	c := loadContract(t)
	rows := []struct{ name, schema, body string }{
		{"success without status", "#/paths/~1{ticker}~1create~1/get/responses/200", `{"address_in":"a","address_out":{},"callback_url":"u","minimum_transaction_coin":"1","priority":"default","required_confirmations":1}`},
		{"count as a string", "#/paths/~1{ticker}~1create~1/get/responses/200", `{"status":"success","address_in":"a","address_out":{},"callback_url":"u","minimum_transaction_coin":"1","priority":"default","required_confirmations":"1"}`},
		{"int64 as a number", "#/paths/~1checkout~1request~1/get/responses/200", `{"status":"success","payment_id":"p","payment_url":"u","success_token":"s","expires_at":1700000000}`},
		{"gRPC error shape", "#/components/responses/BadRequest", `{"code":3,"message":"bad"}`},
		{"info list", "#/paths/~1info~1/get/responses/200", `{"coins":[{"ticker":"btc"}]}`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			sch, err := c.compiler.Compile(docURL + r.schema + "/content/application~1json/schema")
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
