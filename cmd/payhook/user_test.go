package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

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
