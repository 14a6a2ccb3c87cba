package main

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	entdb "github.com/payhook/payhook/ent/db"
	"github.com/payhook/payhook/ent/db/auditentry"
	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/ent/store/storetest"
	"github.com/payhook/payhook/internal/clock"
	"github.com/payhook/payhook/server/audit"
	"github.com/payhook/payhook/server/web/dashboard"
)

// TestUserCreate: user create reads the password from standard input and
// stores a user of the project; a short password, an unknown project, a
// second user with the same email and an empty input are refused.
func TestUserCreate(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	id := cliProject(t, dsn)
	var out, errOut bytes.Buffer
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
	id := cliProject(t, dsn)
	var out, errOut bytes.Buffer
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

// TestUserEnableRole: user role gives a user another role (any case; an
// unknown one, or none, is refused) and says what it was; the project's
// last enabled owner can be neither given another role nor disabled, by
// the CLI as by the dashboard, until another user is owner; user enable
// lets a disabled user sign in again and changes nothing for an enabled
// one; an unknown email is refused by both. On both dialects.
func TestUserEnableRole(t *testing.T) {
	for _, dialect := range storetest.Dialects() {
		t.Run(string(dialect), func(t *testing.T) {
			ctx := context.Background()
			dsn := storetest.DSN(t, dialect)
			var out, errOut bytes.Buffer
			if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
				t.Fatalf("migrate: %v (%s)", err, errOut.String())
			}
			id := cliProject(t, dsn)
			cli := func(stdin string, args ...string) (string, error) {
				out.Reset()
				errOut.Reset()
				err := runIn(ctx, append([]string{"user"}, append(args, "--db", dsn)...), strings.NewReader(stdin), &out, &errOut)
				return errOut.String(), err
			}
			const pw = "correct horse battery staple\n"
			for _, u := range [][2]string{{"owner@shop.example", "owner"}, {"dev@shop.example", "developer"}} {
				if _, err := cli(pw, "create", "--project", id, "--email", u[0], "--role", u[1]); err != nil {
					t.Fatal(err, errOut.String())
				}
			}
			db, err := store.Open(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			user := func(email string) *entdb.DashboardUser {
				t.Helper()
				u, err := dashboard.UserByEmail(ctx, db.Client, email)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}

			if said, err := cli("", "role", "--email", "DEV@shop.example", "--role", "Viewer"); err != nil || user("dev@shop.example").Role != dashboard.RoleViewer ||
				!strings.Contains(said, "is now viewer (was developer)") {
				t.Fatalf("role viewer: %q %v", said, err)
			}
			if said, err := cli("", "role", "--email", "dev@shop.example", "--role", "viewer"); err != nil || !strings.Contains(said, "nothing changed") {
				t.Fatalf("the same role: %q %v", said, err)
			}
			if _, err := cli("", "role", "--email", "dev@shop.example", "--role", "admin"); !errors.Is(err, dashboard.ErrInvalidUser) {
				t.Fatalf("--role admin: %v", err)
			}
			if _, err := cli("", "role", "--email", "dev@shop.example"); err == nil || !strings.Contains(err.Error(), "--role") {
				t.Fatalf("without --role: %v", err)
			}

			// The last enabled owner stays one.
			if _, err := cli("", "role", "--email", "owner@shop.example", "--role", "developer"); !errors.Is(err, dashboard.ErrLastOwner) ||
				!strings.Contains(err.Error(), "owner@shop.example is its last") {
				t.Fatalf("demote the last owner: %v", err)
			}
			if _, err := cli("", "disable", "--email", "owner@shop.example"); !errors.Is(err, dashboard.ErrLastOwner) {
				t.Fatalf("disable the last owner: %v", err)
			}
			if u := user("owner@shop.example"); u.Role != dashboard.RoleOwner || u.DisabledAt != nil {
				t.Fatalf("a refused change changed the owner: %+v", u)
			}
			if _, err := cli("", "role", "--email", "dev@shop.example", "--role", "owner"); err != nil {
				t.Fatal(err)
			}
			if _, err := cli("", "disable", "--email", "owner@shop.example"); err != nil || user("owner@shop.example").DisabledAt == nil {
				t.Fatalf("disable an owner beside another: %v", err)
			}
			// The disabled owner does not count: the other is the last.
			if _, err := cli("", "role", "--email", "dev@shop.example", "--role", "viewer"); !errors.Is(err, dashboard.ErrLastOwner) {
				t.Fatalf("demote the last enabled owner: %v", err)
			}

			// Enable.
			if said, err := cli("", "enable", "--email", "owner@shop.example"); err != nil || user("owner@shop.example").DisabledAt != nil ||
				!strings.Contains(said, "enabled") {
				t.Fatalf("enable: %q %v", said, err)
			}
			if said, err := cli("", "enable", "--email", "owner@shop.example"); err != nil || !strings.Contains(said, "is not disabled: nothing changed") {
				t.Fatalf("enable an enabled user: %q %v", said, err)
			}
			if _, err := cli("", "role", "--email", "dev@shop.example", "--role", "viewer"); err != nil {
				t.Fatalf("demote beside the enabled owner: %v", err)
			}
			for _, args := range [][]string{{"enable"}, {"role", "--role", "viewer"}} {
				if _, err := cli("", append(args, "--email", "nobody@shop.example")...); !errors.Is(err, dashboard.ErrNoUser) {
					t.Errorf("%v of an unknown email: %v", args, err)
				}
			}

			// Each change is in the audit log as the operator's, once (a
			// refused one and one that changed nothing are not).
			entries, err := db.Client.AuditEntry.Query().Where(auditentry.ActionIn("user.role", "user.enable")).
				Order(entdb.Asc(auditentry.FieldID)).All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				if e.ActorKind != audit.Operator || !strings.HasPrefix(e.Actor, "cli:") {
					t.Errorf("entry %s by %s %q", e.Action, e.ActorKind, e.Actor)
				}
				got = append(got, e.Action+" "+e.Target)
			}
			want := []string{"user.role dev@shop.example as viewer", "user.role dev@shop.example as owner", "user.enable owner@shop.example", "user.role dev@shop.example as viewer"}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("audit entries\n got %q\nwant %q", got, want)
			}
		})
	}
}
