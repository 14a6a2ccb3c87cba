package egress_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/payhook/payhook/notifier/egress"
)

func TestAcknowledged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
		why    string // substring of why
	}{
		// Spec, Errors table, row 1: 2xx with a JSON object whose status is exactly ok.
		{"spec row 1: 200 JSON status ok", 200, `{"status":"ok"}`, true, "JSON status ok"},
		{"spec row 1: extra members allowed", 200, `{"uuid":"x","status":"ok","n":1,"nested":{"status":"error"}}`, true, "JSON status ok"},
		{"spec row 1: whitespace around and inside JSON", 202, " \n{ \"status\" : \"ok\" }\r\n", true, "JSON status ok"},
		{"spec row 1: 204 is 2xx", 204, `{"status":"ok"}`, true, "JSON status ok"},
		{"spec row 1: 299 is 2xx", 299, `{"status":"ok"}`, true, "JSON status ok"},
		{"spec row 1: escaped ok is the string ok", 200, `{"status":"\u006fk"}`, true, "JSON status ok"},
		// Row 2: legacy plain text ok, case-insensitive, surrounding whitespace ignored.
		{"spec row 2: plain ok", 200, "ok", true, "plain-text ok"},
		{"spec row 2: plain OK upper case", 200, "OK", true, "plain-text ok"},
		{"spec row 2: plain Ok mixed case", 201, "Ok", true, "plain-text ok"},
		{"spec row 2: surrounding whitespace", 200, " \t\r\n ok \r\n", true, "plain-text ok"},
		// Row 3: "plain ok" read as the quoted JSON string, then empty, malformed, other status.
		{"spec row 3: JSON string ok (quoted)", 200, `"ok"`, false, "JSON string"},
		{"spec row 3: empty body", 200, "", false, "empty body"},
		{"spec row 3: whitespace-only body", 200, " \r\n", false, "empty body"},
		{"spec row 3: malformed JSON", 200, `{"status":"ok"`, false, "malformed JSON"},
		{"spec row 3: trailing garbage after object", 200, `{"status":"ok"}x`, false, "malformed JSON"},
		{"spec row 3: two objects", 200, `{"status":"ok"}{"status":"ok"}`, false, "malformed JSON"},
		{"spec row 3: status error", 200, `{"status":"error"}`, false, `"error"`},
		{"spec row 3: status OK is not exactly ok", 200, `{"status":"OK"}`, false, `"OK"`},
		{"spec row 3: status with spaces", 200, `{"status":" ok"}`, false, `not "ok"`},
		{"spec row 3: status true", 200, `{"status":true}`, false, "not the string"},
		{"spec row 3: status null", 200, `{"status":null}`, false, "not the string"},
		{"spec row 3: status object", 200, `{"status":{"ok":true}}`, false, "not the string"},
		{"spec row 3: member name is case-sensitive", 200, `{"Status":"ok"}`, false, "no \"status\" member"},
		{"spec row 3: no status member", 200, `{"result":"ok"}`, false, "no \"status\" member"},
		{"spec row 3: duplicate status, last wins", 200, `{"status":"ok","status":"error"}`, false, `"error"`},
		{"spec row 3: array", 200, `[{"status":"ok"}]`, false, "JSON array"},
		{"spec row 3: malformed array", 200, `[`, false, "malformed JSON"},
		{"spec row 3: number", 200, `1`, false, "JSON number"},
		{"spec row 3: boolean", 200, `true`, false, "JSON boolean"},
		{"spec row 3: null", 200, `null`, false, "JSON null"},
		{"spec row 3: other text", 200, "okay", false, "neither"},
		{"spec row 3: ok with more text", 200, "ok thanks", false, "neither"},
		{"spec row 3: html", 200, "<html>ok</html>", false, "neither"},
		// Row 4: any other status.
		{"spec row 4: 500 with JSON ok", 500, `{"status":"ok"}`, false, "HTTP status 500"},
		{"spec row 4: 404 plain ok", 404, "ok", false, "HTTP status 404"},
		{"spec row 4: 302 redirect is not 2xx", 302, `{"status":"ok"}`, false, "HTTP status 302"},
		{"spec row 4: 301", 301, "", false, "HTTP status 301"},
		{"spec row 4: 199", 199, "ok", false, "HTTP status 199"},
		{"spec row 4: 300", 300, "ok", false, "HTTP status 300"},
		{"spec row 4: 0 (no response)", 0, "ok", false, "HTTP status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, why := egress.Acknowledged(tt.status, []byte(tt.body))
			if ok != tt.ok || !strings.Contains(why, tt.why) {
				t.Errorf("Acknowledged(%d, %q) = %v, %q; want %v, containing %q", tt.status, tt.body, ok, why, tt.ok, tt.why)
			}
		})
	}
}

func TestAcknowledgedWhyIsShort(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("x"), 1<<20)
	if ok, why := egress.Acknowledged(200, body); ok || len(why) > 200 {
		t.Errorf("Acknowledged(200, 1 MiB) = %v, %d-byte why; want false and a short why", ok, len(why))
	}
}

func FuzzAcknowledged(f *testing.F) {
	for _, s := range []string{`{"status":"ok"}`, "ok", " OK\n", `"ok"`, `{"status":"ok"}x`, `{"status":true}`, "", "[", `{"a":{"status":"ok"}}`} {
		f.Add(200, []byte(s))
	}
	f.Add(302, []byte("ok"))
	f.Add(-1, []byte(`{"status":"ok"}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		ok, why := egress.Acknowledged(status, body)
		if why == "" {
			t.Fatal("empty why")
		}
		if !ok {
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("acknowledged with status %d", status)
		}
		// An acknowledgement is legacy ok or a JSON object with status "ok".
		if strings.EqualFold(strings.Trim(string(body), " \t\r\n\v\f"), "ok") {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil || obj["status"] != "ok" {
			t.Fatalf("acknowledged %q (%s), which is neither plain ok nor {\"status\":\"ok\"}", body, why)
		}
	})
}

func BenchmarkAcknowledged(b *testing.B) {
	bodies := []struct{ name, body string }{
		{"json", `{"status":"ok","uuid":"0b2c6f4e-8d4a-4f3e-9b1e-2f4c8a6d1e3f"}`},
		{"plain", "ok\n"},
		{"json_error", `{"status":"error","message":"unknown address"}`},
		{"html", "<html><body>Service Unavailable</body></html>"},
	}
	for _, bb := range bodies {
		body := []byte(bb.body)
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				egress.Acknowledged(200, body)
			}
		})
	}
}
