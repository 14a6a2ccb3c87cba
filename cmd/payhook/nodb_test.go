package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/payhook/payhook/server/admin"
)

// TestAdminCommandsCreateNoDatabase: in a directory without a database,
// every admin command refuses, naming --db and payhook migrate, and
// creates no payhook.db; only migrate creates it.
func TestAdminCommandsCreateNoDatabase(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("PAYHOOK_DB", "")
	if err := os.Unsetenv("PAYHOOK_DB"); err != nil {
		t.Fatal(err)
	}
	rows := [][]string{
		{"project", "list"},
		{"project", "create", "--name", "shop"},
		{"project", "rotate-secret", "--project", "1"},
		{"project", "update", "--project", "1", "--payout-notify-url", "https://shop.example/p"},
		{"project", "wallet", "set", "--project", "1", "--wallet", "btc=bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"},
		{"project", "wallet", "remove", "--project", "1", "--ticker", "btc"},
		{"apikey", "create", "--name", "dev"},
		{"apikey", "list"},
		{"apikey", "revoke", "dev"},
		{"funds"},
		{"payouts"},
	}
	for _, args := range rows {
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, &out, &errOut)
		if !errors.Is(err, admin.ErrNoDatabase) || !strings.Contains(err.Error(), "--db") || !strings.Contains(err.Error(), "payhook migrate --db sqlite:payhook.db") {
			t.Errorf("payhook %s: %v, want a refusal naming --db and payhook migrate", strings.Join(args, " "), err)
		}
	}
	var out, errOut bytes.Buffer
	err := runIn(context.Background(), []string{"user", "create", "--project", "1", "--email", "a@shop.example"}, strings.NewReader("correct horse battery staple\n"), &out, &errOut)
	if !errors.Is(err, admin.ErrNoDatabase) {
		t.Errorf("payhook user create: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat("payhook.db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an admin command created payhook.db: %v", err)
	}
	if err := run(context.Background(), []string{"migrate"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"project", "list"}, &out, &errOut); err != nil {
		t.Fatalf("project list after migrate: %v", err)
	}
}
