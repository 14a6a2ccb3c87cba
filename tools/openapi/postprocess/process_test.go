package main

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

// pluginDoc is a document as protoc-gen-connect-openapi writes it: every
// operation of rules (so that the step accepts it), with the shapes the
// rewrite rules apply to.
func pluginDoc(t *testing.T, edit func(paths object)) []byte {
	t.Helper()
	resp := func(schema string) object {
		return object{"200": object{"description": "Success", "content": object{"application/json": object{
			"schema": object{"$ref": schemaPrefix + schema}}}}}
	}
	paths := object{}
	for id := range rules {
		schema := "payhook.v1.Plain"
		if id == "AddressService_GetInfo" {
			schema = "payhook.v1.GetInfoResponse"
		}
		paths["/"+id] = object{"get": object{"operationId": id, "responses": resp(schema)}}
	}
	paths["/{ticker}/create"] = object{"get": object{"operationId": "AddressService_CreateAddress", "responses": resp("payhook.v1.Created"),
		"parameters": []any{
			object{"name": "ticker", "in": "path", "required": true, "schema": object{"type": "string"}},
			object{"name": "callback", "in": "query", "schema": object{"type": "string", "minLength": 1}},
			object{"name": "expire_at", "in": "query", "schema": object{"type": []any{"integer", "string"}, "format": "int64"}},
		}}}
	paths["/*/{*}/create"] = object{"get": object{"operationId": "AddressService_CreateAddress2", "responses": resp("payhook.v1.Created"),
		"parameters": []any{object{"name": "*", "in": "path", "required": true, "schema": object{"type": "string"}}}}}
	paths["/{ticker}/info"] = object{"get": object{"operationId": "AddressService_GetInfo2", "responses": resp("payhook.v1.GetInfoResponse")}}
	// A body by reference, which the gateway also takes as a form; an
	// inline body (the operation has path parameters).
	body := func(schema object) object {
		return object{"required": true, "content": object{"application/json": object{"schema": schema}}}
	}
	paths["/PayoutService_ProcessPayout"] = object{"post": object{"operationId": "PayoutService_ProcessPayout", "responses": resp("payhook.v1.Plain"),
		"requestBody": body(object{"$ref": schemaPrefix + "payhook.v1.ProcessPayoutRequest"})}}
	paths["/PayoutService_CreatePayoutRequests"] = object{"post": object{"operationId": "PayoutService_CreatePayoutRequests", "responses": resp("payhook.v1.Plain"),
		"requestBody": body(object{"type": "object", "properties": object{
			"outputs": object{"type": "object", "minProperties": 1, "additionalProperties": object{"type": "string"}},
			"note":    object{"type": "string"},
		}})}}
	if edit != nil {
		edit(paths)
	}
	doc := object{
		"openapi": "3.1.0",
		"paths":   paths,
		"components": object{
			"responses": object{},
			"schemas": object{
				"payhook.v1.Plain": object{"type": "object", "properties": object{}},
				"payhook.v1.Created": object{"type": "object", "additionalProperties": false, "properties": object{
					"expires_at": object{"type": []any{"integer", "string"}, "format": "int64"},
					"txid_out":   object{"type": []any{"string", "null"}},
					"value":      object{"$ref": schemaPrefix + valueSchema},
					"created_at": object{"$ref": schemaPrefix + "google.protobuf.Timestamp"},
					"count":      object{"type": "integer", "format": "int32"},
				}},
				"payhook.v1.GetInfoResponse": object{"type": "object"},
				"payhook.v1.CoinInfo":        object{"type": "object", "properties": object{"ticker": object{"type": "string"}}},
				"google.protobuf.Timestamp":  object{"type": "string", "format": "date-time"},
				"google.protobuf.Value":      object{},
				"payhook.v1.Unused":          object{"type": "object"},
				"payhook.v1.ProcessPayoutRequest": object{"type": "object", "required": []any{"note"}, "properties": object{
					"payout_id": object{"type": []any{"integer", "string"}, "format": "int64", "exclusiveMinimum": 0},
					"limit":     object{"type": "integer", "minimum": 0},
					"size":      object{"type": []any{"integer", "null"}, "minimum": 1},
					"note":      object{"type": "string"},
				}},
				"google.api.HttpBody": object{"type": "object"},
			},
		},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProcess(t *testing.T) {
	out, err := Process(pluginDoc(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]map[string]any
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	create := doc.Paths["/{ticker}/create/"]["get"]
	token := doc.Paths["/{network}/{token}/create/"]["get"]
	schemas := doc.Components.Schemas
	export := doc.Paths["/ExportService_ExportLedger/"]["get"]["responses"].(map[string]any)["200"].(map[string]any)
	checks := []struct{ name, got, want string }{
		{"token operationId", js(token["operationId"]), `"AddressService_CreateAddressForToken"`},
		{"token path parameters", js([]any{token["parameters"].([]any)[0].(map[string]any)["name"], token["parameters"].([]any)[1].(map[string]any)["name"]}), `["network","token"]`},
		{"ticker info operationId", js(doc.Paths["/{ticker}/info/"]["get"]["operationId"]), `"AddressService_GetInfoForTicker"`},
		{"required query parameter", js(create["parameters"].([]any)[1].(map[string]any)["required"]), `true`},
		{"int64 query parameter", js(create["parameters"].([]any)[2].(map[string]any)["schema"]), `{"format":"int64","type":"integer"}`},
		{"secured responses", js(create["responses"]), `{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/payhook.v1.Created"}}},"description":"Success","headers":{"Idempotent-Replayed":{"$ref":"#/components/headers/IdempotentReplayed"}}},"400":{"$ref":"#/components/responses/BadRequest"},"401":{"$ref":"#/components/responses/Unauthorized"},"403":{"$ref":"#/components/responses/Forbidden"},"404":{"$ref":"#/components/responses/NotFound"},"409":{"$ref":"#/components/responses/IdempotencyConflict"},"default":{"$ref":"#/components/responses/Error"}}`},
		{"idempotency key header", js(create["parameters"].([]any)[len(create["parameters"].([]any))-1]), `{"$ref":"#/components/parameters/IdempotencyKey"}`},
		{"a read takes no idempotency key", js(doc.Paths["/AddressService_GetLogs/"]["get"]["parameters"]), `null`},
		{"read responses", js(doc.Paths["/AddressService_GetLogs/"]["get"]["responses"]), `{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/payhook.v1.Plain"}}},"description":"Success"},"400":{"$ref":"#/components/responses/BadRequest"},"401":{"$ref":"#/components/responses/Unauthorized"},"403":{"$ref":"#/components/responses/Forbidden"},"404":{"$ref":"#/components/responses/NotFound"},"default":{"$ref":"#/components/responses/Error"}}`},
		{"public responses", js(doc.Paths["/AddressService_Convert/"]["get"]["responses"]), `{"200":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/payhook.v1.Plain"}}},"description":"Success"},"400":{"$ref":"#/components/responses/BadRequest"},"default":{"$ref":"#/components/responses/Error"}}`},
		{"public security", js(doc.Paths["/AddressService_Convert/"]["get"]["security"]), `[]`},
		{"secured inherits", js(create["security"]), `null`},
		{"info body", js(doc.Paths["/AddressService_GetInfo/"]["get"]["responses"].(map[string]any)["200"].(map[string]any)["content"]), `{"application/json":{"schema":{"$ref":"#/components/schemas/Info"}}}`},
		{"ticker info body", js(doc.Paths["/{ticker}/info/"]["get"]["responses"].(map[string]any)["200"].(map[string]any)["content"]), `{"application/json":{"schema":{"$ref":"#/components/schemas/TickerInfo"}}}`},
		{"int64 as digits", js(schemas["payhook.v1.Created"]["properties"].(map[string]any)["expires_at"]), `{"pattern":"^-?[0-9]+$","type":"string"}`},
		{"optional left out, never null", js(schemas["payhook.v1.Created"]["properties"].(map[string]any)["txid_out"]), `{"type":"string"}`},
		{"Value is string or null", js(schemas["payhook.v1.Created"]["properties"].(map[string]any)["value"]), `{"type":["string","null"]}`},
		{"required members", js(schemas["payhook.v1.Created"]["required"]), `["status","count","expires_at","value"]`},
		{"status member", js(schemas["TickerInfo"]["required"]), `["status","ticker"]`},
		{"unused schemas pruned", js([]bool{schemas["payhook.v1.Unused"] != nil, schemas["payhook.v1.GetInfoResponse"] != nil, schemas["google.protobuf.Value"] != nil}), `[false,false,false]`},
		{"a body number above zero is required", js(schemas["payhook.v1.ProcessPayoutRequest"]["required"]), `["note","payout_id"]`},
		{"an inline body's map with a minimum size is required", js(doc.Paths["/PayoutService_CreatePayoutRequests/"]["post"]["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["required"]), `["outputs"]`},
		{"form body", js(doc.Paths["/PayoutService_ProcessPayout/"]["post"]["requestBody"].(map[string]any)["content"]), `{"application/json":{"schema":{"$ref":"#/components/schemas/payhook.v1.ProcessPayoutRequest"}},"application/x-www-form-urlencoded":{"schema":{"$ref":"#/components/schemas/payhook.v1.ProcessPayoutRequest"}}}`},
		{"no form body unless the rule says so", js(doc.Paths["/PayoutService_CreatePayoutRequests/"]["post"]["requestBody"].(map[string]any)["content"].(map[string]any)["application/x-www-form-urlencoded"]), `null`},
		{"export media types", js(slices.Sorted(maps.Keys(export["content"].(map[string]any)))), `["application/json","text/csv"]`},
		{"export CSV", js(export["content"].(map[string]any)["text/csv"].(map[string]any)["schema"].(map[string]any)["pattern"]), `"^entry_id,time,kind,coin,amount,fiat_value,fiat_currency,fiat_source,txid,invoice_id,payout_id,refund_id\\n"`},
		{"export JSON", js(export["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)["items"]), `{"$ref":"#/components/schemas/LedgerRow"}`},
		{"export file name", js(slices.Collect(maps.Keys(export["headers"].(map[string]any)))), `["Content-Disposition"]`},
		{"export row", js(schemas["LedgerRow"]["required"]), `["entry_id","time","kind","coin","amount","fiat_value","fiat_currency","fiat_source","txid","invoice_id","payout_id","refund_id"]`},
		{"no HttpBody", js(schemas["google.api.HttpBody"]), `null`},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
		}
	}
}

func TestProcessRefuses(t *testing.T) {
	rows := []struct {
		name, want string
		edit       func(paths object)
	}{
		{"an operation without a rule", "has no rule", func(p object) {
			p["/devnet/{ticker}/pay"] = object{"post": object{"operationId": "DevnetService_Pay", "responses": object{}}}
		}},
		{"a rule without its operation", "not in the document", func(p object) { delete(p, "/AddressService_GetLogs") }},
		{"a processed document", "processed already", func(p object) { p["/pubkey/"] = p["/AddressService_GetPublicKey"] }},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, err := Process(pluginDoc(t, r.edit))
			if err == nil || !strings.Contains(err.Error(), r.want) {
				t.Fatalf("err %v, want one saying %q", err, r.want)
			}
		})
	}
}

// TestCommittedDocumentIsProcessed: the committed document went through
// this step (scripts/check-generated.sh proves it is current).
func TestCommittedDocumentIsProcessed(t *testing.T) {
	b, err := os.ReadFile("../../../gen/openapi/payhook.openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Process(b); err == nil || !strings.Contains(err.Error(), "processed already") {
		t.Fatalf("the committed document looks unprocessed: %v", err)
	}
}
