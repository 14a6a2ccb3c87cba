package invoice

import (
	"strings"
	"testing"
)

// TestCheckEmail: a checkout's email is empty (no receipt) or one plain
// address, trimmed; anything else is refused naming the email parameter.
func TestCheckEmail(t *testing.T) {
	t.Parallel()
	for _, r := range []struct {
		name, raw, want string
		ok              bool
	}{
		{"none", "", "", true},
		{"blank", "  ", "", true},
		{"plain", "payer@example.org", "payer@example.org", true},
		{"trimmed", " payer@example.org ", "payer@example.org", true},
		{"display name", "Payer <payer@example.org>", "", false},
		{"no domain", "payer", "", false},
		{"two", "a@example.org, b@example.org", "", false},
		{"line break", "payer@example.org\r\nBcc: x@example.org", "", false},
		{"too long", strings.Repeat("a", 250) + "@example.org", "", false},
	} {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			got, err := CheckEmail(r.raw)
			if r.ok != (err == nil) || got != r.want {
				t.Fatalf("CheckEmail(%q) = %q, %v", r.raw, got, err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "email") {
				t.Fatalf("error %q does not name the parameter", err)
			}
		})
	}
}
