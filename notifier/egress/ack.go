package egress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// asciiSpace is the whitespace trimmed around a plain-text acknowledgement.
const asciiSpace = " \t\r\n\v\f"

// Acknowledged applies the acknowledgement rule to a merchant's response.
// ok is true only for an HTTP 2xx status with either
//   - a body that is one JSON object whose member "status" (exact, case-
//     sensitive name) is the JSON string "ok"; other members are allowed;
//     malformed JSON or anything after the object fails; or
//   - a legacy plain-text body that, trimmed of surrounding ASCII
//     whitespace, equals "ok" in any case.
//
// Everything else fails: non-2xx (3xx included), an empty body, malformed
// JSON, another status value ("error", "OK", true), a JSON string "ok"
// (quoted), arrays and other text. why says which rule decided, for the
// attempt log; it never repeats more than a short excerpt of the body.
func Acknowledged(status int, body []byte) (ok bool, why string) {
	if status < 200 || status > 299 {
		return false, fmt.Sprintf("HTTP status %d is not 2xx", status)
	}
	trimmed := bytes.Trim(body, asciiSpace)
	switch {
	case len(trimmed) == 0:
		return false, "empty body (want {\"status\":\"ok\"})"
	case trimmed[0] == '{':
		return ackJSON(trimmed)
	case len(trimmed) == 2 && strings.EqualFold(string(trimmed), "ok"):
		return true, "plain-text ok (legacy)"
	case json.Valid(trimmed):
		return false, fmt.Sprintf("body is a JSON %s, not an object with \"status\":\"ok\"", jsonKind(trimmed[0]))
	case trimmed[0] == '[' || trimmed[0] == '"':
		return false, "malformed JSON body"
	}
	return false, fmt.Sprintf("body %s is neither {\"status\":\"ok\"} nor plain-text ok", excerpt(trimmed))
}

// Acknowledged2xx is the acknowledgement rule of an endpoint's deliveries
// (Standard Webhooks receivers answer any 2xx, commonly 204 with no body):
// ok for every 2xx status, whatever the body.
func Acknowledged2xx(status int) (ok bool, why string) {
	if status < 200 || status > 299 {
		return false, fmt.Sprintf("HTTP status %d is not 2xx", status)
	}
	return true, fmt.Sprintf("HTTP %d (an endpoint's delivery: any 2xx)", status)
}

// ackJSON decides a body that starts with '{'. json.Unmarshal refuses
// trailing data after the object. A map keeps member names exact (a struct
// would also match "Status" or "STATUS"); with a duplicated "status" the
// last one counts, as encoding/json decides.
func ackJSON(b []byte) (bool, string) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return false, "malformed JSON body"
	}
	raw, found := obj["status"]
	if !found {
		return false, "JSON object has no \"status\" member"
	}
	raw = bytes.TrimLeft(raw, asciiSpace)
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return false, fmt.Sprintf("JSON \"status\" is %s, not the string \"ok\"", jsonExcerpt(raw))
	}
	if s != "ok" {
		return false, fmt.Sprintf("JSON \"status\" is %s, not \"ok\"", jsonExcerpt(raw))
	}
	return true, "JSON status ok"
}

func jsonKind(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// excerpt quotes at most 32 bytes of b for a log line.
func excerpt(b []byte) string {
	const n = 32
	if len(b) > n {
		return fmt.Sprintf("%q...", b[:n])
	}
	return fmt.Sprintf("%q", b)
}

// jsonExcerpt shows a JSON value as written when it is short printable
// ASCII, and quoted like excerpt otherwise.
func jsonExcerpt(b []byte) string {
	if len(b) <= 32 && !bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 || r > 0x7e }) {
		return string(b)
	}
	return excerpt(b)
}
