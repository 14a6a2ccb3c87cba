package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// rule is what the gateway does for one operation (by its operationId
// without the plugin's numeric suffix) that the protos do not say.
type rule struct {
	// public: no API key needed (the method declares ACCESS_PUBLIC; a test
	// checks this against the descriptors).
	public bool
	// notFound: besides an unknown ticker, the operation answers 404 for
	// something the request names (an address, invoice, subscription or
	// notification that does not exist or is another owner's).
	notFound bool
	// writes: the operation may change something (its method needs a key
	// and declares a scope other than read; a test checks this against
	// the descriptors), so it takes an Idempotency-Key header.
	writes bool
	// form: the gateway also takes the body's fields as a URL-encoded
	// form, each once (server/gateway's queryBodyPaths), as this API
	// family's payout clients send them.
	form bool
	// ledgerFile: the method streams the accounting export as
	// google.api.HttpBody messages, which the gateway writes as one file
	// (server/gateway's rawPaths): its 200 is that file, CSV or JSON, not
	// a JSON message (see ledgerFileResponse).
	ledgerFile bool
}

// rules lists every operation of the document. An operation missing here,
// or listed here but absent from the document, fails the step.
var rules = map[string]rule{
	"AddressService_CreateAddress": {writes: true},
	"AddressService_GetLogs":       {notFound: true},
	"AddressService_GetPublicKey":  {public: true},
	"AddressService_GetInfo":       {public: true},
	"AddressService_GetQrCode":     {},
	"AddressService_EstimateFee":   {public: true},
	"AddressService_CreatePayout":  {writes: true},
	"AddressService_Convert":       {public: true},

	"CheckoutService_RequestCheckout":    {writes: true},
	"CheckoutService_GetCheckoutAddress": {notFound: true, writes: true},
	"CheckoutService_GetCheckoutLogs":    {notFound: true},

	"DepositService_RequestDeposit":    {writes: true},
	"DepositService_GetDepositAddress": {notFound: true, writes: true},
	"DepositService_GetDepositLogs":    {notFound: true},

	"SubscriptionService_CreateSubscription":     {writes: true},
	"SubscriptionService_GetSubscriptionAddress": {notFound: true, writes: true},
	"SubscriptionService_FetchSubscription":      {notFound: true},
	"SubscriptionService_ListSubscriptions":      {},

	"NotificationService_ResendNotification": {notFound: true, writes: true, form: true},
	"NotificationService_TestNotification":   {writes: true, form: true},
	"NotificationService_ListNotifications":  {},

	"EventService_ListEventTypes": {public: true, notFound: true},
	"EventService_ListEvents":     {},

	"EndpointService_CreateEndpoint":       {writes: true},
	"EndpointService_ListEndpoints":        {},
	"EndpointService_GetEndpoint":          {notFound: true},
	"EndpointService_UpdateEndpoint":       {notFound: true, writes: true},
	"EndpointService_DeleteEndpoint":       {notFound: true, writes: true},
	"EndpointService_RotateEndpointSecret": {notFound: true, writes: true},
	"EndpointService_PauseEndpoint":        {notFound: true, writes: true},
	"EndpointService_ResumeEndpoint":       {notFound: true, writes: true},
	"EndpointService_ReplayEndpoint":       {notFound: true, writes: true},
	"EndpointService_TestEndpoint":         {notFound: true, writes: true},

	"PayoutService_GetPayoutWallet":          {},
	"PayoutService_GetPayoutBalance":         {},
	"PayoutService_CreatePayoutRequests":     {writes: true},
	"PayoutService_ProcessPayoutRequests":    {writes: true},
	"PayoutService_ListPayoutRequestPage":    {},
	"PayoutService_ListPayouts":              {},
	"PayoutService_CreatePayoutFromRequests": {notFound: true, writes: true, form: true},
	"PayoutService_ProcessPayout":            {notFound: true, writes: true, form: true},
	"PayoutService_GetPayoutStatus":          {notFound: true, form: true},
	"PayoutService_GetPayoutPSBT":            {notFound: true},
	"PayoutService_SubmitPayoutPSBT":         {notFound: true, writes: true},

	"RefundService_RefundCheckout":    {notFound: true, writes: true, form: true},
	"RefundService_RefundDeposit":     {notFound: true, writes: true, form: true},
	"RefundService_ApproveRefund":     {notFound: true, writes: true, form: true},
	"RefundService_ForwardWrongAsset": {notFound: true, writes: true, form: true},
	"RefundService_RefundWrongAsset":  {notFound: true, writes: true, form: true},
	"RefundService_GetRefund":         {notFound: true},

	"ExportService_ExportLedger": {ledgerFile: true},
}

