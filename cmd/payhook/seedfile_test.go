package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/payhook/payhook/internal/seedbox"
	"github.com/payhook/payhook/server/admin"
)

// TestSeedFileDefault: without --seed-file the seed lives in the user's
// configuration directory (created 0700), outside the working tree; a seed
// where earlier versions kept it (./payhook.seed) is used, with a notice,
// while the new place has none; --seed-file wins.
func TestSeedFileDefault(t *testing.T) {
	cfgDir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfgDir)
	t.Setenv("PAYHOOK_SEED_FILE", "")
	if err := os.Unsetenv("PAYHOOK_SEED_FILE"); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work)
	want := filepath.Join(cfgDir, "payhook", "seed")

	var out, errOut bytes.Buffer
	cfg, err := serveConfig([]string{"--dev"}, &out, &errOut)
	if err != nil || cfg.Keys.SeedFile != want {
		t.Fatalf("serve's seed file %q (%v), want %q", cfg.Keys.SeedFile, err, want)
	}
	// A legacy seed in the working directory is kept in use.
	if err := os.WriteFile("payhook.seed", []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errOut.Reset()
	if cfg, _ := serveConfig([]string{"--dev"}, &out, &errOut); cfg.Keys.SeedFile != "payhook.seed" || !strings.Contains(errOut.String(), want) {
		t.Fatalf("with ./payhook.seed: seed file %q, stderr %q", cfg.Keys.SeedFile, errOut.String())
	}
	if err := os.Remove("payhook.seed"); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"seed", "init"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(want)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("seed init wrote %v (%v)", st, err)
	}
	if dst, err := os.Stat(filepath.Dir(want)); err != nil || dst.Mode().Perm() != 0o700 {
		t.Fatalf("seed directory %v (%v)", dst, err)
	}
	entries, _ := os.ReadDir(work)
	if len(entries) != 0 {
		t.Fatalf("the working directory got %v", entries)
	}
	other := filepath.Join(t.TempDir(), "s")
	if cfg, _ := serveConfig([]string{"--dev", "--seed-file", other}, &out, &errOut); cfg.Keys.SeedFile != other {
		t.Fatalf("--seed-file %s gave %q", other, cfg.Keys.SeedFile)
	}
}

