package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/payhook/payhook/server/admin"
)

// TestAPIKeyCreateProject: apikey create --project issues a key of that
// project; an unknown project and an operator's key in a project are
// refused.
func TestAPIKeyCreateProject(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	cli := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(args, "--db", dsn), &out, &errOut)
		return out.String(), err
	}
	out, err := cli("project", "create", "--name", "shop", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		ProjectID int64 `json:"project_id"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.ProjectID <= 0 {
		t.Fatalf("project create: %v %s", err, out)
	}
	id := strconv.FormatInt(created.ProjectID, 10)
	if _, err := cli("apikey", "create", "--name", "second", "--project", id); err != nil {
		t.Fatal(err)
	}
	out, err = cli("apikey", "list", "--project", id, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var keys []admin.APIKeyInfo
	if err := json.Unmarshal([]byte(out), &keys); err != nil {
		t.Fatal(err)
	}
	names := map[string]int64{}
	for _, k := range keys {
		names[k.Name] = k.ProjectID
	}
	if names["second"] != created.ProjectID {
		t.Fatalf("project %s's keys: %s", id, out)
	}
	if _, err := cli("apikey", "create", "--name", "x", "--project", "99"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a key of an unknown project: %v", err)
	}
	if _, err := cli("apikey", "create", "--name", "x", "--operator", "--project", id); err == nil || !strings.Contains(err.Error(), "--project") {
		t.Errorf("an operator's key in a project: %v", err)
	}
}

// TestProjectCreateScope: project create --scope limits the project's first
// key to those scopes (printed, and stored); an unknown scope is refused
// before anything is created.
func TestProjectCreateScope(t *testing.T) {
	ctx := context.Background()
	dsn := migratedDB(t, "cli.db")
	cli := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(ctx, append(args, "--db", dsn), &out, &errOut)
		return out.String(), err
	}
	out, err := cli("project", "create", "--name", "kiosk", "--scope", "create,read", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		ProjectID int64    `json:"project_id"`
		Scopes    []string `json:"apikey_scopes"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || strings.Join(created.Scopes, ",") != "read,create" {
		t.Fatalf("project create --scope printed %s (%v)", out, err)
	}
	out, err = cli("apikey", "list", "--project", strconv.FormatInt(created.ProjectID, 10), "--json")
	if err != nil {
		t.Fatal(err)
	}
	var keys []admin.APIKeyInfo
	if err := json.Unmarshal([]byte(out), &keys); err != nil || len(keys) != 1 || strings.Join(keys[0].Scopes, ",") != "read,create" {
		t.Fatalf("the kiosk's keys: %s (%v)", out, err)
	}
	if _, err := cli("project", "create", "--name", "bad", "--scope", "read,admin"); err == nil || !strings.Contains(err.Error(), "--scope") || !strings.Contains(err.Error(), "admin") {
		t.Fatalf("an unknown scope: %v", err)
	}
	if _, err := cli("project", "create", "--name", "bad", "--scope", ""); err == nil || !strings.Contains(err.Error(), "at least one") {
		t.Fatalf("an empty --scope: %v", err)
	}
	if _, err := cli("apikey", "create", "--name", "bad", "--scope", " , "); err == nil || !strings.Contains(err.Error(), "at least one") {
		t.Fatalf("an empty --scope on apikey create: %v", err)
	}
	if out, _ := cli("project", "list"); strings.Contains(out, "bad") {
		t.Fatalf("a refused create made a project:\n%s", out)
	}
}