// Names of the schemas this step adds.
const (
	// infoSchema is the body of GET /info/.
	infoSchema = "Info"
	// tickerInfoSchema is the body of GET /{ticker}/info/: a CoinInfo with
	// the status.
	tickerInfoSchema = "TickerInfo"
	// ledgerRowSchema is one row of the accounting export's JSON form.
	ledgerRowSchema = "LedgerRow"
	coinInfoSchema  = "payhook.v1.CoinInfo"
	valueSchema     = "google.protobuf.Value"
	schemaPrefix    = "#/components/schemas/"
)

// tokenPath matches the plugin's rendering of a `{ticker=*/*}` binding.
var tokenPath = regexp.MustCompile(`^/\*/\{\*\}(/.*)$`)

// numericSuffix is what the plugin appends to the operationId of each
// additional binding.
var numericSuffix = regexp.MustCompile(`[0-9]+$`)

type object = map[string]any

// Process returns the document in, rewritten (see the package doc).
func Process(in []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var doc object
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if doc["openapi"] != "3.1.0" {
		return nil, fmt.Errorf("openapi %v: want 3.1.0", doc["openapi"])
	}
	paths, _ := doc["paths"].(object)
	components, _ := doc["components"].(object)
	schemas, _ := components["schemas"].(object)
	if paths == nil || schemas == nil {
		return nil, errors.New("no paths or no component schemas")
	}
	ops, err := collect(paths)
	if err != nil {
		return nil, err
	}
	newPaths := object{}
	responseSchemas := map[string]bool{}
	bodySchemas := map[string]bool{}
	for _, o := range ops {
		if err := o.rewrite(ops); err != nil {
			return nil, err
		}
		if ref := refOf(o.op["requestBody"], "content", "application/json", "schema"); ref != "" {
			bodySchemas[ref] = true
		} else if s := o.bodySchema(); s != nil {
			requireSet(s) // a body with path parameters: inline
		}
		o.formBody()
		resp, err := o.responses(schemas)
		if err != nil {
			return nil, err
		}
		if resp != "" {
			responseSchemas[resp] = true
		}
		item, _ := newPaths[o.path].(object)
		if item == nil {
			item = object{}
			newPaths[o.path] = item
		}
		item[o.method] = o.op
	}
	doc["paths"] = newPaths
	for name := range bodySchemas {
		requestBodySchema(schemas, name)
	}
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		if !bodySchemas[name] {
			responseSchema(schemas[name].(object))
		}
	}
	for name := range responseSchemas {
		addStatus(schemas[name].(object))
	}
	addInfoSchemas(schemas)
	addLedgerRowSchema(schemas)
	prune(doc, schemas)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// operation is one operation of the plugin's document.
type operation struct {
	path, method string
	op           object
	base         string // operationId without the plugin's suffix
	token        bool   // the two-segment (network/token) form
	ticker       bool   // takes a ticker in the path (one or two segments)
}

// collect lists the operations in path order and checks them against rules.
func collect(paths object) ([]*operation, error) {
	var ops []*operation
	seen := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		if strings.HasSuffix(p, "/") {
			return nil, fmt.Errorf("path %s ends in a slash: the document was processed already (run buf generate first)", p)
		}
		item, _ := paths[p].(object)
		for _, m := range slices.Sorted(maps.Keys(item)) {
			op, _ := item[m].(object)
			id, _ := op["operationId"].(string)
			base := numericSuffix.ReplaceAllString(id, "")
			if _, ok := rules[base]; !ok {
				return nil, fmt.Errorf("%s %s: operation %s has no rule in tools/openapi/postprocess (public? answers 404?)", m, p, id)
			}
			seen[base] = true
			o := &operation{path: p, method: m, op: op, base: base}
			o.token = tokenPath.MatchString(p)
			o.ticker = o.token || strings.HasPrefix(p, "/{ticker}/")
			ops = append(ops, o)
		}
	}
	for _, base := range slices.Sorted(maps.Keys(rules)) {
		if !seen[base] {
			return nil, fmt.Errorf("operation %s has a rule but is not in the document", base)
		}
	}
	return ops, nil
}

