package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