// noSeedPassphrase clears every source of a seed passphrase for the test
// (standard input is no terminal under go test).
func noSeedPassphrase(t *testing.T) {
	t.Helper()
	for _, k := range []string{admin.SeedPassphraseEnv, admin.SeedPassphraseFileEnv} {
		t.Setenv(k, "")
		if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	admin.ForgetSeedPassphrase()
	t.Cleanup(admin.ForgetSeedPassphrase)
}

// servedSeed is the seed serve would derive addresses from with args.
func servedSeed(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cfg, err := serveConfig(append([]string{"--dev"}, args...), &out, &errOut)
	if err != nil {
		return nil, err
	}
	if cfg.Keys.Seed != nil {
		return cfg.Keys.Seed, nil
	}
	return admin.ReadSeed(cfg.Keys.SeedFile)
}

// TestSeedInitEncrypt: seed init --encrypt writes an encrypted seed (mode
// 0600) under the passphrase in PAYHOOK_SEED_PASSPHRASE or
// --seed-passphrase-file, never over an existing file, and refuses to
// without a passphrase (no terminal here) or with an empty one; serve
// opens it with the passphrase from either place, and the passphrase is
// out of the environment after.
func TestSeedInitEncrypt(t *testing.T) {
	noSeedPassphrase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "seed")
	ctx := context.Background()
	var out, errOut bytes.Buffer

	err := run(ctx, []string{"seed", "init", "--encrypt", "--seed-file", path}, &out, &errOut)
	if !errors.Is(err, admin.ErrNoSeedPassphrase) || !strings.Contains(err.Error(), admin.SeedPassphraseEnv) || !strings.Contains(err.Error(), "--seed-passphrase-file") {
		t.Fatalf("without a passphrase: %v", err)
	}
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"seed", "init", "--encrypt", "--seed-file", path, "--seed-passphrase-file", passFile}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty passphrase: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused init left %s (%v)", path, err)
	}

	t.Setenv(admin.SeedPassphraseEnv, "a passphrase to remember")
	if err := run(ctx, []string{"seed", "init", "--encrypt", "--seed-file", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if _, ok := os.LookupEnv(admin.SeedPassphraseEnv); ok {
		t.Fatal("seed init left the passphrase in the environment")
	}
	data, err := os.ReadFile(path)
	if err != nil || !seedbox.IsSealed(data) {
		t.Fatalf("seed init --encrypt wrote %q (%v)", data, err)
	}
	if p, err := seedbox.ParamsOf(data); err != nil || p != seedbox.DefaultParams() {
		t.Fatalf("parameters %+v (%v), want the defaults", p, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if err := run(ctx, []string{"seed", "init", "--encrypt", "--seed-file", path}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "never overwrites") {
		t.Fatalf("init over an existing seed: %v", err)
	}

	admin.ForgetSeedPassphrase()
	t.Setenv(admin.SeedPassphraseEnv, "a passphrase to remember")
	fromEnv, err := servedSeed(t, "--seed-file", path)
	if err != nil || len(fromEnv) != 64 {
		t.Fatalf("serve with PAYHOOK_SEED_PASSPHRASE: %x, %v", fromEnv, err)
	}
	if _, ok := os.LookupEnv(admin.SeedPassphraseEnv); ok {
		t.Fatal("serve left the passphrase in the environment")
	}
	admin.ForgetSeedPassphrase()
	if err := os.WriteFile(passFile, []byte("a passphrase to remember\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile, err := servedSeed(t, "--seed-file", path, "--seed-passphrase-file", passFile)
	if err != nil || !bytes.Equal(fromFile, fromEnv) {
		t.Fatalf("serve with --seed-passphrase-file: %x, %v; want %x", fromFile, err, fromEnv)
	}
	t.Setenv(admin.SeedPassphraseFileEnv, passFile)
	fromFileEnv, err := servedSeed(t, "--seed-file", path)
	if err != nil || !bytes.Equal(fromFileEnv, fromEnv) {
		t.Fatalf("serve with PAYHOOK_SEED_PASSPHRASE_FILE: %x, %v", fromFileEnv, err)
	}
}

// TestSeedEncrypt: seed encrypt turns a plain seed file into an encrypted
// one in place (mode 0600, no temporary file left) holding the same seed,
// so serve derives the same addresses; it refuses a file already
// encrypted and a plain file others may read (left as it was).
func TestSeedEncrypt(t *testing.T) {
	noSeedPassphrase(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "seed")
	plainHex := strings.Repeat("c0ffee", 16) // 48 bytes
	if err := os.WriteFile(path, []byte(plainHex+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := servedSeed(t, "--seed-file", path)
	if err != nil || hex.EncodeToString(before) != plainHex {
		t.Fatalf("plain seed: %x, %v", before, err)
	}
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"seed", "encrypt", "--seed-file", path}, &out, &errOut); !errors.Is(err, admin.ErrNoSeedPassphrase) {
		t.Fatalf("without a passphrase: %v", err)
	}
	t.Setenv(admin.SeedPassphraseEnv, "pass phrase")
	if err := run(ctx, []string{"seed", "encrypt", "--seed-file", path}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !seedbox.IsSealed(data) || strings.Contains(string(data), plainHex) {
		t.Fatalf("after seed encrypt: %q (%v)", data, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory holds %v", entries)
	}
	opened, err := seedbox.Open(data, []byte("pass phrase"))
	if err != nil || hex.EncodeToString(opened) != plainHex {
		t.Fatalf("the encrypted file holds %x (%v), want %s", opened, err, plainHex)
	}
	if err := run(ctx, []string{"seed", "encrypt", "--seed-file", path}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "already encrypted") {
		t.Fatalf("encrypt twice: %v", err)
	}

	// serve: the same seed with the passphrase; a clear error without it,
	// or with a wrong one, which the error does not repeat.
	admin.ForgetSeedPassphrase()
	t.Setenv(admin.SeedPassphraseEnv, "pass phrase")
	after, err := servedSeed(t, "--seed-file", path)
	if err != nil || !bytes.Equal(after, before) {
		t.Fatalf("serve after encrypt: %x, %v; want %x", after, err, before)
	}
	admin.ForgetSeedPassphrase()
	t.Setenv(admin.SeedPassphraseEnv, "guessed wrong")
	err = run(ctx, []string{"serve", "--dev", "--db", "sqlite:" + filepath.Join(dir, "p.db"), "--seed-file", path}, &out, &errOut)
	if !errors.Is(err, seedbox.ErrWrongPassphrase) || strings.Contains(err.Error(), "guessed") || !strings.Contains(err.Error(), path) {
		t.Fatalf("serve with a wrong passphrase: %v", err)
	}
	err = run(ctx, []string{"serve", "--dev", "--db", "sqlite:" + filepath.Join(dir, "p.db"), "--seed-file", path}, &out, &errOut)
	if !errors.Is(err, admin.ErrNoSeedPassphrase) {
		t.Fatalf("serve without a passphrase: %v", err)
	}
	for _, way := range []string{admin.SeedPassphraseEnv, "--seed-passphrase-file", admin.SeedPassphraseFileEnv, "terminal"} {
		if !strings.Contains(err.Error(), way) {
			t.Errorf("the error %q does not name %s", err, way)
		}
	}

	// A plain seed others may read is refused and left alone.
	loose := filepath.Join(dir, "loose")
	if err := os.WriteFile(loose, []byte(plainHex), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(admin.SeedPassphraseEnv, "pass phrase")
	if err := run(ctx, []string{"seed", "encrypt", "--seed-file", loose}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("encrypt a 0644 seed: %v", err)
	}
	if b, _ := os.ReadFile(loose); string(b) != plainHex {
		t.Fatalf("the refused file changed: %q", b)
	}
}