// rewrite sets the operation's path, operationId, parameters and security.
func (o *operation) rewrite(all []*operation) error {
	id := o.base
	if o.token {
		o.path = tokenPath.ReplaceAllString(o.path, "/{network}/{token}$1")
		id += "ForToken"
		o.op["description"] = fmt.Sprint(o.op["description"]) +
			"\n\nThe two-segment form for a token ticker (`/trc20/usdt/...`): network and token."
	} else if o.ticker && slices.ContainsFunc(all, func(x *operation) bool { return x.base == o.base && !x.ticker }) {
		id += "ForTicker" // GET /{ticker}/info/ beside GET /info/
	}
	o.path += "/"
	o.op["operationId"] = id
	if rules[o.base].public {
		o.op["security"] = []any{}
	}
	params, _ := o.op["parameters"].([]any)
	out := make([]any, 0, len(params)+1)
	for _, p := range params {
		p := p.(object)
		name, in := p["name"], p["in"]
		switch {
		case in == "path" && name == "*":
			out = append(out, segmentParam("network", "The token's network, as `/info/` keys it (`trc20`, `erc20`, `sol`)."),
				segmentParam("token", "The token (`usdt`); a network's own coin may be named twice (`sol/sol`)."))
			continue
		case in == "path" && name == "ticker":
			s := p["schema"].(object)
			s["pattern"] = "^[A-Za-z0-9]+$"
			p["description"] = "The coin ticker (`btc`, `eth`), case-insensitive. A token takes two segments: see the `ForToken` form."
		case in == "query" && name == "ticker" && !o.ticker:
			continue // GET /info/ filtered by ticker: /{ticker}/info/ says it better
		}
		if s, ok := p["schema"].(object); ok {
			paramSchema(s)
			if positive(s["minLength"]) || positive(s["minItems"]) {
				p["required"] = true
			}
		}
		out = append(out, p)
	}
	if rules[o.base].writes {
		out = append(out, object{"$ref": "#/components/parameters/IdempotencyKey"})
	}
	if len(out) > 0 {
		o.op["parameters"] = out
	} else {
		delete(o.op, "parameters")
	}
	return nil
}

// segmentParam is one segment of a token ticker's path.
func segmentParam(name, desc string) object {
	return object{
		"name": name, "in": "path", "required": true, "description": desc,
		"schema": object{"type": "string", "pattern": "^[A-Za-z0-9]+$", "maxLength": 32},
	}
}

// responses sets the operation's responses and returns the name of the
// proto response schema that gets the status member ("" when none does).
func (o *operation) responses(schemas object) (string, error) {
	resps, _ := o.op["responses"].(object)
	ok, _ := resps["200"].(object)
	ref := refOf(ok, "content", "application/json", "schema")
	if ref == "" || schemas[ref] == nil {
		return "", fmt.Errorf("%s %s: no 200 response schema", o.method, o.path)
	}
	status := ref
	if rules[o.base].ledgerFile {
		ok = ledgerFileResponse()
		o.op["summary"] = strings.TrimPrefix(o.base, "ExportService_")
		o.op["description"] = ledgerFileDescription
		status = ""
	} else if o.base == "AddressService_GetInfo" {
		name := infoSchema
		ok["description"] = "Every offered ticker, keyed by network; no status member."
		if o.ticker {
			name = tickerInfoSchema
			ok["description"] = "The ticker's description."
		}
		ok["content"].(object)["application/json"].(object)["schema"] = object{"$ref": schemaPrefix + name}
		status = ""
	}
	// Every operation can answer 400: besides its parameters, a forwarded
	// header (apikey) that is not printable ASCII is refused by name.
	out := object{"200": ok, "400": object{"$ref": "#/components/responses/BadRequest"}}
	if !rules[o.base].public {
		out["401"] = object{"$ref": "#/components/responses/Unauthorized"}
		out["403"] = object{"$ref": "#/components/responses/Forbidden"}
	}
	if rules[o.base].writes {
		// A replay answers the first call's status and body, marked.
		ok["headers"] = object{"Idempotent-Replayed": object{"$ref": "#/components/headers/IdempotentReplayed"}}
		out["409"] = object{"$ref": "#/components/responses/IdempotencyConflict"}
	}
	if o.ticker || rules[o.base].notFound {
		out["404"] = object{"$ref": "#/components/responses/NotFound"}
	}
	out["default"] = object{"$ref": "#/components/responses/Error"}
	o.op["responses"] = out
	return status, nil
}

