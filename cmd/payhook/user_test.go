package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/payhook/payhook/internal/clock"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/web/dashboard"
)

// TestUserCreate: user create reads the password from standard input and
// stores a user of the project; a short password, an unknown project, a
// second user with the same email and an empty input are refused.
func TestUserCreate(t *testing.T) {
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
	id := strconv.FormatInt(created.ProjectID, 10)
	user := func(stdin, project, email string) (string, error) {
		out.Reset()
		errOut.Reset()
		err := runIn(ctx, []string{"user", "create", "--db", dsn, "--project", project, "--email", email}, strings.NewReader(stdin), &out, &errOut)
		return out.String(), err
	}
	got, err := user("correct horse battery staple\n", id, "Alice@Shop.example")
	if err != nil || !strings.HasPrefix(got, "user_id  ") || strings.Contains(got+errOut.String(), "correct horse") {
		t.Fatalf("user create: %q %q %v", got, errOut.String(), err)
	}
	if _, err := user("correct horse battery staple\n", id, "alice@shop.example"); !errors.Is(err, dashboard.ErrUserExists) {
		t.Fatalf("same email again: %v", err)
	}
	for name, c := range map[string]struct{ stdin, project, email string }{
		"short password":  {"short\n", id, "bob@shop.example"},
		"empty input":     {"", id, "bob@shop.example"},
		"unknown project": {"correct horse battery staple\n", "999", "bob@shop.example"},
		"bad email":       {"correct horse battery staple\n", id, "bob"},
	} {
		if _, err := user(c.stdin, c.project, c.email); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := runIn(ctx, []string{"user", "create", "--db", dsn, "--email", "x@y.example"}, strings.NewReader("p"), &out, &errOut); err == nil || !strings.Contains(err.Error(), "--project") {
		t.Fatalf("without --project: %v", err)
	}
}

// TestUserRoleDisableResetRevoke: create takes --role (an unknown one is
// refused); sessions revoke ends a user's sessions and says how many;
// reset-password sets the password read from standard input, or generates
// and prints one, and ends the sessions; disable disables the user and
// ends their sessions; an unknown email is refused by each.
func TestUserRoleDisableResetRevoke(t *testing.T) {
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
	id := strconv.FormatInt(created.ProjectID, 10)
	cli := func(stdin string, args ...string) (string, error) {
		out.Reset()
		errOut.Reset()
		err := runIn(ctx, append([]string{"user"}, append(args, "--db", dsn)...), strings.NewReader(stdin), &out, &errOut)
		return out.String(), err
	}
	const pw = "correct horse battery staple\n"
	if _, err := cli(pw, "create", "--project", id, "--email", "dev@shop.example", "--role", "admin"); !errors.Is(err, dashboard.ErrInvalidUser) {
		t.Fatalf("--role admin: %v", err)
	}
	if _, err := cli(pw, "create", "--project", id, "--email", "dev@shop.example", "--role", "Developer"); err != nil {
		t.Fatal(err, errOut.String())
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := dashboard.UserByEmail(ctx, db.Client, "dev@shop.example")
	if err != nil || u.Role != dashboard.RoleDeveloper || u.DisabledAt != nil {
		t.Fatalf("created %+v %v", u, err)
	}
	session := func(n int) {
		t.Helper()
		for i := range n {
			if err := db.Client.DashboardSession.Create().SetTokenHash(strings.Repeat(strconv.Itoa(i), 64)).SetUserID(u.ID).
				SetCsrfToken("c").SetExpiresAt(clock.UTC().Add(time.Hour)).SetCreatedAt(clock.UTC()).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	sessions := func() int {
		t.Helper()
		n, err := db.Client.DashboardSession.Query().Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	session(2)
	if got, err := cli("", "sessions", "revoke", "--email", "DEV@shop.example"); err != nil || got != "sessions_ended  2\n" || sessions() != 0 {
		t.Fatalf("sessions revoke: %q %v, %d left", got, err, sessions())
	}

	session(1)
	if _, err := cli("another long password\n", "reset-password", "--email", "dev@shop.example"); err != nil || sessions() != 0 {
		t.Fatalf("reset-password: %v %s, %d sessions", err, errOut.String(), sessions())
	}
	after, err := dashboard.UserByEmail(ctx, db.Client, "dev@shop.example")
	if err != nil || after.PasswordHash == u.PasswordHash {
		t.Fatalf("reset-password kept the hash (%v)", err)
	}
	if _, err := cli("short\n", "reset-password", "--email", "dev@shop.example"); !errors.Is(err, dashboard.ErrInvalidUser) {
		t.Fatalf("short password: %v", err)
	}
	got, err := cli("", "reset-password", "--email", "dev@shop.example", "--generate")
	if err != nil || !strings.HasPrefix(got, "password  ") || len(strings.TrimSpace(strings.TrimPrefix(got, "password  "))) < dashboard.MinPasswordLength {
		t.Fatalf("reset-password --generate: %q %v", got, err)
	}

	session(1)
	if _, err := cli("", "disable", "--email", "dev@shop.example"); err != nil || sessions() != 0 {
		t.Fatalf("disable: %v, %d sessions", err, sessions())
	}
	if u, err := dashboard.UserByEmail(ctx, db.Client, "dev@shop.example"); err != nil || u.DisabledAt == nil {
		t.Fatalf("disabled user %+v %v", u, err)
	}
	for _, args := range [][]string{{"disable"}, {"reset-password", "--generate"}, {"sessions", "revoke"}} {
		if _, err := cli(pw, append(args, "--email", "nobody@shop.example")...); !errors.Is(err, dashboard.ErrNoUser) {
			t.Errorf("%v of an unknown email: %v", args, err)
		}
	}
}
