package main

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// TestEmailFlags: --smtp-url and --operator-email (repeatable, or
// comma-separated in PAYHOOK_OPERATOR_EMAIL) reach the server's email
// settings, the password comes from PAYHOOK_SMTP_PASSWORD, and a bad
// setting is named by its flag without the password in the message.
func TestEmailFlags(t *testing.T) {
	const pw = "not-in-any-message"
	t.Setenv("PAYHOOK_SMTP_PASSWORD", pw)
	t.Setenv("PAYHOOK_OPERATOR_EMAIL", "ops@host.example,oncall@host.example")
	cfg, err := serveConfig([]string{"--dev", "--smtp-url", "smtp://payhook@mail.example?from=payhook%40shop.example"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Email.URL != "smtp://payhook@mail.example?from=payhook%40shop.example" || cfg.Email.Password != pw ||
		!slices.Equal(cfg.Email.Operators, []string{"ops@host.example", "oncall@host.example"}) {
		t.Fatalf("email settings %+v", cfg.Email)
	}
	if err := cfg.WithDefaults().Validate(); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
	cfg, err = serveConfig([]string{"--dev", "--smtp-url", "smtp://payhook:" + pw + "@mail.example?from=payhook%40shop.example",
		"--operator-email", "a@x.example", "--operator-email", "b@x.example"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Email.Operators, []string{"a@x.example", "b@x.example"}) {
		t.Fatalf("operators %v: the flag wins over the environment", cfg.Email.Operators)
	}
	err = cfg.WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "give the password one way") || strings.Contains(err.Error(), pw) {
		t.Fatalf("a password in the URL and the environment: %v", err)
	}
	t.Setenv("PAYHOOK_SMTP_PASSWORD", "")
	cfg, err = serveConfig([]string{"--dev", "--operator-email", "a@x.example"}, io.Discard, io.Discard)
	if err == nil {
		err = cfg.WithDefaults().Validate()
	}
	if err == nil || !strings.Contains(err.Error(), "--operator-email: needs --smtp-url") {
		t.Fatalf("--operator-email without --smtp-url: %v", err)
	}
}