// refOf follows keys from v and returns the component schema name of the
// $ref found there, or "".
func refOf(v any, keys ...string) string {
	for _, k := range keys {
		m, _ := v.(object)
		v = m[k]
	}
	m, _ := v.(object)
	ref, _ := m["$ref"].(string)
	return strings.TrimPrefix(ref, schemaPrefix)
}

func positive(v any) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i > 0
}

// types returns a schema's "type" as a list.
func types(s object) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// isInt64 reports whether s is the plugin's int64 (integer or string).
func isInt64(s object) bool {
	return s["format"] == "int64" && slices.Contains(types(s), "string") && slices.Contains(types(s), "integer")
}

// paramSchema fixes a query parameter's schema: the query holds text, so an
// int64 is written as digits like any integer; an optional scalar is
// absent, not null.
func paramSchema(s object) {
	if isInt64(s) {
		s["type"] = "integer"
	}
	dropNull(s)
}

// dropNull removes "null" from a type list ([T, null] -> T).
func dropNull(s object) bool {
	t := types(s)
	if len(t) != 2 || !slices.Contains(t, "null") {
		return false
	}
	s["type"] = t[slices.Index(t, "null")^1]
	return true
}

// requestBodySchema marks a request body's fields that must not be empty
// as required; protojson reads int64 from a number or a string, as the
// plugin says.
func requestBodySchema(schemas object, name string) {
	requireSet(schemas[name].(object))
}

// requireSet marks the fields of a request body's schema s that the server
// refuses when absent as required: a string, list or map with a minimum
// size, and a number that must be above zero (an absent one is zero). The
// fields the plugin marks required stay so.
func requireSet(s object) {
	props, _ := s["properties"].(object)
	required := map[string]bool{}
	old, _ := s["required"].([]any)
	for _, k := range old {
		required[fmt.Sprint(k)] = true
	}
	for k, p := range props {
		if mustBeSet(p.(object)) {
			required[k] = true
		}
	}
	if len(required) == 0 {
		return
	}
	var out []any
	for _, k := range slices.Sorted(maps.Keys(required)) {
		out = append(out, k)
	}
	s["required"] = out
}

// mustBeSet reports whether a body field of schema p is refused when
// absent: its minimum size is positive, or it is a number (not a proto3
// optional one, which may be absent) whose zero is below its minimum.
func mustBeSet(p object) bool {
	if positive(p["minLength"]) || positive(p["minItems"]) || positive(p["minProperties"]) {
		return true
	}
	t := types(p)
	if slices.Contains(t, "null") || !(slices.Contains(t, "integer") || slices.Contains(t, "number")) {
		return false
	}
	if n, ok := p["exclusiveMinimum"].(json.Number); ok {
		f, err := n.Float64()
		return err == nil && f >= 0
	}
	if n, ok := p["minimum"].(json.Number); ok {
		f, err := n.Float64()
		return err == nil && f > 0
	}
	return false
}

// bodySchema returns the operation's inline JSON body schema, nil when it
// has none or refers to a component.
func (o *operation) bodySchema() object {
	rb, _ := o.op["requestBody"].(object)
	content, _ := rb["content"].(object)
	media, _ := content["application/json"].(object)
	s, _ := media["schema"].(object)
	if s == nil || s["$ref"] != nil {
		return nil
	}
	return s
}

// formBody adds the URL-encoded form to the body of an operation whose
// rule says the gateway takes one: the same fields, each once.
func (o *operation) formBody() {
	if !rules[o.base].form {
		return
	}
	rb, _ := o.op["requestBody"].(object)
	content, _ := rb["content"].(object)
	media, _ := content["application/json"].(object)
	if media == nil {
		return
	}
	content["application/x-www-form-urlencoded"] = object{"schema": media["schema"]}
	rb["description"] = "A JSON object; or the same fields, each once, as a URL-encoded form body, " +
		"or with no body in the query string, as this API family's clients send them."
}

