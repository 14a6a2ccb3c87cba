package eventtype_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/payhook/payhook/internal/kind"
	"github.com/payhook/payhook/notifier/payload"
	"github.com/payhook/payhook/server/merchant/eventtype"
	"github.com/payhook/payhook/server/merchant/eventtype/eventtypetest"
)

var update = flag.Bool("update", false, "rewrite testdata/catalogue.golden from the current catalogue")

// TestCatalogue checks the catalogue's entries: unique names, each with a
// description and its services, unique field names, and the families the
// issue names all present (a family dropped by mistake fails here).
func TestCatalogue(t *testing.T) {
	all := eventtype.All()
	names := map[string]bool{}
	for _, e := range all {
		if names[e.Name] {
			t.Errorf("%s listed twice", e.Name)
		}
		names[e.Name] = true
		if e.Description == "" || len(e.Services) == 0 || len(e.Fields) == 0 {
			t.Errorf("%s: no description, service or field", e.Name)
		}
		fields := map[string]bool{}
		for _, f := range e.Fields {
			if fields[f.Name] {
				t.Errorf("%s: field %s twice", e.Name, f.Name)
			}
			fields[f.Name] = true
		}
		if !fields["uuid"] {
			t.Errorf("%s: no uuid", e.Name)
		}
	}
	var want []string
	for _, p := range []string{"checkout.payment.", "deposit.payment.", "subscription.payment.", "custom.payment."} {
		for _, s := range []string{"pending", "confirmed", "completed"} {
			want = append(want, p+s)
		}
	}
	for _, p := range []string{"checkout.refund.", "deposit.refund."} {
		for _, s := range []string{"requested", "pending", "completed", "failed"} {
			want = append(want, p+s)
		}
	}
	want = append(want, "wrong_asset", "payout.done", "payout.error", "test.webhook")
	for _, n := range want {
		if !names[n] {
			t.Errorf("%s is not in the catalogue", n)
		}
	}
	if len(names) != len(want) {
		t.Errorf("the catalogue has %d event types, want %d: a new one needs a row here", len(names), len(want))
	}
}

// TestLookup finds every event type and refuses an unknown one as not
// found, naming it.
func TestLookup(t *testing.T) {
	for _, e := range eventtype.All() {
		got, err := eventtype.Lookup(e.Name)
		if err != nil || got.Name != e.Name {
			t.Errorf("Lookup(%s) = %v, %v", e.Name, got.Name, err)
		}
	}
	_, err := eventtype.Lookup("checkout.payment.lost")
	if !errors.Is(err, eventtype.ErrUnknown) || kind.Of(err) != kind.NotFound {
		t.Fatalf("unknown event: %v", err)
	}
	if msg := kind.Message(err); msg != `name: unknown event type "checkout.payment.lost": GET /events/types/ lists them` {
		t.Errorf("message %q", msg)
	}
}

// TestSchemas compiles every schema as draft 2020-12 (the compiler checks
// it against the meta-schema) and pins the whole catalogue in
// testdata/catalogue.golden, so a change of what merchants are promised is
// a deliberate one (go test -update rewrites it).
func TestSchemas(t *testing.T) {
	if _, err := eventtypetest.New(); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Services    []string       `json:"services"`
		Schema      map[string]any `json:"schema"`
	}
	var out []entry
	for _, e := range eventtype.All() {
		s := e.Schema()
		if s["$schema"] != eventtype.Dialect || s["type"] != "object" {
			t.Errorf("%s: schema head %v %v", e.Name, s["$schema"], s["type"])
		}
		req := s["required"].([]any)
		for _, f := range e.Fields {
			if (f.When == "") != slices.Contains(req, any(f.Name)) {
				t.Errorf("%s: %s required is not When == %q", e.Name, f.Name, f.When)
			}
		}
		out = append(out, entry{e.Name, e.Description, e.Services, s})
	}
	got, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "catalogue.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the catalogue differs from %s: run go test ./server/merchant/eventtype -update and review the diff", path)
	}
}

