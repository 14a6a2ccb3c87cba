package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/apikey"
	"github.com/payhook/payhook/server/merchant/project"
)

// TestProjectCommands: project create prints the project, its first key
// and its IPN secret (--json as documented); the key resolves to the
// project; rotate-secret keeps the old secret signing for the grace; wallet
// set checks addresses and remove removes; bad input is named.
func TestProjectCommands(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	var out, errOut bytes.Buffer
	btc := "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
	if err := run(ctx, []string{"project", "create", "--db", dsn, "--name", "shop", "--currency", "eur", "--wallet", "btc=" + btc, "--accept", "btc,ltc", "--confirmations", "btc=2", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	var created struct {
		ProjectID int64  `json:"project_id"`
		APIKey    string `json:"apikey"`
		Secret    string `json:"ipn_secret"`
	}
	if err := json.Unmarshal(out.Bytes(), &created); err != nil || created.ProjectID <= 0 || !strings.HasPrefix(created.APIKey, "ph_") || !strings.HasPrefix(created.Secret, "whsec_") {
		t.Fatalf("project create --json printed %q (%v)", out.String(), err)
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	k, err := (apikey.Resolver{DB: db.Client}).ResolveAPIKey(ctx, created.APIKey)
	if err != nil || k.ProjectID != created.ProjectID {
		t.Fatalf("the key resolves to %+v, %v", k, err)
	}
	p, err := project.Get(ctx, db.Client, created.ProjectID)
	if err != nil || p.Currency != "EUR" || p.IpnSecret != created.Secret || len(p.Wallets["btc"]) != 1 || p.Wallets["btc"][0].Address != btc ||
		strings.Join(p.Tickers, ",") != "btc,ltc" || p.Confirmations["btc"] != 2 {
		t.Fatalf("stored project %+v, %v", p, err)
	}

	id := strconv.FormatInt(created.ProjectID, 10)
	out.Reset()
	if err := run(ctx, []string{"project", "rotate-secret", "--db", dsn, "--project", id, "--grace", "1h", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var rotated struct {
		Secret string `json:"ipn_secret"`
	}
	if err := json.Unmarshal(out.Bytes(), &rotated); err != nil || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == created.Secret {
		t.Fatalf("rotate-secret printed %q", out.String())
	}
	p, _ = project.Get(ctx, db.Client, created.ProjectID)
	if s := project.Secrets(p, clock.Now()); len(s) != 2 || s[0] != rotated.Secret || s[1] != created.Secret {
		t.Fatalf("secrets during the grace: %d", len(s))
	}
	if s := project.Secrets(p, clock.Now().Add(2*time.Hour)); len(s) != 1 {
		t.Fatalf("secrets after the grace: %d", len(s))
	}

	if err := run(ctx, []string{"project", "wallet", "remove", "--db", dsn, "--project", id, "--ticker", "btc"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if p, _ = project.Get(ctx, db.Client, created.ProjectID); len(p.Wallets) != 0 {
		t.Fatalf("wallets after remove: %v", p.Wallets)
	}
	out.Reset()
	if err := run(ctx, []string{"project", "list", "--db", dsn}, &out, &errOut); err != nil || !strings.Contains(out.String(), "shop") || strings.Contains(out.String(), "whsec_") {
		t.Fatalf("project list printed %q, %v", out.String(), err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"project", "create", "--db", dsn}, "--name: required"},
		{[]string{"project", "create", "--db", dsn, "--name", "x", "--currency", "dollars"}, "currency"},
		{[]string{"project", "create", "--db", dsn, "--name", "x", "--wallet", "btc=notanaddress"}, "notanaddress"},
		{[]string{"project", "create", "--db", dsn, "--name", "x", "--wallet", "btc=" + btc + "@0.5"}, "add up"},
		{[]string{"project", "wallet", "set", "--db", dsn, "--project", "999", "--wallet", "btc=" + btc}, "not found"},
		{[]string{"project", "rotate-secret", "--db", dsn}, "--project: required"},
		{[]string{"project", "create", "--db", dsn, "--name", "x", "--accept", "nocoin"}, "nocoin"},
		{[]string{"project", "create", "--db", dsn, "--name", "x", "--confirmations", "btc=1000"}, "confirmations"},
		{[]string{"project", "frobnicate"}, "usage"},
	} {
		err := run(ctx, c.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
}

// TestProjectUpdatePayoutNotify: project update sets the payout webhook's
// URL and transport, and clears it; a URL that is not http(s) is refused
// naming the flag's field; nothing to update is an error.
func TestProjectUpdatePayoutNotify(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	id := cliProject(t, dsn)
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"project", "update", "--db", dsn, "--project", id, "--payout-notify-url", "https://shop.example/payouts", "--payout-notify-get"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := project.Get(ctx, db.Client, projectID(t, id))
	if err != nil || p.PayoutNotifyURL != "https://shop.example/payouts" || p.PayoutNotifyPost {
		t.Fatalf("after update: %q post=%v (%v)", p.PayoutNotifyURL, p.PayoutNotifyPost, err)
	}
	err = run(ctx, []string{"project", "update", "--db", dsn, "--project", id, "--payout-notify-url", "ftp://shop.example/"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "payout_notify_url") {
		t.Errorf("an ftp URL: %v", err)
	}
	if err := run(ctx, []string{"project", "update", "--db", dsn, "--project", id}, &out, &errOut); err == nil {
		t.Error("update with nothing to update succeeded")
	}
	if err := run(ctx, []string{"project", "update", "--db", dsn, "--project", id, "--payout-limit", "ltc=0.5/2"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if p, _ = project.Get(ctx, db.Client, projectID(t, id)); p.PayoutLimits["ltc"].PerPayout.String() != "0.5" || p.PayoutLimits["ltc"].PerDay.String() != "2" || p.PayoutNotifyURL == "" {
		t.Errorf("after --payout-limit: %+v (the webhook URL must stay %q)", p.PayoutLimits, p.PayoutNotifyURL)
	}
	for _, bad := range []string{"ltc=0.5", "ltc=-1/2", "ltc=0.123456789/1", "nosuchcoin=1/1"} {
		if err := run(ctx, []string{"project", "update", "--db", dsn, "--project", id, "--payout-limit", bad}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--payout-limit") {
			t.Errorf("--payout-limit %s: %v", bad, err)
		}
	}
	if err := run(ctx, []string{"project", "update", "--db", dsn, "--project", id, "--payout-notify-url", ""}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if p, _ = project.Get(ctx, db.Client, projectID(t, id)); p.PayoutNotifyURL != "" || !p.PayoutNotifyPost {
		t.Errorf("after clearing: %q post=%v", p.PayoutNotifyURL, p.PayoutNotifyPost)
	}
}

// TestProjectUpdatePaymentExceptions: project update sets the underpaid
// tolerance and the late payment policy, each alone or together; a
// tolerance out of range or over-precise, or an unknown policy, is refused
// naming its field, and nothing changes.
func TestProjectUpdatePaymentExceptions(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	id := cliProject(t, dsn)
	var out, errOut bytes.Buffer
	update := func(args ...string) error {
		return run(ctx, append([]string{"project", "update", "--db", dsn, "--project", id}, args...), &out, &errOut)
	}
	if err := update("--underpaid-tolerance", "0.5", "--late-payments", "refund"); err != nil {
		t.Fatal(err)
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := func(tol, late string) {
		t.Helper()
		p, err := project.Get(ctx, db.Client, projectID(t, id))
		if err != nil || p.UnderpaidTolerance.String() != tol || string(p.LatePayments) != late {
			t.Fatalf("project: tolerance %s late %s (%v), want %s %s", p.UnderpaidTolerance, p.LatePayments, err, tol, late)
		}
	}
	want("0.5", "refund")
	for _, c := range []struct{ args []string }{
		{[]string{"--underpaid-tolerance", "100.5"}},
		{[]string{"--underpaid-tolerance", "0.001", "--late-payments", "credit"}},
		{[]string{"--underpaid-tolerance", "five"}},
		{[]string{"--late-payments", "later", "--underpaid-tolerance", "1"}},
	} {
		field := "underpaid_tolerance"
		if c.args[0] == "--late-payments" {
			field = "late_payments"
		}
		if err := update(c.args...); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, field)
		}
	}
	want("0.5", "refund")
	if err := update("--late-payments", "credit"); err != nil {
		t.Fatal(err)
	}
	want("0.5", "credit")
}

// TestProjectRotateCallbackKey: rotate-callback-key prints the project's
// new public key, which is stored sealed beside its private half.
func TestProjectRotateCallbackKey(t *testing.T) {
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
	out.Reset()
	id := strconv.FormatInt(created.ProjectID, 10)
	if err := run(ctx, []string{"project", "rotate-callback-key", "--db", dsn, "--project", id, "--grace", "1h", "--json"}, &out, &errOut); err != nil {
		t.Fatal(err, errOut.String())
	}
	var rotated struct {
		Pubkey string `json:"pubkey"`
	}
	if err := json.Unmarshal(out.Bytes(), &rotated); err != nil || !strings.Contains(rotated.Pubkey, "BEGIN PUBLIC KEY") {
		t.Fatalf("rotate-callback-key --json printed %q (%v)", out.String(), err)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var priv, pub string
	if err := db.SQL.QueryRowContext(ctx, "SELECT private_pem, public_pem FROM signing_keys WHERE project_id = ? AND active", created.ProjectID).Scan(&priv, &pub); err != nil {
		t.Fatal(err)
	}
	if pub != rotated.Pubkey || !strings.HasPrefix(priv, "sealed:v1:") {
		t.Errorf("stored key: public matches %v, private %.20q…; want the printed key and a sealed private half", pub == rotated.Pubkey, priv)
	}
	if err := run(ctx, []string{"project", "rotate-callback-key", "--db", dsn, "--project", "999"}, &out, &errOut); err == nil {
		t.Error("rotating an unknown project's key succeeded")
	}
}

// TestProjectUpdateBranding: project update sets the brand colour, the
// support contact and the logo (read from a file, its type sniffed), and
// removes the logo with --logo ""; a bad colour, contact, an oversized or
// scripted logo is refused naming what is wrong, and nothing changes.
func TestProjectUpdateBranding(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dsn := migratedDB(t, "cli.db")
	id := cliProject(t, dsn)
	var out, errOut bytes.Buffer
	update := func(args ...string) error {
		return run(ctx, append([]string{"project", "update", "--db", dsn, "--project", id}, args...), &out, &errOut)
	}
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	logo := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="4"/></svg>`
	if err := update("--brand-color", "#AA3300", "--support-contact", "help@shop.example", "--logo", file("logo.svg", logo)); err != nil {
		t.Fatal(err)
	}
	db, err := admin.Open(ctx, dsn, store.Pool{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := func(color, contact, logoType string) {
		t.Helper()
		p, err := project.Get(ctx, db.Client, projectID(t, id))
		if err != nil || p.BrandColor != color || p.SupportContact != contact || p.LogoType != logoType || (logoType != "") != (len(project.Logo(p)) > 0) {
			t.Fatalf("project: %q %q %q (%v), want %q %q %q", p.BrandColor, p.SupportContact, p.LogoType, err, color, contact, logoType)
		}
	}
	want("#aa3300", "help@shop.example", "image/svg+xml")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{"--brand-color", "orange"}, "brand_color"},
		{[]string{"--support-contact", "http://shop.example/help"}, "support_contact"},
		{[]string{"--brand-color", "#000000", "--logo", file("evil.svg", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`)}, "event handler"},
		{[]string{"--logo", file("big.svg", `<svg xmlns="http://www.w3.org/2000/svg"><!--`+strings.Repeat("x", 101<<10)+`--></svg>`)}, "100 KiB"},
		{[]string{"--logo", filepath.Join(dir, "missing.png")}, "--logo"},
	} {
		if err := update(c.args...); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: %v, want an error with %q", c.args, err, c.err)
		}
	}
	want("#aa3300", "help@shop.example", "image/svg+xml")
	if err := update("--logo", "", "--support-contact", "https://shop.example/help"); err != nil {
		t.Fatal(err)
	}
	want("#aa3300", "https://shop.example/help", "")
}