// responseSchema gives a message's properties the JSON types and presence
// the gateway's marshaler (protojson, proto names, EmitDefaultValues)
// produces.
func responseSchema(s object) {
	props, _ := s["properties"].(object)
	if props == nil {
		return
	}
	var required []any
	for _, k := range slices.Sorted(maps.Keys(props)) {
		p := props[k].(object)
		switch {
		case refOf(p) == valueSchema:
			// google.protobuf.Value fields are always set: a string, or
			// null where the comment says so.
			delete(p, "$ref")
			p["type"] = []any{"string", "null"}
			required = append(required, k)
		case refOf(p) != "":
			// A message field is left out until set.
		case dropNull(p):
			// A proto3 optional field is left out until set, never null.
		default:
			int64String(p)
			if items, ok := p["items"].(object); ok {
				int64String(items)
			}
			if values, ok := p["additionalProperties"].(object); ok {
				int64String(values)
			}
			required = append(required, k)
		}
	}
	if len(required) > 0 {
		s["required"] = required
	}
}

// int64String turns the plugin's int64 into what protojson writes: a string
// of digits.
func int64String(s object) {
	if !isInt64(s) {
		return
	}
	s["type"] = "string"
	s["pattern"] = "^-?[0-9]+$"
	delete(s, "format")
}

// statusProp is the envelope member of every success body.
func statusProp() object {
	return object{
		"type": "string", "const": "success",
		"description": "Always `success` in a success body (errors answer the Error body).",
	}
}

// addStatus adds the status member, required, to a response schema.
func addStatus(s object) {
	props, _ := s["properties"].(object)
	if props == nil {
		props = object{}
		s["properties"] = props
	}
	props["status"] = statusProp()
	req, _ := s["required"].([]any)
	s["required"] = append([]any{"status"}, req...)
}

// addInfoSchemas adds the bodies of GET /info/ and GET /{ticker}/info/, as
// server/gateway's infoBody renders GetInfoResponse.
func addInfoSchemas(schemas object) {
	coin := schemaPrefix + coinInfoSchema
	schemas[infoSchema] = object{
		"type":  "object",
		"title": infoSchema,
		"description": "Every offered ticker, keyed by network (`btc`, `trc20`). A network without tokens maps to its coin; " +
			"a network with tokens maps to an object of its coins keyed by ticker, its own coin included under its own name " +
			"(`sol.sol`, `sol.usdc`). No status member: this API family's client libraries read every key as a network.",
		"additionalProperties": object{"oneOf": []any{
			object{"$ref": coin},
			object{"type": "object", "additionalProperties": object{"$ref": coin}},
		}},
	}
	c := schemas[coinInfoSchema].(object)
	t := object{}
	for k, v := range c {
		t[k] = v
	}
	props := object{}
	maps.Copy(props, c["properties"].(object))
	t["properties"] = props
	req, _ := c["required"].([]any)
	t["required"] = slices.Clone(req)
	t["title"] = tickerInfoSchema
	t["description"] = "One ticker's description (CoinInfo) with the status member."
	addStatus(t)
	schemas[tickerInfoSchema] = t
}

// prune removes the component schemas nothing refers to any more (the GET
// request messages, whose fields are query parameters; GetInfoResponse).
func prune(doc object, schemas object) {
	used := map[string]bool{}
	walkRefs(doc["paths"], used)
	walkRefs(doc["components"].(object)["responses"], used)
	for walked := map[string]bool{}; len(walked) < len(used); {
		for _, name := range slices.Sorted(maps.Keys(used)) {
			if !walked[name] {
				walked[name] = true
				walkRefs(schemas[name], used)
			}
		}
	}
	for name := range schemas {
		if !used[name] {
			delete(schemas, name)
		}
	}
}

func walkRefs(v any, used map[string]bool) {
	switch t := v.(type) {
	case object:
		if ref, ok := t["$ref"].(string); ok && strings.HasPrefix(ref, schemaPrefix) {
			used[strings.TrimPrefix(ref, schemaPrefix)] = true
		}
		for _, x := range t {
			walkRefs(x, used)
		}
	case []any:
		for _, x := range t {
			walkRefs(x, used)
		}
	}
}