// TestCheckerRefuses: the checker the suite relies on fails what it must
// (it is what makes the builders' tests able to fail).
func TestCheckerRefuses(t *testing.T) {
	c, err := eventtypetest.Default()
	if err != nil {
		t.Fatal(err)
	}
	const okJSON = `{"event_type":"test.webhook","uuid":"u","project_id":1,"created_at":2}`
	tests := []struct {
		name, event, method, url, ctype, body string
		ok                                    bool
	}{
		{"valid JSON", "test.webhook", "POST", "https://m.example/h", "application/json", okJSON, true},
		{"unknown event", "test.hook", "POST", "https://m.example/h", "application/json", okJSON, false},
		{"unknown field", "test.webhook", "POST", "https://m.example/h", "application/json", `{"event_type":"test.webhook","uuid":"u","project_id":1,"created_at":2,"x":"y"}`, false},
		{"number as string", "test.webhook", "POST", "https://m.example/h", "application/json", `{"event_type":"test.webhook","uuid":"u","project_id":"1","created_at":2}`, false},
		{"required missing", "test.webhook", "POST", "https://m.example/h", "application/json", `{"event_type":"test.webhook","uuid":"u","project_id":1}`, false},
		{"wrong event_type", "test.webhook", "POST", "https://m.example/h", "application/json", `{"event_type":"x","uuid":"u","project_id":1,"created_at":2}`, false},
		{"GET with own query", "test.webhook", "GET", "https://m.example/h?order=1&event_type=test.webhook&uuid=u&project_id=1&created_at=2", "", "", true},
		{"GET integer not a number", "test.webhook", "GET", "https://m.example/h?event_type=test.webhook&uuid=u&project_id=one&created_at=2", "", "", false},
		{"GET extra field among fields", "test.webhook", "GET", "https://m.example/h?event_type=test.webhook&uuid=u&x=1&project_id=1&created_at=2", "", "", false},
		{"form", "payout.error", "POST", "https://m.example/h", "application/x-www-form-urlencoded",
			"uuid=u&payout_id=3&status=error&coin=btc&total_requested=1&fee=0&blockchain_fee=0.0001&total_with_fee=1.0001&from=a&requests=%7B%7D&error=e&timestamp=1", true},
		{"form: a field of another stage", "payout.error", "POST", "https://m.example/h", "application/x-www-form-urlencoded",
			"uuid=u&payout_id=3&status=error&coin=btc&total_requested=1&fee=0&blockchain_fee=0.0001&total_with_fee=1.0001&from=a&requests=%7B%7D&txid=t&error=e&timestamp=1", false},
		{"form: JSON text that is not JSON", "payout.error", "POST", "https://m.example/h", "application/x-www-form-urlencoded",
			"uuid=u&payout_id=3&status=error&coin=btc&total_requested=1&fee=0&blockchain_fee=0.0001&total_with_fee=1.0001&from=a&requests=%7B&error=e&timestamp=1", false},
		{"form: amount not decimal", "payout.error", "POST", "https://m.example/h", "application/x-www-form-urlencoded",
			"uuid=u&payout_id=3&status=error&coin=btc&total_requested=1e3&fee=0&blockchain_fee=0.0001&total_with_fee=1.0001&from=a&requests=%7B%7D&error=e&timestamp=1", false},
		{"custom params allowed in callbacks", "custom.payment.pending", "POST", "https://m.example/h", "application/json",
			`{"uuid":"u","address_in":"a","address_out":{"b":1},"txid_in":"t","confirmations":0,"required_confirmations":1,"payment_status":"pending","coin":"btc","value_coin":0.1,"order":"7"}`, true},
		{"completed fields on a pending callback", "custom.payment.pending", "POST", "https://m.example/h", "application/json",
			`{"uuid":"u","address_in":"a","address_out":{"b":1},"txid_in":"t","confirmations":0,"required_confirmations":1,"payment_status":"pending","coin":"btc","value_coin":0.1,"fee_coin":0.1}`, false},
	}
	for _, tc := range tests {
		err := c.Check(tc.event, payloadRequest(tc.method, tc.url, tc.ctype, tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s: Check = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// payloadRequest is a request as a notification row holds it.
func payloadRequest(method, url, ctype, body string) payload.Request {
	r := payload.Request{Method: method, URL: url, ContentType: ctype}
	if body != "" {
		r.Body = []byte(body)
	}
	return r
}

// TestDocsListEveryEventType: docs/events.md, the merchants' page, names
// every event type of the catalogue and none other.
func TestDocsListEveryEventType(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| (`[^|]+`) \\|").FindAllStringSubmatch(string(b), -1) {
		for _, n := range strings.Split(m[1], ", ") {
			listed[strings.Trim(n, "`")] = true
		}
	}
	for _, e := range eventtype.All() {
		if !listed[e.Name] {
			t.Errorf("docs/events.md does not list %s", e.Name)
		}
		delete(listed, e.Name)
	}
	for n := range listed {
		t.Errorf("docs/events.md lists %s, which the catalogue has not", n)
	}
}
