package main

import (
	"bytes"
	"context"
	"flag"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/ent/store"
	"github.com/payhook/payhook/server/apikey"
)

func TestEnvironmentFillsFlagsNotGiven(t *testing.T) {
	t.Setenv("PAYHOOK_HTTP_ADDR", "127.0.0.1:1234")
	t.Setenv("PAYHOOK_DEV", "true")
	t.Setenv("PAYHOOK_DB", "sqlite:from-env.db")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", ":8080", "")
	dev := fs.Bool("dev", false, "")
	db := fs.String("db", "sqlite:payhook.db", "")
	if err := parse(fs, []string{"--db", "sqlite:from-flag.db"}); err != nil {
		t.Fatal(err)
	}
	if *httpAddr != "127.0.0.1:1234" || !*dev {
		t.Fatalf("environment not applied: http-addr %q dev %v", *httpAddr, *dev)
	}
	if *db != "sqlite:from-flag.db" {
		t.Fatalf("flag did not win over environment: %q", *db)
	}
}

func TestBadEnvironmentValueIsNamed(t *testing.T) {
	t.Setenv("PAYHOOK_SHUTDOWN_TIMEOUT", "soon")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Duration("shutdown-timeout", time.Second, "")
	err := parse(fs, nil)
	if err == nil || !strings.Contains(err.Error(), "PAYHOOK_SHUTDOWN_TIMEOUT") {
		t.Fatalf("error %v does not name the variable", err)
	}
}

func TestServeRejectsBadSettingsByName(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--db", "mysql://x"}, "--db"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--http-addr", "nope"}, "--http-addr"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--grpc-addr", "localhost"}, "--grpc-addr"},
		{[]string{"serve", "--db", "sqlite:" + filepath.Join(dir, "a.db"), "--signing-key-bits", "1024"}, "--signing-key-bits"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"apikey", "create"}, "--name: required"},
		{[]string{"apikey", "delete"}, "usage: payhook apikey create"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := run(context.Background(), c.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}

func TestMigrateAndAPIKeyCreate(t *testing.T) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "cli.db")
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "applied migrations") {
		t.Fatalf("first migrate printed %q", out.String())
	}
	out.Reset()
	if err := run(ctx, []string{"migrate", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "up to date") {
		t.Fatalf("second migrate printed %q", out.String())
	}

	out.Reset()
	if err := run(ctx, []string{"apikey", "create", "--name", "shop", "--db", dsn}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(out.String())
	if !regexp.MustCompile(`^ph_[a-z2-7]{32}$`).MatchString(key) {
		t.Fatalf("printed key %q", key)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Client.APIKey.Query().All(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("keys: %v %v", rows, err)
	}
	if rows[0].Hash != apikey.Hash(key) || rows[0].Name != "shop" || strings.Contains(rows[0].Hash, key) || rows[0].Prefix != key[:8] {
		t.Fatalf("stored %+v", rows[0])
	}
	if _, err := (apikey.Resolver{DB: db.Client}).ResolveAPIKey(ctx, key); err != nil {
		t.Fatalf("printed key does not resolve: %v", err)
	}
}
