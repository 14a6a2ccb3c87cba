package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/merchant/project"
	"github.com/payhook/payhook/server/ratelimit"
)

// TestServeLimitFlags: serve's limit flags default to the documented
// limits, and 0 turns a rate, a cap or the test quota off.
func TestServeLimitFlags(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name string
		args []string
		want ratelimit.Limits
	}{
		{"defaults", nil, ratelimit.Limits{KeyRate: 50, KeyBurst: 100, AnonRate: 10, AnonBurst: 20, InvoiceAddresses: 5, SubscriptionAddresses: 10, TestEvents: 100}},
		{"set", []string{"--key-rate", "5.5", "--key-burst", "7", "--anon-rate", "2", "--anon-burst", "3", "--page-addresses-per-invoice", "1",
			"--page-addresses-per-subscription", "4", "--test-events-per-day", "9"},
			ratelimit.Limits{KeyRate: 5.5, KeyBurst: 7, AnonRate: 2, AnonBurst: 3, InvoiceAddresses: 1, SubscriptionAddresses: 4, TestEvents: 9}},
		{"zero is off", []string{"--key-rate", "0", "--anon-rate", "0", "--page-addresses-per-invoice", "0",
			"--page-addresses-per-subscription", "0", "--test-events-per-day", "0"},
			ratelimit.Limits{KeyRate: ratelimit.Off, KeyBurst: 100, AnonRate: ratelimit.Off, AnonBurst: 20, InvoiceAddresses: ratelimit.Off,
				SubscriptionAddresses: ratelimit.Off, TestEvents: ratelimit.Off}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := serveConfig(r.args, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Limits != r.want {
				t.Fatalf("limits %+v, want %+v", cfg.Limits, r.want)
			}
		})
	}
	cfg, err := serveConfig([]string{"--dev", "--key-burst", "0"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.WithDefaults().Validate(); err != nil || cfg.WithDefaults().Limits.KeyBurst != 100 {
		t.Fatalf("--key-burst 0 takes the default: %v %+v", err, cfg.WithDefaults().Limits)
	}
}

// TestProjectUpdateRateLimit: project update sets a project's own request
// limit per key (a negative rate: none) and refuses a negative burst,
// naming it, changing nothing.
func TestProjectUpdateRateLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"project", "create", "--db", dsn, "--name", "shop", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	var created struct {
		ProjectID int64 `json:"project_id"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	update := func(args ...string) error {
		return run(ctx, append([]string{"project", "update", "--db", dsn, "--project", strconv.FormatInt(created.ProjectID, 10)}, args...), &out, &errOut)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := func(rate float64, burst int) {
		t.Helper()
		p, err := project.Get(ctx, db.Client, created.ProjectID)
		if err != nil || p.RateLimit != rate || p.RateBurst != burst {
			t.Fatalf("project's limit %v/%v (%v), want %v/%v", p.RateLimit, p.RateBurst, err, rate, burst)
		}
	}
	if err := update("--rate-limit", "5", "--rate-burst", "9"); err != nil {
		t.Fatal(err)
	}
	want(5, 9)
	if err := update("--rate-burst", "-1"); err == nil || !strings.Contains(err.Error(), "rate_burst") {
		t.Fatalf("a negative burst: %v, want an error naming rate_burst", err)
	}
	want(5, 9)
	if err := update("--rate-limit", "-3"); err != nil {
		t.Fatal(err)
	}
	want(-1, 9)
}