// ledgerColumns are the accounting export's columns, in the file's order
// (server/ledger/export.Columns; a test checks), with what each holds.
var ledgerColumns = []struct{ name, description string }{
	{"entry_id", "The ledger line's id: rows are in its order, and the exports of two adjoining ranges never share one."},
	{"time", "When the line was journaled, RFC 3339 in UTC."},
	{"kind", "What the row records: payment, reversal, change, sweep, forward, fee, network_fee, payout or refund; for a payment to the merchant's own key (watch-only), direct (it is in their wallet) and fee_owed (the service fee, owed instead of deducted) (docs/merchant.md, Export)."},
	{"coin", "The coin as the merchant API names it (`btc`, `trc20_usdt`)."},
	{"amount", "What the project's balance at payhook moved by, in coin units (a decimal string): a payment is positive; a forward, fee, network fee, payout or refund negative."},
	{"fiat_value", "The amount valued at the time, in fiat_currency; empty when payhook holds no price it can vouch for at that time."},
	{"fiat_currency", "The currency of fiat_value (the invoice's, or the project's); empty with it."},
	{"fiat_source", "Where the rate came from: `payment` (the value payhook gave the payment when it saw it) or `price:<providers>`; empty with fiat_value."},
	{"txid", "The transaction: the outgoing one for a line of one (forward, payout, sweep), else the payment's incoming one."},
	{"invoice_id", "The public id of the invoice whose payment the line is about; empty for none."},
	{"payout_id", "The payout's id; empty for none."},
	{"refund_id", "The refund's id; empty for none."},
}

// ledgerFileDescription describes the export as the gateway answers it:
// the file, not the gRPC stream of its parts.
const ledgerFileDescription = "The project's accounting export of a date range: one row per ledger line that moves the " +
	"project's balance at payhook (payment, reversal, change, sweep, forward, fee, network_fee, payout, refund, direct, fee_owed), in " +
	"journal order, with the coin, the amount in coin units, the fiat value at the time and its source, the txid and the " +
	"invoice, payout or refund id. See docs/merchant.md (Export).\n\n" +
	"The answer is the file itself, with no status member: CSV with a header row (`format=csv`, the default) or one " +
	"JSON array of row objects (`format=json`), every value a string, named by its Content-Disposition. It is written " +
	"as it is read, so a parameter error is answered before any of it (400, with the error body), but an error after " +
	"the file began (the database failing) cannot change the 200 already sent: the file stops, cut anywhere, and the " +
	"error body `{\"status\":\"error\",\"error\":\"...\"}` follows its last bytes. A CSV that does not end " +
	"with a newline, or JSON that does not parse, is not a whole export: ask again."

// ledgerFileResponse is the 200 of the accounting export: the file, CSV
// or JSON, and the header naming it.
func ledgerFileResponse() object {
	names := make([]string, len(ledgerColumns))
	for i, c := range ledgerColumns {
		names[i] = c.name
	}
	header := strings.Join(names, ",")
	return object{
		"description": "The export file, streamed. Its Content-Type is `text/csv; charset=utf-8` or `application/json`, by `format`.",
		"headers": object{
			"Content-Disposition": object{
				"description": "`attachment; filename=ledger-FROM-TO.csv` (or `.json`): FROM and TO are the range's ends, a " +
					"date (`2026-01-01`) when the end is a midnight UTC, else a time (`2026-01-31T120000Z`).",
				"required": true,
				"schema": object{
					"type":    "string",
					"pattern": `^attachment; filename=ledger-[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{6}Z)?-[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{6}Z)?\.(csv|json)$`,
				},
			},
		},
		"content": object{
			"text/csv": object{
				"schema": object{
					"type":   "string",
					"format": "binary",
					"description": "RFC 4180 CSV in UTF-8, lines ending in LF: the header row `" + header +
						"`, then one row per ledger line; the columns are LedgerRow's.",
					"pattern": "^" + regexp.QuoteMeta(header) + `\n`,
				},
			},
			"application/json": object{
				"schema": object{
					"type":        "array",
					"description": "Every row, as an object of strings.",
					"items":       object{"$ref": schemaPrefix + ledgerRowSchema},
				},
			},
		},
	}
}

// addLedgerRowSchema adds the export's JSON row (pruned with the export).
func addLedgerRowSchema(schemas object) {
	props := object{}
	required := make([]any, len(ledgerColumns))
	for i, c := range ledgerColumns {
		props[c.name] = object{"type": "string", "description": c.description}
		required[i] = c.name
	}
	schemas[ledgerRowSchema] = object{
		"type":                 "object",
		"title":                ledgerRowSchema,
		"description":          "One row of the accounting export: a ledger line, every value a string (empty when unknown).",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}
