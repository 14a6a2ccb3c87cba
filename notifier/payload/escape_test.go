package payload

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

func FuzzEscape(f *testing.F) {
	f.Add("plain")
	f.Add("\x00\b\f\n\r\t\"\\<>&\u2028\u2029\xff\xc3é ~")
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := string(AppendJSONString(nil, s)), strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Fatalf("AppendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
		if got, want := string(appendQueryEscape(nil, s)), url.QueryEscape(s); got != want {
			t.Fatalf("appendQueryEscape(%q) = %s, url.QueryEscape gives %s", s, got, want)
		}
	})
}
