package mail_test

import (
	"strings"
	"testing"

	"github.com/payhook/payhook/server/mail"
)

// TestConfigValidate: each bad --smtp-url or --operator-email is refused
// naming the flag and what is wrong, never quoting the password; good
// ones pass.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-secret"
	rows := []struct {
		name    string
		cfg     mail.Config
		wantErr string // "" accepts
	}{
		{"off", mail.Config{}, ""},
		{"STARTTLS with user and password", mail.Config{URL: "smtp://u:" + pw + "@mail.example:587?from=payhook%40shop.example"}, ""},
		{"implicit TLS, default port", mail.Config{URL: "smtps://u:" + pw + "@mail.example?from=payhook%40shop.example"}, ""},
		{"display name", mail.Config{URL: "smtp://mail.example?from=Payhook+%3Cpayhook%40shop.example%3E"}, ""},
		{"password from the environment", mail.Config{URL: "smtp://u@mail.example?from=a%40b.example", Password: pw}, ""},
		{"clear on loopback with a password", mail.Config{URL: "smtp://u:" + pw + "@127.0.0.1:2525?tls=none&from=a%40b.example"}, ""},
		{"operators", mail.Config{URL: "smtp://mail.example?from=a%40b.example", Operators: []string{"ops@x.example", "oncall@x.example"}}, ""},

		{"not a URL", mail.Config{URL: "smtp://u:" + pw + "@mail.example:99999999999999999999?from=a%40b.example"}, "--smtp-url: port"},
		{"bad escape", mail.Config{URL: "smtp://u:" + pw + "%zz@mail.example?from=a%40b.example"}, "--smtp-url: not a URL"},
		{"scheme", mail.Config{URL: "http://mail.example?from=a%40b.example"}, `--smtp-url: scheme "http"`},
		{"no host", mail.Config{URL: "smtp://?from=a%40b.example"}, "--smtp-url: no host"},
		{"no sender", mail.Config{URL: "smtp://u:" + pw + "@mail.example"}, "--smtp-url: no sender: add ?from=ADDRESS"},
		{"bad sender", mail.Config{URL: "smtp://mail.example?from=nobody"}, `--smtp-url: from "nobody" is not an email address`},
		{"unknown parameter", mail.Config{URL: "smtp://mail.example?from=a%40b.example&starttls=1"}, `unknown parameter "starttls"`},
		{"tls on smtps", mail.Config{URL: "smtps://mail.example?from=a%40b.example&tls=none"}, "tls="},
		{"tls other value", mail.Config{URL: "smtp://mail.example?from=a%40b.example&tls=opportunistic"}, `tls="opportunistic"`},
		{"password in clear to another host", mail.Config{URL: "smtp://u:" + pw + "@mail.example?tls=none&from=a%40b.example"}, "would send the password in clear to mail.example"},
		{"password twice", mail.Config{URL: "smtp://u:" + pw + "@mail.example?from=a%40b.example", Password: pw}, "give the password one way"},
		{"password without user", mail.Config{URL: "smtp://mail.example?from=a%40b.example", Password: pw}, "PAYHOOK_SMTP_PASSWORD: the --smtp-url names no user"},
		{"path", mail.Config{URL: "smtp://mail.example/x?from=a%40b.example"}, "no path"},
		{"bad operator", mail.Config{URL: "smtp://mail.example?from=a%40b.example", Operators: []string{"Ops <ops@x.example>"}}, `--operator-email "Ops <ops@x.example>": not an email address`},
		{"operator without URL", mail.Config{Operators: []string{"ops@x.example"}}, "--operator-email: needs --smtp-url"},
		{"password without URL", mail.Config{Password: pw}, "PAYHOOK_SMTP_PASSWORD: needs --smtp-url"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			err := r.cfg.WithDefaults().Validate()
			switch {
			case r.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case r.wantErr != "" && err == nil:
				t.Fatalf("accepted, want %q", r.wantErr)
			case err != nil && !strings.Contains(err.Error(), r.wantErr):
				t.Fatalf("error %q, want %q", err, r.wantErr)
			case err != nil && strings.Contains(err.Error(), pw):
				t.Fatalf("error %q holds the password", err)
			}
		})
	}
}
